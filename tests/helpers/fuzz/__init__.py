"""The reader fuzz harness (tests/fuzz, tests/fuzz/fuzz_readers.py): seeds, mutations, structured hostile
files, hypothesis strategies and the runner of the worker processes (tests/workers/fuzz_worker.py)."""
