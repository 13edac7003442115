"""Collective face-recognition training: backbone -> LargeScaleClassifier -> minimize, per rank.

One static program per rank (:mod:`~paddle_pfc.engine.builder`); every rank runs the same steps
on its own part of the data. :class:`Trainer` is the loop: data -> step -> callbacks
(:mod:`~paddle_pfc.engine.callbacks`: logging and metrics, checkpoints;
:mod:`~paddle_pfc.engine.validator`: validation and ``best/``), plus resuming and counting
non-finite steps. The global step and the data position are pure functions of (seed, epoch,
step), and the random ops of step k are re-seeded from (seed, k, rank), so a resumed run repeats
an uninterrupted one.
"""
from __future__ import annotations

import logging
import math
import sys
import time
from pathlib import Path

import numpy as np
import paddle

from paddle_pfc.data.formats import data_format
from paddle_pfc.engine import checkpoint as ckpt
from paddle_pfc.engine.builder import TrainPrograms, build_programs, check_supported
from paddle_pfc.engine.callbacks import Callback, Checkpointing, MetricsWriter, StepEnd, StepLogger, TrainState
from paddle_pfc.engine.config import Config, describe_lr, dump_config, log_interval, resolve_lr
from paddle_pfc.engine.input import dataset_from_config, loader_from_config
from paddle_pfc.engine.memory import check_head_fits, training_head_spec
from paddle_pfc.engine.overwrite import OutputDirError, delete_earlier_run
from paddle_pfc.engine.preemption import Preempted, PreemptionWatch
from paddle_pfc.engine.resume import ResumePlan, plan_resume
from paddle_pfc.engine.validator import Validator, load_validation_sets
from paddle_pfc.head.registry import NONFINITE_PARTS
from paddle_pfc.head.runner import run
from paddle_pfc.runtime.barrier import StoreBarrier
from paddle_pfc.utils.errors import PfcError, UsageError
from paddle_pfc.utils.launch_env import local_world_size
from paddle_pfc.utils.paddle_compat import on_gpu

__all__ = ["Trainer", "setup_logging", "OutputDirError", "NonFiniteTrainingError"]

log = logging.getLogger("paddle_pfc.train")


def optimizer_steps_per_epoch(batches: int, accumulate_steps: int, images: int, per_batch: int) -> int:
    """Optimizer steps of an epoch of ``batches`` global batches of ``per_batch`` images:
    ``batches // accumulate_steps`` (a tail of fewer micro-batches is dropped); :class:`UsageError`
    when not one step fits in the ``images``."""
    steps = batches // accumulate_steps
    if steps == 0:
        raise UsageError(f"train.accumulate_steps {accumulate_steps} x {per_batch} images a micro-batch (all ranks) "
                         f"= {accumulate_steps * per_batch} images a step, more than the {images} images of the data: "
                         "lower train.accumulate_steps or train.batch_size")
    return steps


class NonFiniteTrainingError(PfcError, FloatingPointError):
    """``train.max_bad_steps`` consecutive steps were skipped as non-finite."""


def setup_logging(output_dir: Path, rank: int) -> None:
    """Rank 0 logs to stdout and ``output_dir/train.log``; other ranks log warnings only."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stdout)]
    if rank == 0:
        output_dir.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(output_dir / "train.log"))
    logging.basicConfig(level=logging.INFO if rank == 0 else logging.WARNING, force=True,
                        format="%(asctime)s %(message)s", datefmt="%H:%M:%S", handlers=handlers)


class Trainer:
    """Trains one rank from a validated :class:`~paddle_pfc.engine.config.Config`."""

    def __init__(self, cfg: Config, rank: int, world_size: int, preemption: PreemptionWatch | None = None) -> None:
        """Checks the output folder (resume / overwrite), indexes the data, opens and checks every
        verification set, builds and initialises the programs — everything that can fail on bad
        input fails here, before the first step. Ranks meet at a barrier after every phase in
        which they may diverge (see :meth:`sync`). From here on (or from ``preemption``'s
        :meth:`~paddle_pfc.engine.preemption.PreemptionWatch.install`, when one is given) SIGTERM
        stops the job in order (:mod:`~paddle_pfc.engine.preemption`, :meth:`train`)."""
        check_supported(cfg)
        self.cfg, self.rank, self.world_size = cfg, rank, world_size
        self.state = TrainState()
        self.preemption = preemption or PreemptionWatch(rank, world_size, cfg.train.preempt_grace)
        self.preemption.describe = lambda: f"at global step {self.state.global_step}"
        self.preemption.install()
        self.output_dir = Path(cfg.train.output_dir)
        self._barrier = StoreBarrier(rank, world_size, cfg.train.collective_timeout)
        self._frozen: dict[str, np.ndarray] | None = None  # backbone kept during the frozen steps
        self._resumed = False
        self.plan = self._plan_start()
        self.resume_path = str(self.plan.checkpoint) if self.plan.checkpoint else None
        self._build_data()
        cfg = self.cfg  # data.num_classes from the data when the config leaves it null
        if not on_gpu():  # the centers live in host memory: a shard that cannot fit fails now, not at SIGKILL
            check_head_fits(training_head_spec(cfg, world_size), local_world_size(), warn=rank == 0)
        self.sync("data indexed")
        validation_sets = load_validation_sets(cfg, self.output_dir, rank, world_size, self.sync)
        self.base_lr = resolve_lr(cfg, world_size)
        self.programs: TrainPrograms = build_programs(cfg, rank, world_size, self.base_lr, self.steps_per_epoch,
                                                      self.sync, centers_written=self._centers_written())
        self.preemption.checkpoint_bytes = ckpt.shard_bytes(self.programs.heads)  # for an auto grace
        self.metrics = MetricsWriter(self.output_dir, rank == 0, self.plan.step if self.resume_path else -1)
        writer = ckpt.CheckpointWriter(self.output_dir / "checkpoints", rank, world_size,
                                       keep=cfg.train.keep_checkpoints,
                                       wait_timeout=cfg.train.collective_timeout)
        self.validator = Validator(cfg, self.programs, validation_sets, self.state, self.metrics,
                                   self.output_dir, rank, world_size, self.sync)
        self._logger = StepLogger(cfg, world_size, self.total_steps, self.metrics, rank)
        self._logger.every = log_interval(cfg.train.log_every, self.steps_per_epoch)
        self._checkpointing = Checkpointing(cfg, self.programs, writer, self.sync)
        self.callbacks: list[Callback] = [self._logger, self.validator, self._checkpointing]

    def sync(self, phase: str) -> float:
        """Barrier of every rank after ``phase`` (on the TCP store, ``train.collective_timeout``),
        so no rank waits inside a gloo collective (30 s limit) while another works alone."""
        return self._barrier.wait(phase)

    # ----------------------------------------------------------------------------- set-up
    def _plan_start(self) -> ResumePlan:
        """The run's :class:`~paddle_pfc.engine.resume.ResumePlan` (:func:`~paddle_pfc.engine.resume.plan_resume`:
        the ranks agree on it), carried out: what ``resume auto`` skipped is logged, and a fresh
        run with ``train.overwrite`` deletes the earlier run (rank 0, between two barriers)."""
        started = time.monotonic()
        plan = plan_resume(self.cfg, self.rank, self.world_size, self._barrier.exchange)
        if self.cfg.train.resume == "auto":
            self._log_auto_resume(plan, time.monotonic() - started)
        if plan.delete:
            self.sync("output folder checked")
            if self.rank == 0:
                removed = delete_earlier_run(list(plan.delete))
                log.warning("train.overwrite: deleted %d checkpoints and the best model of an earlier run "
                            "in %s", removed, self.output_dir)
            self.sync("old checkpoints deleted")
        return plan

    def _log_auto_resume(self, plan: ResumePlan, seconds: float) -> None:
        """``resume auto``'s lines: the checkpoints skipped and why, the one taken, or a fresh start."""
        newest = plan.checkpoint
        if self.rank == 0:
            for folder, reason in plan.unreadable:
                log.warning("resume auto: skipped %s, whose meta.json cannot be read (%s); the run "
                            "replaces it if it saves that step again: copy it away to keep it", folder, reason)
            if newest is not None:
                log.info("resume auto: every file of %s checked in %.1f s%s", newest, seconds,
                         f" (each by one of the {self.world_size} ranks)" if self.world_size > 1 else "")
            for folder, reason in plan.damaged:
                log.warning("resume auto: skipped damaged checkpoint %s (%s); resuming from %s", folder.name,
                            reason, newest.name if newest is not None else "nothing: starting fresh")
        if newest is None:
            log.info("resume auto: no complete checkpoint in %s, starting fresh", self.output_dir / "checkpoints")
            if self.rank == 0 and (self.output_dir / "best").exists():
                log.warning("resume auto: %s is an earlier run's best model; this run replaces it at "
                            "its first validation", self.output_dir / "best")

    def _centers_written(self) -> bool:
        """Whether every class center is written before the first step: by the checkpoint resumed
        from, or by ``classifier.center_init: mean_embedding`` (then no random centers are drawn)."""
        return self.resume_path is not None or (self.cfg.classifier.center_init == "mean_embedding"
                                                and self.cfg.model.pretrained is not None)

    def _build_data(self) -> None:
        d, t = self.cfg.data, self.cfg.train
        size = self.cfg.model.input_size
        if d.num_classes is None and data_format(d.kind).classes_from is None:
            raise UsageError(f"data.num_classes: null reads the count from the data, but {d.kind} data has none: "
                             "give it (e.g. -o data.num_classes=300)")
        self.dataset = dataset_from_config(d, size)
        if d.num_classes is None:
            import dataclasses

            self.cfg = dataclasses.replace(self.cfg, data=dataclasses.replace(d, num_classes=self.dataset.num_classes))
            if self.rank == 0:
                log.info("data.num_classes: %d, from the data (%s)", self.dataset.num_classes, d.root)
        self.loader = loader_from_config(d, self.dataset, t.batch_size, self.rank, self.world_size, size)
        if self.rank == 0:
            self._note_resized_images(size)
        self.steps_per_epoch = optimizer_steps_per_epoch(self.loader.steps_per_epoch, t.accumulate_steps, len(
            self.dataset), t.batch_size * self.world_size)
        self.num_skipped = self.dataset.num_skipped
        self.total_steps = t.epochs * self.steps_per_epoch
        if t.max_steps is not None:
            self.total_steps = min(self.total_steps, t.max_steps)

    def _note_resized_images(self, size: int) -> None:
        """One line when the data's first image is grey or not ``model.input_size`` square: every
        image is converted by the one policy, ``data.non_square`` (:mod:`paddle_pfc.data.photos`)."""
        if not data_format(self.cfg.data.kind).under_root:
            return  # generated images (synthetic faces) are drawn at the input size
        from paddle_pfc.data.photos import describe, is_square, policy

        wanted, self.dataset.image_size = self.dataset.image_size, None
        try:
            image = self.dataset[0][0]
        finally:
            self.dataset.image_size = wanted
        non_square = self.dataset.non_square
        first = describe(image, (size, size), non_square)
        if first is not None:
            log.warning("data: the first image is %s; every image is converted for model.input_size %dx%d "
                        "(%s)", first, size, size,
                        policy(not is_square(image), image.shape[:2] != (size, size), non_square))

    def resume(self, path: str) -> None:
        """Load the checkpoint at ``path`` (strict: see :mod:`~paddle_pfc.engine.checkpoint`) and
        continue from its step and data position (the next epoch's start after an epoch's end).

        ``global_step`` counts the optimizer steps taken. With another global batch (ranks ×
        ``train.batch_size`` × ``train.accumulate_steps``) than the checkpoint's, the epoch's
        position is carried over in samples (each epoch's order is the same global permutation
        for any batch): the run goes on at the first new step not yet fully seen, so fewer than
        one new global batch of samples is seen twice (a warning says how many), none skipped; the
        learning rate's schedule is set to that position in the epochs and the run ends with its
        last epoch."""
        self._resumed = True
        m, t, s, schedule = self.cfg.model, self.cfg.train, self.state, self.programs.schedule
        started = time.monotonic()
        meta = ckpt.load_checkpoint(path, self.programs, expect={"num_classes": self.cfg.data.num_classes,
                                                                 "embedding_size": m.embedding_size,
                                                                 "backbone": m.backbone},
                                    verify=path != self.resume_path)  # verified when it was chosen
        log.info("checkpoint %s loaded in %.1f s", path, time.monotonic() - started)
        s.epoch, s.step_in_epoch = meta["epoch"], meta["step_in_epoch"]
        s.global_step, s.best_accuracy = meta["global_step"], meta.get("best_accuracy", -1.0)
        s.input_normalization = meta.get("input_normalization")
        if meta["world_size"] != self.world_size:
            log.info("resharded checkpoint from %d to %d ranks", meta["world_size"], self.world_size)
        saved_train = meta.get("config", {}).get("train", {})
        saved_batch = saved_train.get("batch_size")
        new_global = t.batch_size * self.world_size * t.accumulate_steps
        saved_global = None if saved_batch is None else \
            saved_batch * meta["world_size"] * saved_train.get("accumulate_steps", 1)
        if saved_global is not None and saved_global != new_global:
            seen = s.step_in_epoch * saved_global
            s.step_in_epoch = seen // new_global
            if self.rank == 0:
                log.warning("global batch %d (checkpoint) -> %d: epoch %d goes on at step %d of %d (%d "
                            "of its samples seen)%s", saved_global, new_global, s.epoch,
                            s.step_in_epoch, self.steps_per_epoch, seen,
                            f"; {seen % new_global} of them are seen again" if seen % new_global else "")
        if s.step_in_epoch >= self.steps_per_epoch:
            s.epoch, s.step_in_epoch = s.epoch + 1, 0
        position = s.epoch * self.steps_per_epoch + s.step_in_epoch  # = global_step unless the batch changed
        remaining = max(0, t.epochs * self.steps_per_epoch - position)
        self.total_steps = s.global_step + remaining
        if t.max_steps is not None:
            self.total_steps = min(self.total_steps, t.max_steps)
        self._logger.total_steps = self.total_steps
        schedule.last_epoch = position
        schedule.last_lr = schedule.get_lr()
        if self.rank == 0:
            self._note_schedule_change(meta.get("config", {}).get("train", {}), meta["world_size"], position)
        log.info("resumed from %s at epoch %d step %d (global step %d)", path, s.epoch, s.step_in_epoch,
                 s.global_step)

    def _note_schedule_change(self, saved: dict, saved_world_size: int, position: int) -> None:
        """A warning when the resumed run's length or rate differs from the checkpoint's run: the
        learning-rate schedule is recomputed for the new run, so its rate at this step changes."""
        from paddle_pfc.engine.lr import build_schedule

        t = self.cfg.train
        changed = [f"train.{key} {saved[key]} -> {getattr(t, key)}" for key in ("epochs", "lr", "warmup_epochs")
                   if key in saved and saved[key] != getattr(t, key)]
        if not changed:
            return
        now = self.programs.schedule.lr_at(position)
        message = (f"resumed with {', '.join(changed)}: the learning-rate schedule is recomputed for the new "
                   f"run ({t.epochs} epochs, {self.total_steps} steps); at this step the rate is {now:.4g}")
        try:
            old_cfg = Config.from_validated({**self.cfg.to_dict(), "train": {**self.cfg.to_dict()["train"], **saved}})
            before = build_schedule(old_cfg.train, resolve_lr(old_cfg, saved_world_size), self.steps_per_epoch)
            message += f" (the checkpoint's run: {before.lr_at(position):.4g})"
        except Exception:  # an older checkpoint's config: the comparison is left out
            pass
        log.warning("%s; keep train.epochs to continue the same schedule", message)

    # ----------------------------------------------------------------------------- one step
    def _keep_backbone_frozen(self, before_step: bool) -> None:
        """``train.freeze_backbone_steps``: the backbone's parameters, BatchNorm statistics and
        optimizer state are snapshotted before the first frozen step and written back after each
        one, so only the head learns and the backbone is bit-identical when the freeze ends (a
        resume inside the freeze reloads that same backbone)."""
        if self.state.global_step >= self.cfg.train.freeze_backbone_steps:
            self._frozen = None
            return
        p = self.programs
        names = list(p.backbone_names.values()) + [
            n for n in p.state_names if not n.startswith(ckpt.OPTIONAL_STATE_PREFIX)]
        if before_step:
            if self._frozen is None:
                self._frozen = {n: p.read(n) for n in names}
        else:
            for n in names:
                p.write(n, self._frozen[n])

    def _step(self, batches: list[tuple[np.ndarray, np.ndarray]]) -> float:
        """One optimizer step on this rank's ``batches`` (``train.accumulate_steps`` micro-batches
        of images and labels, one program run each); returns the global loss (the mean over the
        step's samples of every rank).

        A step whose loss or any gradient is inf/NaN on any rank (in any of its micro-batches)
        changes nothing (the program skips every update; the BatchNorm statistics its forward
        passes moved are restored here) and is counted and logged as one skipped step;
        ``train.max_bad_steps`` such steps in a row stop training with :class:`NonFiniteTrainingError`.
        The step counter and data position move on either way.
        """
        p, s = self.programs, self.state
        # Random ops of this step (sampling, dropout) depend on (seed, global step, rank) only; each
        # micro-batch starts from the same draws, so every one keeps the same sampled centers.
        seed = (self.cfg.train.seed * 1_000_003 + s.global_step * 4099 + self.rank) % (2**31 - 1)
        self._keep_backbone_frozen(before_step=True)
        bn_before = [p.read(n) for n in p.bn_stat_names]
        step_labels = np.concatenate([labels for _, labels in batches])
        for micro, (images, labels) in enumerate(batches):
            paddle.seed(seed)
            feed = dict(zip(p.feed_names, (images, labels, step_labels, np.array([micro], np.int64))))
            loss, flags = run(p.exe, p.main, feed=feed, fetch_list=[p.loss, p.nonfinite])
        self._keep_backbone_frozen(before_step=False)
        loss = float(np.ravel(loss)[0])
        bad = [part for part, flag in zip(NONFINITE_PARTS, np.ravel(flags)) if flag > 0]
        if bad:
            for name, value in zip(p.bn_stat_names, bn_before):
                p.write(name, value)
            self._count_bad_step(loss, bad)
        elif not math.isfinite(loss):  # cannot happen: the loss is part of the check
            raise FloatingPointError(f"loss is {loss} at step {s.global_step} but the step was applied")
        else:
            s.bad_steps = s.skipped_in_row = 0
        p.schedule.step()
        s.global_step += 1
        s.step_in_epoch += 1
        return loss

    def _count_bad_step(self, loss: float, bad: list[str]) -> None:
        """Log a skipped step; stop after ``train.max_bad_steps`` in a row. With loss scaling a
        gradient overflow is how the scale finds its level: it counts only at the scale's floor
        (or with a non-finite loss), and the log line and the error say how many of the skipped
        steps in a row counted."""
        s, scaling = self.state, self.programs.loss_scaling
        s.skipped_steps += 1
        s.skipped_in_row += 1
        scale = float(self.programs.read("loss_scaling@scale")[0]) if scaling else None
        counts = not scaling or "loss" in bad or scale <= 1.0
        s.bad_steps = s.bad_steps + 1 if counts else 0
        what = ", ".join(bad)
        limit = self.cfg.train.max_bad_steps
        counted = f" ({s.bad_steps} of them counted by train.max_bad_steps={limit})" if scaling else ""
        if self.rank == 0:
            log.warning("step %d skipped (nothing updated): inf/NaN in %s (loss %s)%s; %d skipped in a row%s, %d in "
                        "this run", s.global_step + 1, what, loss,
                        f", loss scale now {scale:g}" if scale is not None else "", s.skipped_in_row, counted,
                        s.skipped_steps)
        if s.bad_steps >= limit:
            how_many = f"{s.bad_steps} consecutive steps skipped (train.max_bad_steps={limit})"
            if s.skipped_in_row != s.bad_steps:
                how_many = (f"{s.skipped_in_row} consecutive steps skipped, the last {s.bad_steps} with the loss scale "
                            f"at its floor of 1 or a non-finite loss (train.max_bad_steps={limit} counts only those: "
                            "an overflow above the floor halves the scale)")
            raise NonFiniteTrainingError(
                f"step {s.global_step + 1}: {how_many}, the last with inf/NaN in: {what}; nothing was updated by them "
                "and the last checkpoint is intact. Lower train.lr, check the data, or raise train.max_bad_steps")

    # ----------------------------------------------------------------------------- the loop
    def train(self) -> dict:
        """Run until ``train.epochs`` (or ``train.max_steps``); returns ``{"loss": [global loss of
        each step], "val": [(step, {set: accuracy})]}`` of this run.

        SIGTERM (from here or from the set-up in ``__init__``) stops every rank after one common
        step, at most the step under way and one more, which is checkpointed (a validation due
        then is skipped); then :class:`~paddle_pfc.engine.preemption.Preempted` is raised. A
        request before the first step stops before it, with nothing new to save."""
        t, s = self.cfg.train, self.state
        if self.rank == 0:
            dump_config(self.cfg, self.output_dir / "config.yaml")
            log.info("config: every key of this run in %s", self.output_dir / "config.yaml")
            log.info("world_size %d, %d images, %d steps/epoch, %d steps, global batch %d%s, %s",
                     self.world_size, len(self.dataset), self.steps_per_epoch, self.total_steps,
                     t.batch_size * self.world_size * t.accumulate_steps,
                     f" ({t.accumulate_steps} micro-batches of {t.batch_size} a rank)" if t.accumulate_steps > 1
                     else "", describe_lr(self.cfg, self.world_size))
            if self._logger.every != t.log_every:
                log.info("logging every %d steps (train.log_every %d is longer than a quarter of the %d-step "
                         "epoch)", self._logger.every, t.log_every, self.steps_per_epoch)
        if self.resume_path and not self._resumed:
            self.resume(self.resume_path)
        if self.rank == 0 and s.global_step >= self.total_steps:
            log.warning("nothing to train: the run is at global step %d, its end (train.epochs %d, train.max_steps "
                        "%s) is step %d", s.global_step, t.epochs, t.max_steps, self.total_steps)
        elif self.rank == 0 and t.freeze_backbone_steps >= self.total_steps:
            log.warning("train.freeze_backbone_steps %d >= the run's %d steps: the backbone stays frozen for the "
                        "whole run", t.freeze_backbone_steps, self.total_steps)
        try:
            result = self._train_steps()
        except Preempted:
            self.preemption.finished()  # the handler stays: the launcher's repeated SIGTERMs must not kill the exit
            raise
        self.preemption.uninstall()
        return result

    def _preempted(self, saved: bool) -> Preempted:
        """The :class:`Preempted` of this rank at the current step: the checkpoint written now
        (``saved``), else the one resumed from."""
        path = self._checkpointing.last_path if saved else self.resume_path
        return Preempted(self.state.global_step, str(path) if path else None, saved,
                         self.preemption.seconds_since_request())

    def _train_steps(self) -> dict:
        """The steps from the current one to the run's end (or a preemption's stop); see :meth:`train`."""
        losses: list[float] = []
        try:
            self._begin_steps()
            preempted = False
            while self.state.global_step < self.total_steps and self.state.epoch < self.cfg.train.epochs \
                    and not preempted:
                preempted = self._train_epoch(losses)
            if preempted:
                raise self._preempted(saved=True)
            for callback in self.callbacks:
                callback.on_train_end(self.state)
        finally:
            self.loader.close()
            self.metrics.close()
        return {"loss": losses, "val": self.validator.history}

    def _begin_steps(self) -> None:
        """Before the first step: a stop requested already, the pretrained backbone (at step 0),
        the untrained validation and the callbacks' ``on_train_begin``."""
        s = self.state
        if self.preemption.stops_before(s.global_step, lambda: self.sync("training starts")):
            raise self._preempted(saved=False)
        if s.global_step == 0 and self.cfg.model.pretrained:
            from paddle_pfc.engine.pretrained import init_from_pretrained

            self.state.input_normalization = init_from_pretrained(self.cfg, self.programs, self.dataset, self.rank)
            self.sync("pretrained backbone loaded")  # center init takes each rank its own time
        if s.global_step == 0:
            self.validator.validate_untrained()
        for callback in self.callbacks:
            callback.on_train_begin(s)

    def _train_epoch(self, losses: list[float]) -> bool:
        """The rest of the current epoch (each step's loss appended to ``losses``), up to the run's
        end or a preemption's stop; whether the run was preempted."""
        s, preemption = self.state, self.preemption
        if self.num_skipped and self.rank == 0:
            log.warning("epoch %d: %d images skipped by data.skip_bad (listed at start-up)", s.epoch, self.num_skipped)
        preempted = False
        for batches in self._epoch_steps():
            preemption.propose(s.global_step + 1)
            lr = self.programs.schedule()
            started = time.monotonic()
            losses.append(self._step(batches))
            preemption.step_seconds = time.monotonic() - started
            stop = preemption.stop_step(s.global_step)
            done = s.global_step >= self.total_steps
            preempted = stop is not None and s.global_step >= stop and not done
            step = StepEnd(s, losses[-1], lr, epoch_end=s.step_in_epoch >= self.steps_per_epoch,
                           done=done, preempted=preempted)
            for callback in self.callbacks:
                callback.on_step_end(step)
            if step.done or preempted:
                break
        if s.step_in_epoch >= self.steps_per_epoch and not preempted:
            s.epoch, s.step_in_epoch = s.epoch + 1, 0
        return preempted

    def _epoch_steps(self):
        """The current epoch's remaining optimizer steps, each a list of ``train.accumulate_steps``
        micro-batches ``(images, labels)`` in the loader's order; the micro-batches of an epoch's
        tail that do not fill a step are not read (dropped, as the loader drops a partial batch)."""
        k, s = self.cfg.train.accumulate_steps, self.state
        batches = []
        for batch in self.loader.epoch(s.epoch, s.step_in_epoch * k):
            batches.append(batch)
            if len(batches) == k:
                yield batches
                batches = []
                if s.step_in_epoch >= self.steps_per_epoch:
                    return
