"""Run by tests under ``paddle.distributed.launch``: rank 0 stays out of every collective for
``--alone`` seconds (as during a long validation or checkpoint write; here it sleeps, which is the
same to gloo and leaves the CPU to other tests), then every rank all-gathers its rank number —
with or without meeting at a :class:`paddle_pfc.runtime.barrier.StoreBarrier` first."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import paddle

import paddle_pfc
from paddle_pfc.cli.entry import run
from paddle_pfc.runtime.barrier import StoreBarrier
from paddle_pfc.runtime.distributed import all_gather_rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--alone", type=float, required=True)
    parser.add_argument("--barrier", action="store_true")
    args = parser.parse_args()
    rank, world = paddle_pfc.init_distributed(collective_timeout=120)
    exe = paddle.static.Executor(paddle.CPUPlace())
    all_gather_rows(np.full((1, 2), -1.0), exe, world)  # the communicator works before
    if rank == 0:  # the ranks left that all-gather together; rank 1 goes on to the next at once
        time.sleep(args.alone)
    waited = StoreBarrier(rank, world, timeout=120).wait("rank 0 worked alone") if args.barrier else 0.0
    gathered = all_gather_rows(np.full((1, 2), float(rank)), exe, world)
    np.savez(Path(args.out) / f"rank{rank}.npz", gathered=gathered, waited=waited)


if __name__ == "__main__":
    run(main)
