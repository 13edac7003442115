"""Embed face images with an exported model and compare them.

Usage (from the repo root)::

    python tools/infer.py --model DIR --images a.jpg b.jpg FOLDER ...
    python tools/infer.py --model DIR --compare a.jpg b.jpg --threshold 0.3

``--model``: an export directory (model.json + model.pdiparams + export.json) or a
``.onnx`` file.  Images should be aligned face crops; other sizes are resized (with a
warning), grayscale is converted to RGB.  ``--images`` prints, per image, the norm of
its RAW embedding (before L2 normalization: the normalized norm is always 1; the raw
norm is the "xnorm" quality signal of validation), then the cosine-similarity matrix
of the L2-normalized embeddings.  ``--compare`` prints SAME if cosine similarity >=
``--threshold`` else DIFFERENT.  validate.py reports a squared-L2 distance threshold t
on unit vectors; the equivalent cosine threshold is 1 - t/2 (validate.py prints both).
"""
from __future__ import annotations

import argparse
import os
import sys

from paddle_pfc.cli.failures import USER_ERRORS, usage_failure
from paddle_pfc.cli.help import HelpFormatter


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=HelpFormatter)
    p.add_argument("--model", required=True, help="export directory or .onnx file")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--images", nargs="+", help="image files and/or folders")
    what.add_argument("--compare", nargs=2, metavar=("A", "B"), help="two images to compare")
    p.add_argument("--threshold", type=float, help="cosine-similarity threshold (required with --compare)")
    p.add_argument("--device", default="cpu", help="cpu | gpu | gpu:N")
    p.add_argument("--batch-size", type=int, default=64, help="images embedded at a time")
    p.add_argument("--flip", action="store_true", help="embedding = emb(x) + emb(flipped x), as in validation")
    args = p.parse_args(argv)
    if args.compare and args.threshold is None:
        p.error("--compare needs --threshold (cosine similarity; from validate.py: 1 - threshold/2)")
    if args.threshold is not None and not -1.0 <= args.threshold <= 1.0:  # also NaN
        p.error(f"--threshold {args.threshold}: a cosine similarity is in [-1, 1]")
    if args.batch_size < 1:
        p.error("--batch-size must be >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    """Exit status: 0 printed, 2 a missing or unreadable model or image (``error: ...``)."""
    args = parse_args(argv)
    import numpy as np

    from paddle_pfc.deploy.inference import FaceEmbedder, expand_image_paths, l2_normalize

    try:
        paths = expand_image_paths(args.images or args.compare)
        embedder = FaceEmbedder(args.model, device=args.device, batch_size=args.batch_size)
        raw = embedder.embed(paths, normalize=False, flip=args.flip)
    except USER_ERRORS as e:
        return usage_failure(e)
    emb = l2_normalize(raw)
    sim = emb @ emb.T
    if args.compare:
        s = float(sim[0, 1])
        verdict = "SAME" if s >= args.threshold else "DIFFERENT"
        print(f"{verdict}: cosine similarity {s:.4f} {'>=' if s >= args.threshold else '<'} "
              f"threshold {args.threshold:g}  ({paths[0]} vs {paths[1]})")
        if s > 0.9999 and os.path.realpath(paths[0]) != os.path.realpath(paths[1]):
            from paddle_pfc.evaluation.collapse import COLLAPSE_ADVICE

            print(f"warning: two different images give the same direction (cosine {s:.6f}): the model may have "
                  f"collapsed to one embedding for every face, which paddle-pfc-validate on a .bin shows; "
                  f"{COLLAPSE_ADVICE}")
        return 0
    print(f"{embedder.backend}{' (oneDNN)' if embedder.onednn else ''} model, "
          f"input {embedder.input_size[0]}x{embedder.input_size[1]}, "
          f"embedding {raw.shape[1]}; norm = L2 norm of the raw embedding (before normalization)")
    width = max(len(p) for p in paths)
    for i, p in enumerate(paths):
        print(f"[{i}] {p:<{width}}  norm {np.linalg.norm(raw[i]):.4f}")
    print("cosine similarity:")
    print("      " + "".join(f"{f'[{j}]':>8}" for j in range(len(paths))))
    for i in range(len(paths)):
        print(f"{f'[{i}]':>5} " + "".join(f"{sim[i, j]:8.4f}" for j in range(len(paths))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
