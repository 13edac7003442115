#!/usr/bin/env python
"""Embedding throughput of a backbone's eval program: the native forward kernels against Paddle's ops.

    python tools/bench_embed.py --backbone mobilefacenet --input-size 112 --batch-size 64 [--rounds 3]

What validation during training, ``tools/validate.py`` and ``tools/eval_ijb.py`` (from a
checkpoint) and the mean-embedding center initialisation run: :class:`paddle_pfc.deploy.export.EvalProgram`
of a random state (``random_state``) in eval mode, with ``native=True`` (oneDNN convolutions,
the channels-last depthwise kernel, the running-statistics norm fused with its PReLU:
``paddle_pfc.backbones.native_layers.native_inference``) and with Paddle's ops (what an export
holds). One process, one thread each (``paddle_pfc.configure_process``); rounds alternate the two
sides, ``--steps`` batches each after one warm-up batch; the figure is each side's median over
rounds. Prints images/s per side, their ratio, the largest difference of the embeddings
(relative to their largest magnitude) and the CPU's model and features.
"""
from __future__ import annotations

import argparse
import statistics
import time

from paddle_pfc.cli.entry import run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backbone", default="mobilefacenet")
    p.add_argument("--input-size", type=int, default=112)
    p.add_argument("--embedding-size", type=int, default=512)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--steps", type=int, default=3, help="batches per side and round")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)

    import numpy as np

    import paddle_pfc
    from paddle_pfc.backbones.state import random_state
    from paddle_pfc.deploy.export import EvalProgram
    from paddle_pfc.utils.cpu import cpu_summary

    paddle_pfc.configure_process()
    size, dim = args.input_size, args.embedding_size
    state = random_state(args.backbone, dim, size, seed=0)
    sides = {"native": EvalProgram(args.backbone, dim, size, state, native=True),
             "paddle": EvalProgram(args.backbone, dim, size, state)}
    batch = np.random.default_rng(0).uniform(-1, 1, (args.batch_size, 3, size, size)).astype(np.float32)
    outputs = {side: prog(batch) for side, prog in sides.items()}  # warm-up (and primitive caches)
    rates: dict[str, list[float]] = {side: [] for side in sides}
    for _ in range(args.rounds):
        for side, prog in sides.items():
            start = time.perf_counter()
            for _ in range(args.steps):
                prog(batch)
            rates[side].append(args.steps * args.batch_size / (time.perf_counter() - start))
    native, plain = (statistics.median(rates[side]) for side in ("native", "paddle"))
    scale = float(np.abs(outputs["paddle"]).max())
    diff = float(np.abs(outputs["native"] - outputs["paddle"]).max()) / scale
    print(f"CPU: {cpu_summary()}; {args.backbone} {size}x{size}, embedding {dim}, batch {args.batch_size}, "
          f"1 thread, median of {args.rounds} alternating rounds of {args.steps} batches")
    print(f"native kernels: {native:.1f} images/s; Paddle's ops: {plain:.1f} images/s; ratio {native / plain:.2f}; "
          f"largest embedding difference {diff:.1e} of the largest magnitude")
    return 0


if __name__ == "__main__":
    run(main)
