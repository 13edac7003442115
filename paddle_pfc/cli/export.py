"""Export a trained backbone as a Paddle Inference model (optionally also ONNX).

Usage (from the repo root)::

    python tools/export.py --weights backbone.npz|.pdparams -c config.yaml --out DIR
    python tools/export.py --checkpoint CKPT_DIR --out DIR [--format onnx] [--dtype float16]
    python tools/export.py --random-init --backbone mobilefacenet --input-size 112 --out DIR

Writes ``DIR/model.json`` + ``DIR/model.pdiparams`` + ``DIR/export.json`` (float16:
``model.pdmodel``, see paddle_pfc/deploy/export.py).  The model input is float32 NCHW RGB
normalized ``(x - 127.5) / 128`` (NOT inside the model; recorded in export.json).
Architecture: ``--checkpoint`` carries its config; otherwise ``-c/--config`` (its
``model`` section) and/or ``--backbone/--embedding-size/--input-size/--dropout``
(these win).  float32 exports hold their batch norms folded (``--keep-batch-norm``: as built) and
are checked: Paddle Inference vs the static eval program (unfolded, Paddle's kernels);
``--format onnx`` also writes ``DIR/model.onnx`` (paddle2onnx; nothing is installed, no network)
and checks onnxruntime vs Paddle Inference. Each check is relative: max|a - b| / max|b| <= 1e-4
(``paddle_pfc.deploy.parity``), else exit 1. Each step (build, save,
each check) prints a line when it starts and one with its duration when it ends, so a long
export (large backbone, paddle2onnx) is never silent. A ``--checkpoint`` folder's
``validation.json`` (the threshold its validation chose: a run's ``best/``, or
``paddle-pfc-validate --record``) is copied into the export, where paddle-pfc-infer reads it.
``--precision bf16`` (CPUs with AVX512_BF16 / AMX): Paddle Inference serves the export with
oneDNN's bfloat16 products (``export.json`` ``precision``); checked by the smallest cosine of an
embedding to the float32 eval program's (at least 0.999).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from paddle_pfc.cli._outputs import check_output_dir
from paddle_pfc.cli._photos import checkpoint_non_square
from paddle_pfc.cli.failures import USER_ERRORS, usage_failure
from paddle_pfc.cli.help import HelpFormatter
from paddle_pfc.utils.progress import Progress


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=HelpFormatter)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--checkpoint", help="training checkpoint directory (config + backbone state)")
    src.add_argument("--weights", help="backbone state: .npz (np.savez) or .pdparams (paddle.save)")
    src.add_argument("--random-init", action="store_true", help="random weights (smoke tests only)")
    p.add_argument("-c", "--config", help="training YAML config (its model section)")
    p.add_argument("-o", "--override", action="append", default=[], help="config override k.k=v")
    p.add_argument("--backbone", help="backbone name with --weights / --random-init (default: the config's "
                   "model.backbone)")
    p.add_argument("--embedding-size", type=int, help="embedding size (default: the checkpoint's or config's)")
    p.add_argument("--input-size", type=int, help="input side in pixels (default: the checkpoint's or config's)")
    p.add_argument("--dropout", type=float, help="dropout of the model definition (inactive at inference; "
                   "default: the checkpoint's or config's)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--dtype", choices=("float32", "float16"), default="float32",
                   help="float16: for GPU serving only (written on CPU, runs on GPU)")
    p.add_argument("--format", choices=("paddle", "onnx"), default="paddle",
                   help="onnx: also write model.onnx with paddle2onnx and check it")
    p.add_argument("--opset", type=int, default=11, help="ONNX opset version")
    p.add_argument("--seed", type=int, default=0, help="seed for --random-init")
    p.add_argument("--keep-batch-norm", action="store_true",
                   help="float32: write the batch norms as they are (default: folded, for oneDNN)")
    p.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                   help="bf16: Paddle Inference serves the model with bfloat16 products (oneDNN) on CPUs with "
                        "AVX512_BF16 / AMX, float32 elsewhere; needs such a CPU to export and check it")
    args = p.parse_args(argv)
    check_output_dir(p, "--out", args.out)
    if args.precision == "bf16":
        if args.dtype != "float32" or args.keep_batch_norm:
            p.error("--precision bf16 serves a float32 export with its batch norms folded "
                    "(not with --dtype float16 or --keep-batch-norm)")
        from paddle_pfc.kernels.onednn_ops import bfloat16_isa_missing

        missing = bfloat16_isa_missing()
        if missing is not None:
            p.error(f"--precision bf16 is exported and checked on a CPU that serves it so: {missing}")
    if args.checkpoint and (args.config or args.override):
        p.error("-c / -o do not apply with --checkpoint, which carries its own config")
    return args


def explain_missing_best(path: str) -> None:
    """A missing ``RUN/best`` of a training run that has checkpoints is explained (``ValueError``):
    ``best/`` is written only by a validation, and the newest checkpoint is what to export instead."""
    from paddle_pfc.engine.run_folder import missing_best_reason

    reason = missing_best_reason(path)
    if reason is not None:
        why, checkpoints = reason
        raise ValueError(f"{path} does not exist: a run writes best/ at its validations, and {why}. Export the "
                         f"newest checkpoint instead: --checkpoint {checkpoints}")


def resolve_model(args: argparse.Namespace) -> tuple[dict, dict | None]:
    """(model_args dict, state dict) from the command line; ``SystemExit`` when the architecture
    is incomplete."""
    from paddle_pfc.backbones.spec import ModelSpec
    from paddle_pfc.backbones.state import load_state_file, random_state
    from paddle_pfc.engine.checkpoint import model_from_checkpoint

    model = {"backbone": None, "embedding_size": None, "input_size": None, "dropout": 0.0}
    state = None
    if args.checkpoint:
        explain_missing_best(args.checkpoint)
        ckpt_model, state = model_from_checkpoint(args.checkpoint)
        model.update(ckpt_model)
        for key in ("backbone", "embedding_size", "input_size"):
            value = getattr(args, key)
            if value is not None and value != ckpt_model[key]:
                option = "--" + key.replace("_", "-")
                raise ValueError(f"{option} {value} disagrees with the checkpoint {args.checkpoint}, whose "
                                 f"{key} is {ckpt_model[key]!r}: its own architecture is exported, drop {option}")
    elif args.config:
        from paddle_pfc.engine.config import load_config

        cfg = load_config(args.config, args.override)
        model.update(ModelSpec.from_config(cfg.model).description())
    for key in ("backbone", "embedding_size", "input_size", "dropout"):
        value = getattr(args, key)
        if value is not None:
            model[key] = value
    missing = [k for k in ("backbone", "embedding_size", "input_size") if model[k] is None]
    if missing:
        raise SystemExit("error: unknown " + ", ".join("--" + k.replace("_", "-") for k in missing)
                         + " (give them, a --config, or a --checkpoint)")
    if args.weights:
        state = load_state_file(args.weights)
    elif args.random_init:
        state = random_state(model["backbone"], model["embedding_size"], model["input_size"],
                             seed=args.seed, dropout=model["dropout"], options=model.get("options"))
    return model, state


class Steps:
    """``export: step k/n <what>...`` before each step and a progress line (with the elapsed
    time) after it."""

    def __init__(self, total: int) -> None:
        self.progress = Progress("export", total, "steps", every_seconds=0.0, write=print)
        self.total, self.done = total, 0

    def start(self, what: str) -> None:
        print(f"export: step {self.done + 1}/{self.total} {what}...", flush=True)

    def end(self) -> None:
        self.done += 1
        self.progress.update(1)


def check_export(out, prog, dtype: str, to_onnx: bool, opset: int, steps: Steps | None = None) -> int:
    """Check the model saved in ``out`` against ``prog``, the eval program it came from (float32),
    convert it to ONNX when ``to_onnx`` and check onnxruntime against Paddle Inference; print one line
    a check. A bfloat16 export (``prog.precision``) is checked as it serves, with bfloat16 products, by
    the cosine of each embedding to the float32 program's. Returns 0 when every check holds, else 1
    (tolerances: :mod:`paddle_pfc.deploy.parity`)."""
    import numpy as np

    from paddle_pfc.deploy.onnx_export import check_onnx, export_onnx
    from paddle_pfc.deploy.parity import BFLOAT16_COSINE, ONNX_RTOL, PADDLE_RTOL, agreement, relative_difference

    def start(what: str) -> None:
        if steps is not None:
            steps.start(what)

    def end() -> None:
        if steps is not None:
            steps.end()

    rc = 0
    if dtype == "float32":
        from paddle_pfc.deploy.inference import FaceEmbedder

        h, w = prog.input_size
        x = np.random.RandomState(1).uniform(-1, 1, (4, 3, h, w)).astype(np.float32)
        start("checking Paddle Inference against the static eval program")
        served = FaceEmbedder(out).forward(x)
        end()
        if prog.precision == "bfloat16":
            cosine, diff = agreement(served, prog(x))
            ok = cosine >= BFLOAT16_COSINE
            print(f"Paddle Inference (bfloat16 products) vs static eval program (float32): smallest cosine "
                  f"{cosine:.6f}, max abs diff / max magnitude {diff:.3g} ({'OK' if ok else 'FAILED'}, "
                  f"cosine at least {BFLOAT16_COSINE:g})")
        else:
            diff = relative_difference(served, prog(x))
            ok = diff <= PADDLE_RTOL
            print(f"Paddle Inference vs static eval program: max abs diff / max magnitude {diff:.3g} "
                  f"({'OK' if ok else 'FAILED'}, relative tolerance {PADDLE_RTOL:g})")
        rc |= 0 if ok else 1
    if to_onnx:
        start("converting to ONNX (paddle2onnx)")
        onnx_path = export_onnx(out, opset_version=opset)
        end()
        print(f"wrote {onnx_path}")
        if dtype == "float32":
            start("checking onnxruntime against Paddle Inference")
            diff = check_onnx(out, onnx_path)
            end()
            ok = diff <= ONNX_RTOL
            print(f"onnxruntime vs Paddle Inference: max abs diff / max magnitude {diff:.3g} "
                  f"({'OK' if ok else 'FAILED'}, relative tolerance {ONNX_RTOL:g})")
            rc |= 0 if ok else 1
        else:
            print("float16 model: ONNX not checked on CPU")
    return rc


def source_normalization(checkpoint: str | None) -> dict | None:
    """The input normalization of the model a checkpoint was fine-tuned from, when training recorded
    one other than (x - 127.5) / 128 (``input_normalization`` of its ``meta.json``), else None."""
    if not checkpoint or not (Path(checkpoint) / "meta.json").is_file():
        return None
    from paddle_pfc.engine.checkpoint import read_meta

    found = read_meta(checkpoint).get("input_normalization")
    std = found.get("std") if isinstance(found, dict) else None
    if not isinstance(std, (int, float)) or isinstance(std, bool) or std == 128.0 or not 1.0 <= std <= 1000.0:
        return None
    return {"inside_model": False, "formula": str(found.get("formula", f"(x - 127.5) / {std:g}")), "mean": 127.5,
            "std": float(std)}


def _carry_threshold(checkpoint: str | None, out) -> None:
    """Copy the checkpoint's threshold record into the export, and say which threshold it holds."""
    from paddle_pfc.evaluation.threshold_record import RECORD_FILE, read_record, record_path

    if not checkpoint or not (Path(checkpoint) / RECORD_FILE).is_file():
        return
    try:
        record = read_record(checkpoint)
    except ValueError as e:
        print(f"note: threshold record not carried over: {e}")
        return
    import shutil

    shutil.copyfile(Path(checkpoint) / RECORD_FILE, record_path(out))
    print(f"threshold {record.threshold:.3f} (cosine) of {record.where} copied to {record_path(out)}")


def main(argv: list[str] | None = None) -> int:
    """Exit status: 0 exported (and checked), 1 a check failed, 2 unreadable weights, checkpoint or
    config (``error: ...``); an incomplete architecture exits with its message (status 1)."""
    args = parse_args(argv)
    from paddle_pfc.backbones.spec import ModelSpec
    from paddle_pfc.deploy import export as pexport
    from paddle_pfc.deploy.model_format import META_FILE, PARAMS_FILE

    checks = (1 if args.dtype == "float32" else 0) + (1 if args.format == "onnx" else 0) * (
        2 if args.dtype == "float32" else 1)
    steps = Steps(2 + checks)
    try:
        steps.start("reading the weights and building the eval program")
        model, state = resolve_model(args)
        precision = "bfloat16" if args.precision == "bf16" else "float32"
        normalization = source_normalization(args.checkpoint)
        if normalization is not None and state is not None:
            from paddle_pfc.backbones.input_scale import TRAINING_STD, rescale_input

            state = rescale_input(state, TRAINING_STD, float(normalization["std"]))
        prog = pexport.EvalProgram.from_spec(ModelSpec.from_description(model), state, dtype=args.dtype,
                                             precision=precision)
        prog.normalization = normalization
        prog.non_square = checkpoint_non_square(args.checkpoint) if args.checkpoint else None
        steps.end()
    except (*USER_ERRORS, RuntimeError) as e:
        return usage_failure(e)
    steps.start(f"saving the inference model to {args.out}")
    out = prog.save(args.out, fold_batch_norm=not args.keep_batch_norm)
    steps.end()
    print(f"exported {model['backbone']} (embedding {model['embedding_size']}, input "
          f"{prog.input_size[0]}x{prog.input_size[1]}, {args.dtype}"
          f"{', served with bfloat16 products' if precision == 'bfloat16' else ''}) to {out}/"
          f"{{{prog.model_file}, {PARAMS_FILE}, {META_FILE}}}")
    if normalization is None:
        print("model input: float32 NCHW RGB normalized (x - 127.5) / 128 (not inside the model)")
    else:
        print(f"model input: float32 NCHW RGB normalized {normalization['formula']} (not inside the model), as "
              "the model it was fine-tuned from")
    if prog.non_square:
        print(f"non-square images: made square by {prog.non_square}, as training did (export.json; serving's default)")
    _carry_threshold(args.checkpoint, out)
    return check_export(out, prog, args.dtype, args.format == "onnx", args.opset, steps)


if __name__ == "__main__":
    sys.exit(main())
