"""IJB-B / IJB-C 1:1 verification (TAR at FAR) of an exported model or a checkpoint.

Usage (from the repo root)::

    python tools/eval_ijb.py --model DIR|model.onnx --root IJB_release/IJBC --out out/ijbc
    python tools/eval_ijb.py --checkpoint CKPT_DIR --root IJB_release/IJBB --out out/ijbb
    python -m paddle.distributed.launch --nproc_per_node 4 tools/eval_ijb.py --model DIR --root ... --out ...

``--root`` holds insightface's release layout (``meta/ijbc_*.txt`` or ``meta/ijbb_*.txt`` and
``loose_crop/``). Protocol: paddle_pfc/evaluation/ijb.py (insightface's defaults: flip, no per-image
normalisation, detector-score weighting; ``--normalize-images`` / ``--no-detector-score`` /
``--no-flip`` change them). Faces are normalized as the model's ``export.json`` says (``--model``)
or as in training (``--checkpoint``). Every image is checked before any face is embedded (all
missing ones reported; their names in ``OUT/missing_images.txt``). Writes ``OUT/result.json`` and
``OUT/roc.csv`` and prints the TAR@FAR table, then draws ``OUT/roc.png`` (a plotting error loses
no result). Several ranks: each embeds a contiguous share of the faces and writes
``OUT/ijb_parts/rank<r>.npz`` tagged with the run id and the model's fingerprint; rank 0 waits for
every part of this run (``--wait-timeout``), refuses parts of another run or model, merges and scores.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import NamedTuple

from paddle_pfc.cli._outputs import check_output_dir, draw_figure
from paddle_pfc.cli.failures import USER_ERRORS, usage_failure
from paddle_pfc.cli.help import HelpFormatter
from paddle_pfc.runtime.process import math_threads_for_this_rank
from paddle_pfc.utils.progress import Progress


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from paddle_pfc.evaluation import roc

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=HelpFormatter)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="export directory or .onnx file")
    src.add_argument("--checkpoint", help="training checkpoint (or best/) directory")
    p.add_argument("--root", required=True, help="IJB release folder (meta/, loose_crop/)")
    p.add_argument("--prefix", choices=("ijbc", "ijbb"), default=None, help="default: detected")
    p.add_argument("--out", required=True, help="output folder (roc.csv, roc.png, result.json)")
    p.add_argument("--batch-size", type=int, default=64, help="images embedded at a time")
    p.add_argument("--device", default="cpu", help="cpu | gpu | gpu:N (--model only)")
    p.add_argument("--no-flip", action="store_true", help="embed the image only (insightface F2)")
    p.add_argument("--normalize-images", action="store_true",
                   help="L2-normalise each face feature before aggregation (insightface N0)")
    p.add_argument("--no-detector-score", action="store_true",
                   help="do not weight faces by their detector score (insightface D0)")
    p.add_argument("--far", type=float, nargs="+", default=list(roc.DEFAULT_FARS),
                   help="false accept rates at which the TAR is reported")
    p.add_argument("--progress-every", type=float, default=10.0, help="seconds between progress lines")
    p.add_argument("--wait-timeout", type=float, default=7200.0,
                   help="rank 0: seconds to wait for the other ranks' parts")
    p.add_argument("--run-id", default=None,
                   help="tag shared by the ranks of one run (default: derived from the launcher's environment)")
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


def default_run_id(world: int) -> str:
    """A tag every rank of one launch derives alike: the launcher's master and endpoints (their
    ports are chosen per launch), else the parent process (ranks started by one parent); one rank:
    a fresh random id."""
    import hashlib
    import uuid

    if world <= 1:
        return uuid.uuid4().hex[:16]
    shared = "|".join(os.environ.get(k, "") for k in ("PADDLE_MASTER", "PADDLE_TRAINER_ENDPOINTS", "PADDLE_JOB_ID"))
    if not shared.strip("|"):
        shared = f"ppid{os.getppid()}"
    return hashlib.sha1(shared.encode()).hexdigest()[:16]


class Embedder(NamedTuple):
    """What embeds IJB faces: ``preprocess`` (aligned uint8 RGB NHWC -> the model's input),
    ``embed_fn`` (input -> raw embeddings), the square input ``size``, a description and the
    model's ``fingerprint`` (its weights and input normalization)."""

    embed_fn: Callable
    preprocess: Callable
    size: int
    desc: str
    fingerprint: str


def _digest(chunks) -> str:
    import hashlib

    h = hashlib.blake2b(digest_size=8)
    for chunk in chunks:
        h.update(chunk)
    return h.hexdigest()


def _file_chunks(paths, size: int = 1 << 22):
    for path in paths:
        yield os.path.basename(path).encode()
        with open(path, "rb") as f:
            while chunk := f.read(size):
                yield chunk


def embedder(args: argparse.Namespace) -> Embedder:
    """The exported model (``--model``: normalized as its ``export.json`` says) or the checkpoint's
    backbone (``--checkpoint``: the training normalization ``(x - 127.5) / 128``)."""
    import numpy as np

    if args.model:
        from paddle_pfc.deploy.inference import FaceEmbedder
        from paddle_pfc.deploy.model_format import META_FILE, NORMALIZATION

        emb = FaceEmbedder(args.model, device=args.device, batch_size=args.batch_size)
        meta_file = emb.model_dir / META_FILE
        files = list(emb.model_files) + ([str(meta_file)] if meta_file.is_file() else [])
        norm = (emb.meta or {}).get("normalization", NORMALIZATION)
        fingerprint = f"{_digest(_file_chunks(files))} {norm.get('formula', '')}".strip()
        embed_fn, preprocess, (h, w) = emb.forward, emb.preprocess, emb.input_size
        desc = f"{emb.backend}:{emb.model_files[0]}"
    else:
        from paddle_pfc.data._image import normalize_nchw
        from paddle_pfc.engine.checkpoint import eval_program_from_checkpoint

        prog, state = eval_program_from_checkpoint(args.checkpoint, native=True)
        chunks = (bytes(k, "utf-8") + np.ascontiguousarray(state[k]).tobytes() for k in sorted(state))
        fingerprint = f"{_digest(chunks)} (x - 127.5) / 128"
        embed_fn, preprocess, (h, w) = prog, normalize_nchw, prog.input_size
        desc = f"checkpoint:{args.checkpoint}"
    if h != w:
        raise ValueError(f"the model's input is {h}x{w}; IJB alignment needs a square input")
    return Embedder(embed_fn, preprocess, int(h), desc, fingerprint)


def write_results(args: argparse.Namespace, name: str, model: Embedder, result) -> None:
    """``result.json`` and ``roc.csv`` of rank 0, and the TAR@FAR table on stdout."""
    from paddle_pfc.evaluation import roc

    os.makedirs(args.out, exist_ok=True)
    payload = {"model": model.desc, "model_fingerprint": model.fingerprint, "dataset": name,
               "root": os.path.abspath(args.root),
               "faces": result.num_faces, "templates": result.num_templates, "pairs": result.num_pairs,
               "flip": not args.no_flip, "normalize_images": args.normalize_images,
               "detector_weighting": not args.no_detector_score,
               "auc": roc.auc(result.fpr, result.tpr),
               "tar_at_far": {f"{far:g}": tar for far, tar in result.tar_at_far.items()}}
    with open(os.path.join(args.out, "result.json"), "w", encoding="utf-8") as f:
        json.dump(payload, f, indent=2)
        f.write("\n")
    roc.write_roc_csv(os.path.join(args.out, "roc.csv"), result.fpr, result.tpr, result.thresholds)
    print(f"model: {model.desc}  ({name}: {result.num_faces} faces, {result.num_templates} templates, "
          f"{result.num_pairs} pairs)")
    print("  ".join(f"{'FAR=' + format(far, 'g'):>10}" for far in result.tar_at_far))
    print("  ".join(f"{100 * tar:10.2f}" for tar in result.tar_at_far.values()))
    print(f"wrote {args.out}/result.json, roc.csv")


def main(argv: list[str] | None = None) -> int:
    """Exit status: 0 on every rank that finished its part (rank 0: and scored and plotted), 1 the
    results are written but the plot failed, 2 a bad model, protocol, image or part (``error: ...``)."""
    args = parse_args(argv)
    if args.checkpoint:  # its program uses this rank's cores, as an exported model's predictor does
        math_threads_for_this_rank()
    import numpy as np

    from paddle_pfc.evaluation import ijb, roc

    rank, world = rank_and_world()
    run_id = args.run_id or default_run_id(world)
    try:
        protocol = ijb.read_protocol(args.root, args.prefix)
        ijb.check_images(protocol, os.path.join(args.out, "missing_images.txt") if rank == 0 else None)
        model = embedder(args)
    except (*USER_ERRORS, RuntimeError) as e:
        return usage_failure(e)
    name = ijb.default_prefix_name(protocol.prefix)
    flip = not args.no_flip
    tag = ijb.PartTag(run_id, model.fingerprint,
                      f"{protocol.prefix} faces={len(protocol.images)} size={model.size} flip={flip}", world)
    start, stop = ijb.shard(len(protocol.images), rank, world)
    part = ijb.rank_part_path(args.out, rank)
    part.parent.mkdir(parents=True, exist_ok=True)
    if part.exists():
        part.unlink()  # this rank's part of an earlier run
    with Progress(f"{name} embedding (rank {rank}/{world})", stop - start, "faces",
                  every_seconds=args.progress_every, write=print) as progress:
        try:
            feats = ijb.embed_faces(protocol, model.embed_fn, model.size, np.arange(start, stop), args.batch_size,
                                    flip=flip, progress=progress, preprocess=model.preprocess)
        except USER_ERRORS as e:
            return usage_failure(e)
    ijb.write_part(part, feats, start, stop, rank, tag)
    if rank != 0:
        return 0
    try:
        features = ijb.merge_parts(args.out, tag, len(protocol.images), args.wait_timeout)
    except USER_ERRORS as e:  # TimeoutError: an OSError
        return usage_failure(e)
    result = ijb.evaluate_features(protocol, features, args.far, normalize_images=args.normalize_images,
                                   detector_weighting=not args.no_detector_score)
    write_results(args, name, model, result)
    png = os.path.join(args.out, "roc.png")
    return draw_figure(png, lambda: roc.plot_roc(png, {model.desc: (result.fpr, result.tpr)},
                                                 f"{name} 1:1 verification", fars=args.far),
                       "result.json and roc.csv are written")


if __name__ == "__main__":
    sys.exit(main())
