"""Embed face images with an exported model and compare them.

Usage (from the repo root)::

    python tools/infer.py --model DIR --images a.jpg b.jpg FOLDER ...
    python tools/infer.py --model DIR --compare a.jpg b.jpg [--threshold 0.3]

``--model``: an export directory (model.json + model.pdiparams + export.json) or a
``.onnx`` file. Images are turned into the model's input as every command does
(paddle_pfc.data.photos: grey -> 3 equal channels, non-square -> made square by
``--non-square``: stretched, padded with its border or centre-cropped, then resized; said in one
line); they should be aligned face crops: ``--landmarks FILE``
aligns them from five points each (paddle_pfc.evaluation.face_align). An embedding is
emb(x) + emb(flipped x), as in validation (``--no-flip``: emb(x) alone).
``--images`` prints, per image, the norm of its RAW embedding (before L2 normalization; the
"xnorm" quality signal of validation), then the cosine-similarity matrix of the L2-normalized
embeddings. ``--compare`` prints SAME if cosine similarity >= the threshold else DIFFERENT; the
threshold is ``--threshold`` (a cosine similarity), else the one the model's validation recorded
(``validation.json`` beside the model: paddle-pfc-validate --record, or a run's best/ carried
by paddle-pfc-export), and the line says which, from where, and the rule that chose a recorded one.
"""
from __future__ import annotations

import argparse
import os
import sys

from paddle_pfc.cli._photos import add_non_square_option, model_policy_line
from paddle_pfc.cli.failures import USER_ERRORS, usage_failure
from paddle_pfc.cli.help import HelpFormatter


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=HelpFormatter)
    p.add_argument("--model", required=True, help="export directory or .onnx file")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--images", nargs="+", help="image files and/or folders")
    what.add_argument("--compare", nargs=2, metavar=("A", "B"), help="two images to compare")
    p.add_argument("--threshold", type=float, help="cosine-similarity threshold of --compare (default: the one "
                   "recorded by the model's validation, validation.json beside the model)")
    p.add_argument("--device", default="cpu", help="cpu | gpu | gpu:N")
    p.add_argument("--batch-size", type=int, default=64, help="images embedded at a time")
    p.add_argument("--no-flip", dest="flip", action="store_false",
                   help="embedding = emb(x) alone (default: emb(x) + emb(flipped x), as validation computes it)")
    p.add_argument("--landmarks", metavar="FILE",
                   help="align each image from its five points in FILE (lines: image x1 y1 ... x5 y5)")
    add_non_square_option(p, model_default=True)
    args = p.parse_args(argv)
    if args.threshold is not None and not -1.0 <= args.threshold <= 1.0:  # also NaN
        p.error(f"--threshold {args.threshold}: a cosine similarity is in [-1, 1]")
    if args.batch_size < 1:
        p.error("--batch-size must be >= 1")
    return args


def resolve_threshold(args: argparse.Namespace) -> tuple[float, str]:
    """``(cosine threshold, where it came from)`` for ``--compare``: ``--threshold``, else the
    model's validation record; :class:`UsageError` saying how to get one when there is none."""
    from paddle_pfc.evaluation.threshold_record import HOW_TO_RECORD, read_record
    from paddle_pfc.utils.errors import UsageError

    if args.threshold is not None:
        return args.threshold, "--threshold"
    recorded = read_record(args.model)
    if recorded is None:
        raise UsageError(f"--compare needs a threshold and {args.model} has no validation record: give "
                         f"--threshold COSINE, or {HOW_TO_RECORD}")
    return recorded.threshold, f"recorded by validation in {recorded.where}"


def aligned_images(paths: list[str], landmarks_file: str) -> list:
    """The aligned RGB crop of each of ``paths`` from its five points in ``landmarks_file``."""
    from paddle_pfc.data.photos import read_landmarks
    from paddle_pfc.deploy.inference import read_image
    from paddle_pfc.evaluation.face_align import align_face
    from paddle_pfc.utils.errors import UsageError

    points = read_landmarks(landmarks_file)
    out = []
    for path in paths:
        key = os.path.realpath(path)
        if key not in points:
            raise UsageError(f"--landmarks {landmarks_file}: no line for {path}")
        out.append(align_face(read_image(path), points[key]))
    return out


def main(argv: list[str] | None = None) -> int:
    """Exit status: 0 printed, 2 a missing or unreadable model or image (``error: ...``)."""
    args = parse_args(argv)
    import numpy as np

    from paddle_pfc.deploy.inference import FaceEmbedder, expand_image_paths, l2_normalize

    try:
        paths = expand_image_paths(args.images or args.compare)
        embedder = FaceEmbedder(args.model, device=args.device, batch_size=args.batch_size,
                                non_square=args.non_square)
        threshold = resolve_threshold(args) if args.compare else None  # before any image is embedded
        images = aligned_images(paths, args.landmarks) if args.landmarks else paths
        raw = embedder.embed(images, normalize=False, flip=args.flip)
    except USER_ERRORS as e:
        return usage_failure(e)
    if said := embedder.conversions.line(embedder.input_size):
        print(said)
        if line := model_policy_line(args.non_square, embedder.non_square):
            print(line)
    emb = l2_normalize(raw)
    sim = emb @ emb.T
    if args.compare:
        s = float(sim[0, 1])
        value, source = threshold
        verdict = "SAME" if s >= value else "DIFFERENT"
        print(f"{verdict}: cosine similarity {s:.4f} {'>=' if s >= value else '<'} "
              f"threshold {value:.3f} ({source}; {'flip-summed' if args.flip else 'no flip'})  "
              f"({paths[0]} vs {paths[1]})")
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
