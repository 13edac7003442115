"""IJB-B / IJB-C 1:1 verification (TAR at FAR) of an exported model or a checkpoint.

Usage (from the repo root)::

    python tools/eval_ijb.py --model DIR|model.onnx --root IJB_release/IJBC --out out/ijbc
    python tools/eval_ijb.py --checkpoint CKPT_DIR --root IJB_release/IJBB --out out/ijbb
    python -m paddle.distributed.launch --nproc_per_node 4 tools/eval_ijb.py --model DIR --root ... --out ...

``--root`` holds insightface's release layout (``meta/ijbc_*.txt`` or ``meta/ijbb_*.txt`` and
``loose_crop/``). Protocol: paddle_pfc/evaluation/ijb.py (insightface's defaults: flip, no per-image
normalisation, detector-score weighting; ``--normalize-images`` / ``--no-detector-score`` /
``--no-flip`` change them). Writes ``OUT/roc.csv``, ``OUT/roc.png``, ``OUT/result.json`` and prints
the TAR@FAR table. Several ranks: each embeds a contiguous share of the faces and writes
``OUT/ijb_parts/rank<r>.npz``; rank 0 waits for all parts (``--wait-timeout``), merges and scores.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Callable

from paddle_pfc.cli._outputs import check_output_dir
from paddle_pfc.engine.progress import Progress


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from paddle_pfc.evaluation import roc

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="export directory or .onnx file")
    src.add_argument("--checkpoint", help="training checkpoint (or best/) directory")
    p.add_argument("--root", required=True, help="IJB release folder (meta/, loose_crop/)")
    p.add_argument("--prefix", choices=("ijbc", "ijbb"), default=None, help="default: detected")
    p.add_argument("--out", required=True, help="output folder (roc.csv, roc.png, result.json)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--device", default="cpu", help="cpu | gpu | gpu:N (--model only)")
    p.add_argument("--no-flip", action="store_true", help="embed the image only (insightface F2)")
    p.add_argument("--normalize-images", action="store_true",
                   help="L2-normalise each face feature before aggregation (insightface N0)")
    p.add_argument("--no-detector-score", action="store_true",
                   help="do not weight faces by their detector score (insightface D0)")
    p.add_argument("--far", type=float, nargs="+", default=list(roc.DEFAULT_FARS))
    p.add_argument("--progress-every", type=float, default=10.0, help="seconds between progress lines")
    p.add_argument("--wait-timeout", type=float, default=7200.0,
                   help="rank 0: seconds to wait for the other ranks' parts")
    args = p.parse_args(argv)
    check_output_dir(p, "--out", args.out)
    bad = [far for far in args.far if not 0.0 < far <= 1.0]  # also NaN
    if bad:
        p.error(f"--far {bad[0]}: a false accept rate is in (0, 1]")
    if args.batch_size < 1:
        p.error("--batch-size must be >= 1")
    return args


def rank_and_world() -> tuple[int, int]:
    """From ``paddle.distributed.launch``'s environment (1 rank when started by plain python)."""
    return int(os.environ.get("PADDLE_TRAINER_ID", "0")), int(os.environ.get("PADDLE_TRAINERS_NUM", "1"))


def embedder(args: argparse.Namespace) -> tuple[Callable, int, str]:
    """(embed_fn, input side, description)."""
    from paddle_pfc.cli.validate import build_embed_fn

    embed_fn, input_size, desc = build_embed_fn(args)
    h, w = input_size
    if h != w:
        raise ValueError(f"the model's input is {h}x{w}; IJB alignment needs a square input")
    return embed_fn, int(h), desc


def wait_for_parts(out: str, world: int, timeout: float) -> list[str]:
    """The paths of every rank's part, once all exist; ``TimeoutError`` after ``timeout`` seconds."""
    from paddle_pfc.evaluation import ijb

    paths = [str(ijb.rank_part_path(out, r)) for r in range(world)]
    deadline = time.monotonic() + timeout
    while not all(os.path.exists(p) for p in paths):
        if time.monotonic() > deadline:
            missing = [p for p in paths if not os.path.exists(p)]
            raise TimeoutError(f"rank 0 waited {timeout:.0f}s for {missing[0]} (did that rank fail? see its log)")
        time.sleep(0.5)
    return paths


def main(argv: list[str] | None = None) -> int:
    """Exit status: 0 on every rank that finished its part (rank 0: and scored), 2 a bad model,
    protocol or image (``error: ...``)."""
    args = parse_args(argv)
    import numpy as np

    from paddle_pfc.evaluation import ijb, roc

    rank, world = rank_and_world()
    try:
        protocol = ijb.read_protocol(args.root, args.prefix)
        embed_fn, size, desc = embedder(args)
    except (FileNotFoundError, ValueError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    name = ijb.default_prefix_name(protocol.prefix)
    start, stop = ijb.shard(len(protocol.images), rank, world)
    part = ijb.rank_part_path(args.out, rank)
    part.parent.mkdir(parents=True, exist_ok=True)
    if part.exists():
        part.unlink()  # a stale part of an earlier run must not be merged
    with Progress(f"{name} embedding (rank {rank}/{world})", stop - start, "faces",
                  every_seconds=args.progress_every, write=print) as progress:
        try:
            feats = ijb.embed_faces(protocol, embed_fn, size, np.arange(start, stop), args.batch_size,
                                    flip=not args.no_flip, progress=progress)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    tmp = part.with_name(part.name + ".tmp.npz")
    np.savez(tmp, start=start, stop=stop, features=feats)
    os.replace(tmp, part)
    if rank != 0:
        return 0
    parts = [np.load(p, allow_pickle=False) for p in wait_for_parts(args.out, world, args.wait_timeout)]
    features = np.concatenate([p["features"] for p in sorted(parts, key=lambda p: int(p["start"]))])
    result = ijb.evaluate_features(protocol, features, args.far, normalize_images=args.normalize_images,
                                   detector_weighting=not args.no_detector_score)
    os.makedirs(args.out, exist_ok=True)
    roc.write_roc_csv(os.path.join(args.out, "roc.csv"), result.fpr, result.tpr, result.thresholds)
    roc.plot_roc(os.path.join(args.out, "roc.png"), {name: (result.fpr, result.tpr)}, f"{name} 1:1 ROC")
    payload = {"model": desc, "dataset": name, "root": os.path.abspath(args.root),
               "faces": result.num_faces, "templates": result.num_templates, "pairs": result.num_pairs,
               "flip": not args.no_flip, "normalize_images": args.normalize_images,
               "detector_weighting": not args.no_detector_score,
               "tar_at_far": {f"{far:g}": tar for far, tar in result.tar_at_far.items()}}
    with open(os.path.join(args.out, "result.json"), "w", encoding="utf-8") as f:
        json.dump(payload, f, indent=2)
        f.write("\n")
    print(f"model: {desc}  ({name}: {result.num_faces} faces, {result.num_templates} templates, "
          f"{result.num_pairs} pairs)")
    print("  ".join(f"{'FAR=' + format(far, 'g'):>10}" for far in result.tar_at_far))
    print("  ".join(f"{100 * tar:10.2f}" for tar in result.tar_at_far.values()))
    print(f"wrote {args.out}/roc.csv, roc.png, result.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
