"""Benchmarks of the head and of whole training steps (``tools/benchmark.py``): ``main`` (the command
line, the configurations, one JSON record each), ``programs`` (the timed program as the engine builds it,
and its inputs), ``steps`` (a configuration timed, its e2e parts), ``floor`` (the products, passes and
GEMM the step is paired with), ``communication`` (the ranks' gather of figures, a step's collectives
replayed alone), ``memory`` (resident set and Paddle's host allocator); the data at scale of
``tools/bench_scale.py``: ``scale_rec`` and ``scale_folder`` (files of millions of images, only the
read ones written), ``scale_measure`` (a dataset's build time and memory, its loader workers').
Uses the engine: sits with the commands, at the top of the layers."""
