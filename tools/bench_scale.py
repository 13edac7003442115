#!/usr/bin/env python
"""The training data index at the size users bring: build time and memory of a RecordDataset.

    python tools/bench_scale.py [--sizes small ms1mv3 webface42m] [--workers 2] [--folder /tmp/x]

Writes, per size, a ``.rec`` / ``.idx`` pair (:mod:`paddle_pfc.data.scale_rec`): ``small`` (10,000
images / 100 ids) and ``ms1mv3`` (5,179,510 / 93,431) in insightface's layout over a sparse
``.rec``; ``webface42m`` (42,474,557 / 2,059,906) without a header record (its keys pass 2^24,
beyond float32 header labels), every record header written (the class count reads them all).
Then, in a fresh process per size, builds the :class:`~paddle_pfc.data.RecordDataset` and reads a
few batches with ``--workers`` loader workers, and prints one JSON line per size: build time (wall
and CPU), peak RSS and its growth per record, and each worker's RSS / PSS / private memory.
The files are removed at the end unless ``--keep``.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import tempfile
import time

import cv2
import numpy as np

from paddle_pfc.cli.entry import run
from paddle_pfc.data import scale_measure, scale_rec
from paddle_pfc.utils.cpu import cpu_summary

SIZES = {"small": (10_000, 100, "sparse"), "ms1mv3": (5_179_510, 93_431, "sparse"),
         "webface42m": (42_474_557, 2_059_906, "packed")}


def _measured(root: str, workers: int, batch_size: int, batches: int, out) -> None:
    out.send(scale_measure.measure(root, workers, batch_size, batches))


def bench_size(name: str, folder: str, args) -> dict:
    images, classes, layout = SIZES[name]
    root = os.path.join(folder, name)
    os.makedirs(root, exist_ok=True)
    jpeg = cv2.imencode(".jpg", np.tile(np.arange(112, dtype=np.uint8)[:, None, None] * 2, (1, 112, 3)),
                        [cv2.IMWRITE_JPEG_QUALITY, 50])[1].tobytes()
    indices = scale_measure.first_indices(images, args.batch_size, args.batches)
    started = time.perf_counter()
    if layout == "sparse":
        files = scale_rec.write_sparse_rec(root, images, classes, indices + 1, jpeg)
    else:
        files = scale_rec.write_packed_rec(root, images, classes, indices, jpeg)
    written_s = time.perf_counter() - started
    receive, send = mp.get_context("spawn").Pipe(duplex=False)
    process = mp.get_context("spawn").Process(target=_measured, args=(root, args.workers, args.batch_size,
                                                                      args.batches, send))
    process.start()
    result = receive.recv()
    process.join()
    result.update(size=name, layout=layout, write_s=round(written_s, 1), rec_bytes=files["rec_bytes"],
                  idx_bytes=os.path.getsize(files["idx"]))
    if not args.keep:
        shutil.rmtree(root)
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", choices=sorted(SIZES), default=["small", "ms1mv3", "webface42m"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--folder", default=None, help="where to write the files (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the written files")
    args = parser.parse_args(argv)
    folder = args.folder or tempfile.mkdtemp(prefix="bench_scale-")
    print(json.dumps({"cpu": cpu_summary(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}))
    for name in args.sizes:
        print(json.dumps(bench_size(name, folder, args)), flush=True)
    return 0


if __name__ == "__main__":
    run(main)
