"""Validation during training: verification sets opened at start-up, accuracy on every rank, ``best/``.

:func:`load_validation_sets` opens and checks every set of ``validation.sets`` (and writes the
synthetic one of ``validation.synthetic_pairs``) before the first step; each rank decodes only
its share of the images. :class:`Validator` (a training callback) validates at
``validation.every_steps`` (0: each epoch's end), at the last step and, when the loop asks
(:meth:`Validator.validate_untrained`), before a fresh run's first step: every rank embeds its
share (with flips; each distinct image of the share once), the embeddings are gathered, every rank
computes the same accuracy, and rank 0 logs it (threshold as a cosine similarity) and saves the
backbone to ``output_dir/best`` when the mean accuracy improves, with the validation's thresholds
(``best/validation.json``, :mod:`paddle_pfc.evaluation.threshold_record`): each set's threshold
is chosen on its pairs by :mod:`paddle_pfc.evaluation.operating_point` (the middle of the
best-accuracy range, or ``validation.threshold_far``), with the false-reject and false-accept
rates it has on them and their 95 % intervals (over people when a ``.people.json`` beside the set
says who each pair shows, :mod:`paddle_pfc.evaluation.people_bootstrap`; else over pairs assumed
independent), logged when ``best/`` is saved. The accuracy that chose ``best/`` is
selection-biased, and the run's last line says so.
"""
from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np

from paddle_pfc.engine import checkpoint as ckpt
from paddle_pfc.engine.builder import TrainPrograms
from paddle_pfc.engine.callbacks import Callback, MetricsWriter, StepEnd, TrainState, checkpoint_meta
from paddle_pfc.engine.config import Config, resolve_validation_sets
from paddle_pfc.runtime.distributed import all_gather_rows
from paddle_pfc.utils.errors import RunDataError
from paddle_pfc.utils.progress import Progress

log = logging.getLogger("paddle_pfc.train")


class ValidationSetError(RunDataError):
    """A verification set of ``validation.sets`` cannot be used (names the set and file)."""


class ValidationSet(NamedTuple):
    """One verification set: its file, this rank's images, the pairs' labels, the image count,
    the people of its pairs (a :class:`~paddle_pfc.evaluation.pair_people.PairPeople`, or None)."""

    path: str
    images: np.ndarray
    issame: np.ndarray
    total: int
    people: object = None


def load_validation_sets(cfg: Config, output_dir: Path, rank: int, world_size: int,
                         sync: Callable[[str], float]) -> dict[str, ValidationSet]:
    """``{name: ValidationSet}`` of every configured set, opened and checked now (a wrong path or
    a broken file is a :class:`ValidationSetError` naming them)."""
    sets = list(resolve_validation_sets(cfg))
    pairs = cfg.validation.synthetic_pairs
    if pairs:
        from paddle_pfc.data.synthetic import make_verification_set
        from paddle_pfc.evaluation.bin_set import write_bin

        path = output_dir / "synthetic_val.bin"
        if rank == 0 and not path.exists():
            output_dir.mkdir(parents=True, exist_ok=True)
            bins, issame = make_verification_set(max(2, cfg.data.num_classes // 2), pairs,
                                                 cfg.model.input_size, seed=cfg.data.seed)
            write_bin(str(path) + ".tmp", bins, issame)
            Path(str(path) + ".tmp").replace(path)
        sets.append(("synthetic_val", str(path)))
        sync("synthetic verification set written")
    from paddle_pfc.evaluation.pair_people import read_pair_people
    from paddle_pfc.evaluation.validation import load_bin_part

    loaded = {}
    for name, path in sets:
        started = time.perf_counter()
        try:
            images, issame, total = load_bin_part(path, cfg.model.input_size, rank, world_size,
                                                  cfg.data.non_square)
            people = read_pair_people(path, issame)
        except (OSError, ValueError) as exc:
            where = "" if os.path.isabs(path) else f" (read as {os.path.abspath(path)})"
            raise ValidationSetError(f"validation.sets {name!r}{where}: {exc}") from exc
        loaded[name] = ValidationSet(path, images, issame, total, people)
        log.info("verification set %s: %s, %d pairs of %s (%d images on this rank, decoded in %.1f s)",
                 name, path, len(issame), "unnamed people" if people is None else f"{people.count} people",
                 len(images), time.perf_counter() - started)
    return loaded


class Validator(Callback):
    """Validates ``sets`` with ``programs`` (see the module doc) and updates
    ``state.best_accuracy``; ``history``: ``[(global step, {set: accuracy})]`` of the validations
    this run scheduled (``{}`` without sets)."""

    def __init__(self, cfg: Config, programs: TrainPrograms, sets: dict[str, ValidationSet],
                 state: TrainState, metrics: MetricsWriter, output_dir: Path, rank: int, world_size: int,
                 sync: Callable[[str], float]) -> None:
        self.cfg, self.programs, self.sets, self.state, self.metrics = cfg, programs, sets, state, metrics
        self.output_dir, self.rank, self.world_size, self.sync = output_dir, rank, world_size, sync
        self.every = cfg.validation.every_steps
        self.history: list[tuple[int, dict[str, float]]] = []
        self.last_results: dict[str, dict] = {}  # the last validation's numbers per set (best/validation.json)
        self.best_step: int | None = None  # the step whose model best/ holds, when this run wrote it
        self.collapse_advised = False  # what a collapse usually means is said at the first one only
        self._sha256: dict[str, str] = {}  # each set file's hash (names it in best/validation.json)

    def validate_untrained(self) -> None:
        """Validate the model before its first step, for reference (nothing without sets)."""
        if self.sets:
            self.history.append((0, self.validate()))

    def on_step_end(self, step: StepEnd) -> None:
        if step.preempted:  # a validation due now is skipped: the job must stop within train.preempt_grace
            return
        if (self.every and step.state.global_step % self.every == 0) or \
                (step.epoch_end and not self.every) or step.done:
            self.history.append((step.state.global_step, self.validate()))

    def on_train_end(self, state: TrainState) -> None:
        """Rank 0 says where the run's model is: ``best/`` and its step (with the accuracy of the
        model as it started, when this run validated it), or, without a set, the newest
        checkpoint; a ``best/`` still holding the step-0 model (no later validation beat it) is
        said as such."""
        if self.rank != 0:
            return
        checkpoints = self.output_dir / "checkpoints"
        if not self.sets:
            log.info("no validation set (validation.sets: []), so no best/: the trained model is the newest "
                     "checkpoint. Export it: python tools/export.py --checkpoint %s --out MODEL; fine-tune from "
                     "it: --pretrained %s", checkpoints, checkpoints)
        elif self.best_step == 0 and len(self.history) > 1:
            advice = ("the pretrained model scores better on these identities than the fine-tuned one: keep it, "
                      "or fine-tune with a lower train.lr" if self.cfg.model.pretrained else
                      "train longer or on more data")
            log.warning("no validation beat the model as it started (step 0, mean accuracy %.5f): best/ holds "
                        "the UNCHANGED starting model, not a trained one; the trained model is the newest "
                        "checkpoint, %s (%s)", self.state.best_accuracy, checkpoints, advice)
        elif self.best_step is not None:
            start = self.history[0] if self.history and self.history[0][0] == 0 and self.history[0][1] else None
            against = verdict = ""
            if start is not None and self.best_step != 0:
                before = float(np.mean(list(start[1].values())))
                against = f" (the model as it started, step 0: {before:.5f})"
                verdict = (f"; training beat the model as it started by {100 * (self.state.best_accuracy - before):.2f}"
                           " points" if self.state.best_accuracy > before else "")
            log.info("best model: step %d, mean accuracy %.5f on the validation sets%s, in %s%s. That accuracy "
                     "is selection-biased (these pairs chose best/ and its threshold): score people neither "
                     "training nor selection saw with python tools/validate.py --checkpoint %s --bin TEST.bin "
                     "(python tools/pairs.py --test-ids N writes one)", self.best_step, self.state.best_accuracy,
                     against, self.output_dir / "best", verdict, self.output_dir / "best")

    def _share_bn_statistics(self) -> None:
        """Give every rank rank 0's BatchNorm running statistics (what checkpoints and ``best/``
        hold), so every rank's share of a validation is embedded by the same model. Training
        is unaffected: the forward pass in train mode normalises with batch statistics."""
        p = self.programs
        if self.world_size == 1 or not p.bn_stat_names:
            return
        values = [p.read(n) for n in p.bn_stat_names]
        flat = np.concatenate([v.ravel() for v in values]).astype(np.float32)[None]
        self.sync("batch-norm statistics")
        rank0 = all_gather_rows(flat, p.exe, self.world_size)[0]
        offset = 0
        for name, value in zip(p.bn_stat_names, values):
            p.write(name, rank0[offset:offset + value.size].reshape(value.shape).astype(value.dtype))
            offset += value.size

    def validate(self) -> dict[str, float]:
        """Validate every set now (see the module doc); ``{set: accuracy}``. Nothing (and no
        barrier) without sets."""
        if not self.sets:
            return {}
        from paddle_pfc.evaluation.collapse import collapse_note
        from paddle_pfc.evaluation.operating_point import choose_threshold, chosen_error_rates
        from paddle_pfc.evaluation.validation import embed_distinct, embedded_line, evaluate_embeddings, shard_range
        from paddle_pfc.evaluation.verification import pair_cosines

        self._share_bn_statistics()
        dim, world, step = self.cfg.model.embedding_size, self.world_size, self.state.global_step
        results, self.last_results = {}, {}
        for name, (path, images, issame, total, people) in self.sets.items():
            started = time.perf_counter()
            with Progress(f"validate {name} (rank {self.rank}: {len(images):,} of {total:,} pair images)",
                          total=len(images), unit="distinct images", write=log, enabled=self.rank == 0) as progress:
                if len(images):
                    _, both, distinct = embed_distinct(
                        self.programs.embed, images, self.cfg.validation.batch_size, on_batch=progress.update,
                        on_distinct=lambda n: setattr(progress, "total", n))
                else:
                    both, distinct = np.zeros((0, dim), np.float32), 0
            counts = [shard_range(total, r, world) for r in range(world)]
            rows = max(stop - start for start, stop in counts)
            local = np.zeros((rows, 2 * dim), np.float32)
            local[:len(images), :dim], local[:len(images), dim:] = both[:len(images)], both[len(images):]
            self.sync(f"validation {name} embedded")
            gathered = all_gather_rows(local, self.programs.exe, world)
            full = np.concatenate([gathered[r * rows:r * rows + stop - start]
                                   for r, (start, stop) in enumerate(counts)])
            result = evaluate_embeddings(full[:, :dim], full[:, dim:], issame,
                                         nrof_folds=self.cfg.validation.nrof_folds)
            results[name] = result.accuracy
            cosines = pair_cosines(full[:, :dim] + full[:, dim:])
            point = self._operating_point(choose_threshold, cosines, issame)
            rates = chosen_error_rates(cosines, issame, point.threshold, people, point.far)
            self.last_results[name] = {"path": os.path.abspath(path), "num_pairs": result.num_pairs,
                                       "accuracy": result.accuracy, **point.record(),
                                       "fold_threshold": result.cosine_threshold, "sha256": self._hash(path),
                                       "error_rates": rates.as_dict(), "error_rates_line": rates.line(),
                                       "interval_basis": rates.basis()}
            log.info("[%s][%d] accuracy %.5f +- %.5f  threshold %.3f (cosine)  xnorm %.3f  (%.1f s on %d ranks; "
                     "rank %d %s)", name, step, result.accuracy, result.accuracy_std, point.threshold,
                     result.xnorm, time.perf_counter() - started, world, self.rank,
                     embedded_line(distinct, len(images)))
            self.metrics.add(step, **{f"val/{name}": result.accuracy})
            note = collapse_note(full[:, :dim] + full[:, dim:], result.accuracy, advice=not self.collapse_advised)
            if note and self.rank == 0:
                log.warning("[%s][%d] %s", name, step, note)
            self.collapse_advised |= note is not None
        mean = float(np.mean(list(results.values())))
        if mean > self.state.best_accuracy:
            self.state.best_accuracy = mean
            self.best_step = step
            if self.rank == 0:
                self._save_best(results)
        self.sync(f"validation {step} done")
        return results

    def _operating_point(self, choose, cosines: np.ndarray, issame: np.ndarray):
        """The set's threshold by ``validation.threshold_far`` (the middle rule on a set without
        impostor pairs)."""
        far = self.cfg.validation.threshold_far
        return choose(cosines, issame, far if far is not None and not np.all(issame) else None)

    def _hash(self, path: str) -> str | None:
        """SHA-256 of a set's file, on rank 0 (once per file)."""
        if self.rank != 0:
            return None
        if path not in self._sha256:
            from paddle_pfc.evaluation.threshold_record import file_sha256

            self._sha256[path] = file_sha256(path)
        return self._sha256[path]

    def _save_best(self, results: dict[str, float]) -> None:
        best = self.output_dir / "best"
        best.mkdir(parents=True, exist_ok=True)
        files = ckpt.write_backbone(best, self.programs)
        for stale in (ckpt.LEGACY_BACKBONE_FILE,):  # an earlier version's best/ in the same folder
            (best / stale).unlink(missing_ok=True)
        ckpt.write_meta(best, dict(checkpoint_meta(self.cfg, self.state), accuracy=results), self.world_size,
                        num_heads=len(self.programs.heads), files=files)
        from paddle_pfc.evaluation.threshold_record import write_record

        written = write_record(best, self.last_results)
        name, first = next(iter(self.last_results.items()))
        log.info("best model (mean accuracy %.5f) saved to %s; threshold %.3f (cosine, %s: %s) in %s",
                 self.state.best_accuracy, best, first["threshold"], name, first["rule_text"], written)
        log.info("best/ threshold %.3f on %s's pairs, which chose it (selection-biased): %s; %s", first["threshold"],
                 name, first["error_rates_line"], first["interval_basis"])
        if first["error_rates"]["interval_warning"]:
            log.warning("best/ threshold's intervals: %s", first["error_rates"]["interval_warning"])
        if first["warning"]:
            log.warning("best/ threshold: %s", first["warning"])
