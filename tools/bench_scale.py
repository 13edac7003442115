#!/usr/bin/env python
"""The training data index at the size users bring: build time and memory of a RecordDataset.

    python tools/bench_scale.py [--kind rec|folder|tree] [--sizes small ms1mv3 webface42m] [--workers 2]
                                [--folder /tmp/x]

Writes, per size, a ``.rec`` / ``.idx`` pair (:mod:`paddle_pfc.bench.scale_rec`): ``small`` (10,000
images / 100 ids) and ``ms1mv3`` (5,179,510 / 93,431) in insightface's layout over a sparse
``.rec``; ``webface42m`` (42,474,557 / 2,059,906) without a header record (its keys pass 2^24,
beyond float32 header labels), every record header written (the class count reads them all);
``webface10m`` (10,000,000 / 484,981, its images per identity) likewise, for machines short of memory.
Then, in a fresh process per size, builds the :class:`~paddle_pfc.data.RecordDataset` and reads a
few batches with ``--workers`` loader workers, and prints one JSON line per size: build time (wall
and CPU), peak RSS and its growth per record, and each worker's RSS / PSS / private memory.
``--kind folder``: an image folder instead (:mod:`paddle_pfc.bench.scale_folder`): a full
``label.txt`` of the size (``id_0001234/0000012.jpg``) and only the images the loader reads, so
each file is checked when read; ``--kind tree``: a real tree of ``--tree-images`` empty files in
``--tree-images / 10`` folders (every tenth a symlink to a folder inside the root), built with
every file checked, no loader. The files are removed at the end unless ``--keep``.
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

from paddle_pfc.bench import scale_folder, scale_measure, scale_rec
from paddle_pfc.cli.entry import run
from paddle_pfc.data.image_folder import FILE_CHECK_LIMIT
from paddle_pfc.utils.cpu import cpu_summary

SIZES = {"small": (10_000, 100, "sparse"), "ms1mv3": (5_179_510, 93_431, "sparse"),
         "webface10m": (10_000_000, 484_981, "packed"), "webface42m": (42_474_557, 2_059_906, "packed")}


def _measured(root: str, workers: int, batch_size: int, batches: int, kind: str, out) -> None:
    try:
        out.send(scale_measure.measure(root, workers, batch_size, batches, kind))
    except Exception as e:  # the parent waits for an answer: send what failed
        out.send({"error": f"{type(e).__name__}: {e}"})


def _jpeg() -> bytes:
    return cv2.imencode(".jpg", np.tile(np.arange(112, dtype=np.uint8)[:, None, None] * 2, (1, 112, 3)),
                        [cv2.IMWRITE_JPEG_QUALITY, 50])[1].tobytes()


def _measure_apart(root: str, args, kind: str, batches: int) -> dict:
    """:func:`scale_measure.measure` in a fresh process."""
    receive, send = mp.get_context("spawn").Pipe(duplex=False)
    process = mp.get_context("spawn").Process(target=_measured, args=(root, args.workers, args.batch_size,
                                                                      batches, kind, send))
    process.start()
    result = receive.recv()
    process.join()
    return result


def bench_folder(name: str, folder: str, args) -> dict:
    """An image folder of size ``name`` (``--kind folder``) or a real tree (``--kind tree``)."""
    root = os.path.join(folder, f"{args.kind}-{name}")
    os.makedirs(root, exist_ok=True)
    started = time.perf_counter()
    if args.kind == "tree":
        images, classes, batches = args.tree_images, max(1, args.tree_images // 10), 0
        scale_folder.write_tree(root, images, classes)
    else:
        images, classes, _ = SIZES[name]
        batches = args.batches
        scale_folder.write_label_file(os.path.join(root, "label.txt"), images, classes)
        read = scale_measure.first_indices(images, args.batch_size, batches)
        if images <= FILE_CHECK_LIMIT:  # every file is checked at start-up: all present (empty but those read)
            scale_folder.write_empty_images(root, images, classes)
        scale_folder.write_images(root, images, classes, read, _jpeg())
    written_s = time.perf_counter() - started
    result = _measure_apart(root, args, "folder", batches)
    result.update(size=name if args.kind == "folder" else "tree", kind=args.kind, write_s=round(written_s, 1),
                  label_bytes=os.path.getsize(os.path.join(root, "label.txt")))
    if not args.keep:
        shutil.rmtree(root)
    return result


def bench_size(name: str, folder: str, args) -> dict:
    images, classes, layout = SIZES[name]
    root = os.path.join(folder, name)
    os.makedirs(root, exist_ok=True)
    jpeg = _jpeg()
    indices = scale_measure.first_indices(images, args.batch_size, args.batches)
    started = time.perf_counter()
    if layout == "sparse":
        files = scale_rec.write_sparse_rec(root, images, classes, indices + 1, jpeg)
    else:
        files = scale_rec.write_packed_rec(root, images, classes, indices, jpeg)
    written_s = time.perf_counter() - started
    result = _measure_apart(root, args, "rec", args.batches)
    result.update(size=name, layout=layout, write_s=round(written_s, 1), rec_bytes=files["rec_bytes"],
                  idx_bytes=os.path.getsize(files["idx"]))
    if not args.keep:
        shutil.rmtree(root)
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", choices=sorted(SIZES), default=["small", "ms1mv3", "webface42m"])
    parser.add_argument("--kind", choices=["rec", "folder", "tree"], default="rec")
    parser.add_argument("--tree-images", type=int, default=100_000, help="images of --kind tree")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--folder", default=None, help="where to write the files (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the written files")
    args = parser.parse_args(argv)
    folder = args.folder or tempfile.mkdtemp(prefix="bench_scale-")
    print(json.dumps({"cpu": cpu_summary(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}))
    for name in args.sizes:
        result = bench_size(name, folder, args) if args.kind == "rec" else bench_folder(name, folder, args)
        print(json.dumps(result), flush=True)
        if args.kind == "tree":
            break
    return 0


if __name__ == "__main__":
    run(main)
