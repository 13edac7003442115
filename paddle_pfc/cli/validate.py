"""Face-verification accuracy of an exported model (or a checkpoint) on insightface .bin sets.

Usage (from the repo root)::

    python tools/validate.py --model DIR|model.onnx --bin lfw.bin cfp_fp.bin agedb_30.bin [--json out.json]
    python tools/validate.py --checkpoint CKPT_DIR --bin lfw.bin

Same protocol as validation during training (paddle_pfc.evaluation.validation): embedding =
emb(image) + emb(flipped image), 10-fold accuracy on squared L2 distance of unit
vectors, xnorm = mean raw-embedding norm.  Prints one table (set, pairs,
accuracy +- std, threshold as squared distance and as cosine 1 - t/2, xnorm) and
optionally writes it as JSON. ``--plot roc.png`` draws the ROC of every set and its accuracy
per fold into one PNG. Embedding prints a progress line (images/s, eta) every
``--progress-every`` seconds.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Callable

from paddle_pfc.cli._outputs import IMAGE_SUFFIXES, check_output_file
from paddle_pfc.engine.progress import Progress

EmbedFn = Callable[[Any], Any]  # normalized float32 NCHW batch -> raw embeddings [n, D]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="export directory or .onnx file")
    src.add_argument("--checkpoint", help="training checkpoint directory")
    p.add_argument("--bin", nargs="+", required=True, help="insightface .bin verification sets")
    p.add_argument("--json", help="write the results to this JSON file")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--nrof-folds", type=int, default=10)
    p.add_argument("--device", default="cpu", help="cpu | gpu | gpu:N (--model only)")
    p.add_argument("--plot", metavar="PNG", help="write the ROC curves and per-fold accuracies here")
    p.add_argument("--progress-every", type=float, default=10.0, help="seconds between progress lines")
    args = p.parse_args(argv)
    if args.nrof_folds < 1:
        p.error("--nrof-folds must be >= 1")
    if args.batch_size < 1:
        p.error("--batch-size must be >= 1")
    if args.json:
        check_output_file(p, "--json", args.json)
    if args.plot:
        check_output_file(p, "--plot", args.plot, IMAGE_SUFFIXES)
    return args


def bin_problems(paths: list[str]) -> str | None:
    """What is wrong with the ``--bin`` files, each named (None when every one is a readable file
    and their set names, the file names without ``.bin``, differ)."""
    problems = []
    for path in paths:
        if not os.path.exists(path):
            problems.append(f"{path}: not found")
        elif not os.path.isfile(path):
            problems.append(f"{path}: not a file")
        elif not os.access(path, os.R_OK):
            problems.append(f"{path}: not readable")
    names = [os.path.splitext(os.path.basename(path))[0] for path in paths]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        problems.append(f"several sets named {', '.join(twice)} (results are keyed by the file name)")
    return "--bin " + "; ".join(problems) if problems else None


def evaluate_set(embed_fn: EmbedFn, path: str, name: str, input_size: tuple[int, int],
                 args: argparse.Namespace) -> tuple:
    """(VerificationResult, flip-summed embeddings, issame) of one .bin set, with progress lines."""
    from paddle_pfc.evaluation.validation import embed_pairs, load_bin
    from paddle_pfc.evaluation.verification import evaluate_pairs

    images, issame = load_bin(path, input_size)
    progress = Progress(f"validate {name}", 2 * len(images), "images", every_seconds=args.progress_every,
                        write=print)

    def counted(batch):
        out = embed_fn(batch)
        progress.update(len(batch))
        return out

    summed, both = embed_pairs(counted, images, args.batch_size)
    progress.close()
    return evaluate_pairs(summed, issame, args.nrof_folds, xnorm_embeddings=both), summed, issame


def build_embed_fn(args: argparse.Namespace) -> tuple[EmbedFn, tuple[int, int], str]:
    """(embed_fn, input_size, description) for --model or --checkpoint (also used by eval_ijb)."""
    if args.model:
        from paddle_pfc.deploy.inference import FaceEmbedder

        emb = FaceEmbedder(args.model, device=args.device, batch_size=args.batch_size)
        return emb.forward, emb.input_size, f"{emb.backend}:{emb.model_files[0]}"
    from paddle_pfc.deploy.export import EvalProgram, model_from_checkpoint

    model, state = model_from_checkpoint(args.checkpoint)
    prog = EvalProgram(model["backbone"], model["embedding_size"], model["input_size"], state,
                       dropout=model["dropout"], native=True)  # the native forward kernels on CPU
    return prog, prog.input_size, f"checkpoint:{args.checkpoint}"


def main(argv: list[str] | None = None) -> int:
    """Exit status: 0 evaluated, 2 a missing or unreadable model or set (``error: ...``)."""
    args = parse_args(argv)
    problem = bin_problems(args.bin)  # every set checked before the model is built or any set embedded
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    from paddle_pfc.evaluation.validation import distance_to_cosine

    try:
        embed_fn, input_size, desc = build_embed_fn(args)
    except (FileNotFoundError, ValueError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    rows, results, curves, folds = [], {}, {}, {}
    for path in args.bin:
        name = os.path.splitext(os.path.basename(path))[0]
        t0 = time.time()
        try:
            r, summed, issame = evaluate_set(embed_fn, path, name, input_size, args)
        except (FileNotFoundError, ValueError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        if args.plot:
            from paddle_pfc.evaluation.roc import verification_curves

            fpr, tpr, folds[name] = verification_curves(summed, issame, args.nrof_folds)
            curves[name] = (fpr, tpr)
        results[name] = {"path": os.path.abspath(path), "num_pairs": r.num_pairs,
                         "accuracy": r.accuracy, "accuracy_std": r.accuracy_std,
                         "threshold": r.threshold, "cosine_threshold": distance_to_cosine(r.threshold),
                         "xnorm": r.xnorm, "seconds": round(time.time() - t0, 3)}
        if args.plot:
            results[name]["fold_accuracies"] = folds[name]
        rows.append((name, str(r.num_pairs), f"{r.accuracy * 100:.2f} ± {r.accuracy_std * 100:.2f}",
                     f"{r.threshold:.3f}", f"{distance_to_cosine(r.threshold):.3f}", f"{r.xnorm:.3f}"))
    header = ("set", "pairs", "accuracy % ± std", "threshold (dist²)", "cos threshold", "xnorm")
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    print(f"model: {desc}  (input {input_size[0]}x{input_size[1]}, flip-sum, {args.nrof_folds} folds)")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)))
    if args.plot:
        from paddle_pfc.evaluation.roc import plot_verification

        os.makedirs(os.path.dirname(os.path.abspath(args.plot)), exist_ok=True)
        plot_verification(args.plot, curves, folds)
        print(f"wrote {args.plot}")
    if args.json:
        payload = {"model": desc, "input_size": list(input_size), "nrof_folds": args.nrof_folds,
                   "flip": True, "sets": results}
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(payload, f, indent=2)
            f.write("\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
