#!/usr/bin/env python
"""Convert an insightface image folder (``root/label.txt`` + images) to ``train.rec`` / ``train.idx``.

Usage (from the repo root)::

    python tools/im2rec.py --root DIR --output OUTDIR [--quality 95] [--image-size 112]
                           [--num-classes C] [--skip-bad]

The output follows insightface's MS1M/Glint360K layout (images keys 1..N
sorted by label, header record 0, one identity record per class) and a
``property`` file ``C,H,W`` when all images share one size.
Images are decoded and re-encoded as JPEG at ``--quality``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import _checkout  # noqa: E402,F401  (this checkout's paddle_pfc first on sys.path)

from paddle_pfc.data._image import encode_jpeg  # noqa: E402
from paddle_pfc.data.image_folder import ImageFolderDataset  # noqa: E402
from paddle_pfc.data.recordio import write_insightface_rec  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", required=True, help="folder containing label.txt and the images")
    ap.add_argument("--output", required=True, help="output folder for train.rec / train.idx")
    ap.add_argument("--label-file", default="label.txt", help="label file relative to --root")
    ap.add_argument("--quality", type=int, default=95, help="JPEG quality 1-100")
    ap.add_argument("--image-size", type=int, nargs="+", default=None,
                    help="resize to S or H W (default: keep each image's size)")
    ap.add_argument("--num-classes", type=int, default=None, help="default: max label + 1")
    ap.add_argument("--skip-bad", action="store_true", help="skip missing/undecodable images instead of failing")
    ap.add_argument("--prefix", default="train")
    args = ap.parse_args(argv)
    if not 1 <= args.quality <= 100:
        ap.error("--quality must be in 1..100")
    size = None
    if args.image_size is not None:
        if len(args.image_size) not in (1, 2):
            ap.error("--image-size takes S or H W")
        size = args.image_size[0] if len(args.image_size) == 1 else tuple(args.image_size)

    t0 = time.time()
    try:
        ds = ImageFolderDataset(args.root, label_file=args.label_file, image_size=size,
                                num_classes=args.num_classes, skip_bad=args.skip_bad)
    except ValueError as e:
        print(f"im2rec: error: {e}", file=sys.stderr)
        return 2
    sizes = set()

    order = sorted(range(len(ds)), key=lambda i: int(ds.labels[i]))  # identities contiguous, streamed

    def items():
        for i in order:
            img, label = ds[i]
            sizes.add(img.shape[:2])
            yield label, encode_jpeg(img, args.quality)

    try:
        info = write_insightface_rec(args.output, items(), num_classes=ds.num_classes,
                                     prefix=args.prefix, presorted=True)
    except ValueError as e:
        print(f"im2rec: error: {e}", file=sys.stderr)
        return 2
    if len(sizes) == 1:
        (h, w), = sizes
        with open(os.path.join(args.output, "property"), "w") as f:
            f.write(f"{info['num_classes']},{h},{w}\n")
    print(f"im2rec: wrote {info['num_images']} images, {info['num_classes']} classes to {info['rec']} "
          f"({ds.num_skipped} skipped) in {time.time() - t0:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
