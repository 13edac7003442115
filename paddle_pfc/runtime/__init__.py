"""The process a program runs in: ``process`` (``configure_process``: math-library, allocator and
executor settings from the running CPU), ``device`` (the machine: Paddle build, CPU, GPUs),
``distributed`` (``init_distributed``: the ranks and their communicator; the device of this rank; a
gather of small host arrays), ``barrier`` (``StoreBarrier``: ranks meeting on the job's store with a
timeout of their own)."""
