#!/usr/bin/env python
"""Input-pipeline benchmark: the training loader against a plain decode loop on the same bytes.

    python tools/bench_loader.py [--images 2048] [--size 112] [--batch-size 64] [--workers 1 2] [--rounds 5]

Writes ``--images`` synthetic 112x112 JPEG faces as an insightface ``.rec`` (the package's own
writer, in a temporary folder), then measures, in interleaved rounds:

* ``plain``: a bare loop over the same records: read the payload, ``cv2.imdecode``, BGR -> RGB,
  the loader's flip, and ``(x - 127.5) / 128`` into a float32 NCHW batch (what any loader must
  at least do);
* ``loader/0``: :class:`paddle_pfc.data.BatchLoader` decoding in this process;
* ``loader/N``: the same with N worker processes (uint8 batches through shared memory,
  normalized by the consumer).

Prints images/s per configuration (median over rounds), ``loader/1 / plain`` (the per-worker
efficiency) and ``loader/N / (N x loader/1)`` (the worker scaling), with the CPU model and
features. Run it alone on the machine: workers compete for cores with anything else.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

import cv2
import numpy as np

from paddle_pfc.cli.entry import run
from paddle_pfc.data import BatchLoader, DistributedBatchSampler, RecordDataset, flip_mask, write_synthetic_rec
from paddle_pfc.data.recordio import unpack
from paddle_pfc.utils.cpu import cpu_summary


def plain_loop(dataset: RecordDataset, batches: list[np.ndarray], flips: list[np.ndarray], size: int) -> int:
    """The minimum a loader does, on the same records: read, decode, flip, normalize."""
    count = 0
    for indices, flip in zip(batches, flips):
        out = np.empty((len(indices), 3, size, size), dtype=np.float32)
        for j, index in enumerate(indices.tolist()):
            _, jpeg = unpack(dataset._read_payload(dataset.key_of(index)))
            rgb = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)[:, :, ::-1]
            if flip[j]:
                rgb = rgb[:, ::-1]
            out[j] = (rgb.transpose(2, 0, 1) - np.float32(127.5)) * np.float32(1 / 128)
        count += len(indices)
    return count


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--images", type=int, default=2048)
    p.add_argument("--size", type=int, default=112)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--json", help="also write the figures to this file")
    args = p.parse_args(argv)
    for name in ("images", "size", "batch_size", "rounds"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.batch_size > args.images:
        p.error(f"--batch-size {args.batch_size} exceeds --images {args.images}")
    if min(args.workers) < 1:
        p.error("--workers must be >= 1 (the plain loop is timed as 0 workers already)")
    return args


def time_rounds(args: argparse.Namespace) -> dict[str, list[float]]:
    """Images per second of the plain loop and of each loader, ``args.rounds`` interleaved rounds
    over a synthetic RecordIO set (the loaders started and warmed up outside the timing)."""
    cv2.setNumThreads(1)
    with tempfile.TemporaryDirectory() as folder:
        write_synthetic_rec(folder, args.images, args.size)
        dataset = RecordDataset(folder)
        sampler = DistributedBatchSampler(len(dataset), args.batch_size, 0, 1, seed=0)
        batches = list(sampler.batches(0))
        flips = [flip_mask(0, 0, b) for b in batches]
        loaders = {f"loader/{n}": BatchLoader(dataset, sampler, args.size, num_workers=n, seed=0)
                   for n in (0, *args.workers)}
        for loader in loaders.values():  # start workers and warm caches outside the timing
            for _ in loader.epoch(0):
                pass
        rates: dict[str, list[float]] = {"plain": [], **{name: [] for name in loaders}}
        for _ in range(args.rounds):
            start = time.perf_counter()
            count = plain_loop(dataset, batches, flips, args.size)
            rates["plain"].append(count / (time.perf_counter() - start))
            for name, loader in loaders.items():
                start = time.perf_counter()
                count = sum(len(labels) for _, labels in loader.epoch(0))
                rates[name].append(count / (time.perf_counter() - start))
        for loader in loaders.values():
            loader.close()
    return rates


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    median = {name: statistics.median(values) for name, values in time_rounds(args).items()}
    report = {"cpu": cpu_summary(), "cores": os.cpu_count(), "images": args.images, "size": args.size,
              "batch_size": args.batch_size, "rounds": args.rounds, "images_per_second": median}
    print(f"CPU: {report['cpu']}, {report['cores']} cores; {args.images} JPEG images {args.size}x{args.size}, "
          f"batch {args.batch_size}, median of {args.rounds} interleaved rounds")
    for name, value in median.items():
        print(f"  {name:10s} {value:9.1f} images/s")
    if "loader/1" in median:
        report["per_worker_vs_plain"] = median["loader/1"] / median["plain"]
        print(f"  loader/1 / plain = {report['per_worker_vs_plain']:.3f}")
        for n in args.workers:
            if n > 1:
                scaling = median[f"loader/{n}"] / (n * median["loader/1"])
                report[f"scaling_{n}"] = scaling
                print(f"  loader/{n} / ({n} x loader/1) = {scaling:.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0

if __name__ == "__main__":
    run(main)
