"""Benchmark of the Partial FC head (or a whole training step): see :mod:`paddle_pfc.bench.main`.

    python -m paddle.distributed.launch --nproc_per_node 2 tools/benchmark.py \\
        --num-classes 100000,1000000 --embedding-size 512 --batch-size 128 \\
        --sample-ratio 0.1 --steps 20 --warmup 3 --json out.jsonl
"""
from paddle_pfc.bench.main import main
from paddle_pfc.cli.entry import run

if __name__ == "__main__":
    run(main)
