"""Face-verification accuracy of an exported model (or a checkpoint) on insightface .bin sets.

Usage (from the repo root)::

    python tools/validate.py --model DIR|model.onnx --bin lfw.bin cfp_fp.bin agedb_30.bin [--json out.json]
    python tools/validate.py --checkpoint CKPT_DIR --bin lfw.bin

Same protocol as validation during training (paddle_pfc.evaluation.validation): embedding =
emb(image) + emb(flipped image), 10-fold accuracy, xnorm = mean raw-embedding norm; each distinct
image of a set is embedded once. Prints one table (set, pairs, accuracy +- std, threshold as a
cosine similarity of the L2-normalized embeddings -- what paddle-pfc-infer --threshold takes --,
xnorm) and optionally writes it as JSON. Each set's threshold is chosen on its pairs by a rule
(paddle_pfc.evaluation.operating_point): the middle of the best-accuracy range, or with ``--far R``
a false-accept rate R estimated from its impostor pairs (warned when they are too few for R).
``--record`` writes the first set's threshold and its rule beside the model (``validation.json``;
paddle_pfc.evaluation.threshold_record), where paddle-pfc-infer finds it. The threshold in use
(``--threshold``, else the one recorded now or before) is checked on every set
(paddle_pfc.cli._threshold_check): its false-reject and false-accept rates with 95 % intervals --
where another group of as many people would land (a person-level bootstrap prediction,
paddle_pfc.evaluation.people_bootstrap; cross-validated over people on the set that chose the
threshold) when a ``.people.json`` beside the set says who each pair shows (paddle-pfc-pairs
writes one), else Wilson's with the pairs assumed independent, as the output says; fewer than 10
people are warned about --; a set that chose the threshold (or best/) is said to be
selection-biased; the rates of every other set are held against the intervals the record gave
for new people (inside, ABOVE or below); the last line gives the verdict in words.
``--plot roc.png`` then draws the ROC of every set (log FAR axis,
TAR@FAR marks, AUC and accuracy) and its accuracy per fold into one PNG; a set holding one kind of
pair has no ROC (said in the table, the JSON and the picture); a plotting error loses no result.
Images not at the model's input size are converted by the policy of every command
(paddle_pfc.data.photos; ``--non-square``), said in one line per set.
An exported model is fed as its ``export.json`` says. Embedding prints a progress line (images/s,
eta) every ``--progress-every`` seconds.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from paddle_pfc.cli._outputs import IMAGE_SUFFIXES, check_output_file, draw_figure
from paddle_pfc.cli._photos import add_non_square_option, checkpoint_non_square, model_policy_line
from paddle_pfc.cli._threshold_check import ThresholdToCheck, check_sets
from paddle_pfc.cli.failures import USER_ERRORS, usage_failure
from paddle_pfc.cli.help import HelpFormatter
from paddle_pfc.runtime.process import math_threads_for_this_rank
from paddle_pfc.utils.progress import Progress

EmbedFn = Callable[[Any], Any]  # normalized float32 NCHW batch -> raw embeddings [n, D]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=HelpFormatter)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="export directory or .onnx file")
    src.add_argument("--checkpoint", help="training checkpoint directory")
    p.add_argument("--bin", nargs="+", required=True, help="insightface .bin verification sets")
    p.add_argument("--json", help="write the results to this JSON file")
    p.add_argument("--batch-size", type=int, default=64, help="images embedded at a time")
    p.add_argument("--nrof-folds", type=int, default=10, help="cross-validation folds of the accuracy")
    p.add_argument("--device", default="cpu", help="cpu | gpu | gpu:N (--model only)")
    p.add_argument("--plot", metavar="PNG", help="write the ROC curves and per-fold accuracies here")
    p.add_argument("--progress-every", type=float, default=10.0, help="seconds between progress lines")
    add_non_square_option(p, model_default=True)
    p.add_argument("--record", action="store_true",
                   help="write the first set's threshold beside the model (validation.json), the default "
                   "threshold of paddle-pfc-infer for this model")
    p.add_argument("--far", type=float, metavar="RATE",
                   help="choose each set's threshold at this false-accept rate of its impostor pairs (default: "
                   "the middle of the best-accuracy range)")
    p.add_argument("--threshold", type=float, metavar="COSINE",
                   help="check this threshold on every set (default: the model's recorded one)")
    args = p.parse_args(argv)
    if args.far is not None and not 0.0 < args.far < 1.0:
        p.error(f"--far {args.far}: a false-accept rate is in (0, 1)")
    if args.threshold is not None and not -1.0 <= args.threshold <= 1.0:
        p.error(f"--threshold {args.threshold}: a cosine similarity is in [-1, 1]")
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
            made_by = " (python tools/pairs.py --root YOUR_IMAGE_FOLDER writes one)" \
                if os.path.basename(path) == "pairs.bin" else ""
            problems.append(f"{path}: not found{made_by}")
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
    """(VerificationResult, flip-summed embeddings, issame, distinct images, the people of its
    pairs or None) of one .bin set, with progress lines and the count of distinct images embedded."""
    import warnings

    from paddle_pfc.data.photos import Conversions
    from paddle_pfc.evaluation.pair_people import read_pair_people
    from paddle_pfc.evaluation.validation import embed_distinct, embedded_line, load_pairs
    from paddle_pfc.evaluation.verification import evaluate_pairs

    conversions = Conversions(args.non_square)
    with warnings.catch_warnings():  # a set of one kind of pair: said by the table's "no ROC" note
        warnings.simplefilter("ignore", UserWarning)
        images, issame = load_pairs(path, input_size, conversions)
    people = read_pair_people(path, issame)  # a bad people file fails before any embedding
    if said := conversions.line(input_size):
        print(f"{name}: {said}")
    progress = Progress(f"validate {name}", len(images), "distinct images", every_seconds=args.progress_every,
                        write=print)
    summed, both, distinct = embed_distinct(embed_fn, images, args.batch_size, on_batch=progress.update,
                                            on_distinct=lambda n: setattr(progress, "total", n))
    progress.close()
    print(f"{name}: {embedded_line(distinct, len(images))}")
    result = evaluate_pairs(summed, issame, args.nrof_folds, xnorm_embeddings=both)
    return result, summed, issame, distinct, people


def _renormalizer(mean: float, std: float) -> Callable[[Any], Any]:
    """Maps a batch normalized ``(x - 127.5) / 128`` (what the .bin reader yields) to ``(x - mean) / std``."""
    import numpy as np

    scale, shift = 128.0 / std, (127.5 - mean) / std

    def renormalize(batch):
        return np.asarray(batch, np.float32) * np.float32(scale) + np.float32(shift)
    return renormalize


def build_embed_fn(args: argparse.Namespace) -> tuple[EmbedFn, tuple[int, int], str]:
    """(embed_fn, input_size, description) for --model or --checkpoint. ``embed_fn`` takes batches
    normalized ``(x - 127.5) / 128`` (the training input); an exported model recording another
    normalization in its ``export.json`` gets its own. Without ``--non-square``, ``args.non_square``
    becomes the policy the model was trained with (its ``export.json`` or the checkpoint's config),
    else stretch."""
    from paddle_pfc.data.shape_policy import DEFAULT_NON_SQUARE

    if args.model:
        import warnings

        from paddle_pfc.deploy.inference import FaceEmbedder
        from paddle_pfc.deploy.model_format import FIELD_NORMALIZATION, NORMALIZATION

        with warnings.catch_warnings():  # a model without export.json is fed as the field's models are
            warnings.filterwarnings("ignore", message=r".*no export\.json beside it", category=UserWarning)
            emb = FaceEmbedder(args.model, device=args.device, batch_size=args.batch_size, non_square=args.non_square)
        _say_policy(args, emb.non_square)
        norm = emb.meta.get("normalization", NORMALIZATION) if emb.meta is not None else FIELD_NORMALIZATION
        mean, std = (0.0, 1.0) if norm.get("inside_model") else (float(norm.get("mean", 127.5)),
                                                                   float(norm.get("std", 128.0)))
        described = f"{emb.backend}:{emb.model_files[0]}"
        if (mean, std) == (127.5, 128.0):
            return emb.forward, emb.input_size, described
        renormalize = _renormalizer(mean, std)
        return (lambda batch: emb.forward(renormalize(batch))), emb.input_size, described
    from paddle_pfc.engine.checkpoint import eval_program_from_checkpoint

    prog, _ = eval_program_from_checkpoint(args.checkpoint, native=True)  # the native forward kernels on CPU
    _say_policy(args, args.non_square or checkpoint_non_square(args.checkpoint) or DEFAULT_NON_SQUARE)
    return prog, prog.input_size, f"checkpoint:{args.checkpoint}"


def _say_policy(args: argparse.Namespace, policy: str) -> None:
    """Set ``args.non_square`` to ``policy``; say so when the model's policy replaced the default."""
    if line := model_policy_line(args.non_square, policy):
        print(line)
    args.non_square = policy


class _Table:
    """What the sets gave: table rows, JSON results and plot data by set name, warnings."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, ...]] = []
        self.results: dict[str, dict] = {}
        self.plotted: dict[str, dict] = {}
        self.scores: dict[str, tuple] = {}  # name -> (pair cosines, issame, the pairs' people or None)
        self.notes: list[str] = []

    def add(self, name: str, path: str, evaluated: tuple, seconds: float, args: argparse.Namespace) -> None:
        """Record one set's ``(result, summed, issame, distinct, people)``: its threshold by the rule
        of ``--far`` and its error rates there (and its curves with ``--plot``, a collapse warning)."""
        import numpy as np

        from paddle_pfc.evaluation.collapse import collapse_note
        from paddle_pfc.evaluation.operating_point import choose_threshold, chosen_error_rates
        from paddle_pfc.evaluation.roc import no_roc_reason, verification_curves
        from paddle_pfc.evaluation.threshold_record import file_sha256
        from paddle_pfc.evaluation.verification import pair_cosines

        r, summed, issame, distinct, people = evaluated
        cosines = pair_cosines(summed)
        self.scores[name] = (cosines, np.asarray(issame, bool), people)
        far = args.far if args.far is not None and not np.all(issame) else None
        point = choose_threshold(cosines, issame, far)
        result = {"path": os.path.abspath(path), "num_pairs": r.num_pairs,
                  "accuracy": r.accuracy, "accuracy_std": r.accuracy_std, **point.record(),
                  "fold_threshold": r.cosine_threshold, "xnorm": r.xnorm, "sha256": file_sha256(path),
                  "images": 2 * r.num_pairs, "distinct_images": distinct, "seconds": round(seconds, 3),
                  "error_rates": chosen_error_rates(cosines, issame, point.threshold, people, far).as_dict()}
        self.results[name] = result
        if point.warning:
            self.notes.append(f"warning: {name}: {point.warning}")
        reason = no_roc_reason(issame)
        if reason is not None:
            result["no_roc"] = reason
        if args.plot:
            fpr, tpr, folds = verification_curves(summed, issame, args.nrof_folds)
            result["fold_accuracies"] = folds
            self.plotted[name] = {"fpr": fpr, "tpr": tpr, "accuracy": r.accuracy, "fold_accuracies": folds,
                                  "no_roc": reason, "cosines": cosines, "issame": np.asarray(issame, bool),
                                  "threshold": point.threshold}
        note = collapse_note(summed, r.accuracy)
        if note:
            self.notes.append(f"warning: {name}: {note}")
            result["collapsed"] = True
        self.rows.append((name, str(r.num_pairs), f"{r.accuracy * 100:.2f} ± {r.accuracy_std * 100:.2f}",
                          f"{point.threshold:.3f}", f"{r.xnorm:.3f}"))

    def print_table(self, desc: str, input_size: tuple[int, int], nrof_folds: int) -> None:
        """The table, then the warnings and the sets without a ROC."""
        header = ("set", "pairs", "accuracy % ± std", "threshold (cosine)", "xnorm")
        widths = [max(len(h), *(len(row[i]) for row in self.rows)) for i, h in enumerate(header)]
        print(f"model: {desc}  (input {input_size[0]}x{input_size[1]}, flip-sum, {nrof_folds} folds)")
        print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
        print("  ".join("-" * w for w in widths))
        for row in self.rows:
            print("  ".join(c.ljust(w) for c, w in zip(row, widths)))
        rules = {"the middle of the best-accuracy range" if r["far"] is None else f"false-accept rate {r['far']:g}"
                 for r in self.results.values()}
        print(f"threshold: {' / '.join(sorted(rules))} of each set's pairs; accuracy: insightface's 10-fold protocol")
        for note in self.notes:
            print(note)
        for name, res in self.results.items():
            if "no_roc" in res:
                print(f"note: {name}: no ROC: {res['no_roc']}")


def _write_json(path: str, desc: str, input_size: tuple[int, int], nrof_folds: int, results: dict,
                quiet: bool = False) -> None:
    """Write the results of every set to ``path`` (its folder made) and say so (unless ``quiet``)."""
    payload = {"model": desc, "input_size": list(input_size), "nrof_folds": nrof_folds,
               "flip": True, "threshold_kind": "cosine similarity", "sets": results}
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(payload, f, indent=2)
        f.write("\n")
    if not quiet:
        print(f"wrote {path}")


def main(argv: list[str] | None = None) -> int:
    """Exit status: 0 evaluated (and plotted), 1 the results are written but the plot failed, 2 a
    missing or unreadable model or set (``error: ...``)."""
    args = parse_args(argv)
    problem = bin_problems(args.bin)  # every set checked before the model is built or any set embedded
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if args.checkpoint:  # its program uses the cores, as an exported model's predictor does
        math_threads_for_this_rank()
    try:
        embed_fn, input_size, desc = build_embed_fn(args)
    except (*USER_ERRORS, RuntimeError) as e:
        return usage_failure(e)
    table = _Table()
    for path in args.bin:
        name = os.path.splitext(os.path.basename(path))[0]
        t0 = time.time()
        try:
            evaluated = evaluate_set(embed_fn, path, name, input_size, args)
        except USER_ERRORS as e:
            return usage_failure(e)
        table.add(name, path, evaluated, time.time() - t0, args)
    table.print_table(desc, input_size, args.nrof_folds)
    if args.json:
        _write_json(args.json, desc, input_size, args.nrof_folds, table.results)  # rewritten with the check
    verdicts = []
    try:
        checked = _threshold_to_check(args, table)
    except USER_ERRORS as e:
        return usage_failure(e)
    if checked is not None:
        verdicts = check_sets(checked, table.scores, table.results, table.plotted)
        if args.json:
            _write_json(args.json, desc, input_size, args.nrof_folds, table.results, quiet=True)
    rc = 0
    if args.plot:
        from paddle_pfc.evaluation.roc import plot_verification

        rc = draw_figure(args.plot, lambda: plot_verification(args.plot, table.plotted, desc),
                         "the results above stand")
    if not verdicts:
        verdicts = [f"verdict: {name}: {100 * res['accuracy']:.2f} % accuracy (no threshold recorded for the model "
                    "to check: --record records one)" for name, res in table.results.items()]
    print("\n".join(verdicts))
    return rc


def _threshold_to_check(args: argparse.Namespace, table: _Table) -> ThresholdToCheck | None:
    """``--threshold``, else the one ``--record`` writes (recorded now), else the model's record;
    None without any. ``--record`` writes the record here."""
    from paddle_pfc.evaluation.threshold_record import read_record, write_record

    model = args.model or args.checkpoint
    if args.record:
        name, first = next(iter(table.results.items()))
        written = write_record(model, table.results)
        print(f"recorded threshold {first['threshold']:.3f} (cosine, {name}: {first['rule_text']}) in {written}")
        if args.threshold is None:
            return ThresholdToCheck(first["threshold"], f"recorded now on {name}", first["sha256"], first["far"],
                                    {**first["error_rates"], "set": name})
    record = read_record(model)
    if args.threshold is not None:
        return ThresholdToCheck(args.threshold, "--threshold", record.set_sha256 if record is not None else None,
                                by_rule=False)
    if record is None:
        return None
    return ThresholdToCheck(record.threshold, f"recorded by validation in {record.where}", record.set_sha256,
                            record.far, record.predicted)


if __name__ == "__main__":
    sys.exit(main())
