"""What the training loop does around its steps: the loop's state, and the callbacks it calls.

The loop (:class:`~paddle_pfc.engine.trainer.Trainer`) owns a :class:`TrainState` and calls,
on every rank and in the same order (callbacks may meet at barriers):
``on_train_begin(state)`` once before the first step, ``on_step_end(step)`` after every step
(:class:`StepEnd`), ``on_train_end(state)`` after the last step (not after an error).

Callbacks here: :class:`StepLogger` (the step log line and the scalars of :class:`MetricsWriter`)
and :class:`Checkpointing` (periodic, epoch-end and final checkpoints); validation with
best-model saving is :class:`paddle_pfc.engine.validator.Validator`.
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from paddle_pfc.engine import checkpoint as ckpt
from paddle_pfc.engine.config import Config
from paddle_pfc.utils.atomic import write_text_atomic

log = logging.getLogger("paddle_pfc.train")


@dataclass
class TrainState:
    """Where training stands: ``global_step`` steps done, the data position (``epoch``,
    ``step_in_epoch``), the best mean validation accuracy (-1: none yet) and the non-finite step
    counts (``skipped_in_row``: skipped steps in a row; ``bad_steps``: the last of them that count
    against ``train.max_bad_steps``, all of them without loss scaling; ``skipped_steps``: in this
    run)."""

    epoch: int = 0
    step_in_epoch: int = 0
    global_step: int = 0
    best_accuracy: float = -1.0
    bad_steps: int = 0
    skipped_steps: int = 0
    skipped_in_row: int = 0
    #: the input normalization of the model fine-tuning started from, when not (x - 127.5) / 128
    input_normalization: dict | None = None


@dataclass(frozen=True)
class StepEnd:
    """One finished step: the state after it, its global loss and learning rate; ``epoch_end``:
    the epoch's last step; ``done``: the run's last step; ``preempted``: the step every rank stops
    after on SIGTERM (:mod:`~paddle_pfc.engine.preemption`): it is logged and checkpointed, and
    nothing slow (validation) runs."""

    state: TrainState
    loss: float
    lr: float
    epoch_end: bool
    done: bool
    preempted: bool = False


class Callback:
    """Hooks of the training loop (see the module doc); every hook does nothing by default."""

    def on_train_begin(self, state: TrainState) -> None:
        pass

    def on_step_end(self, step: StepEnd) -> None:
        pass

    def on_train_end(self, state: TrainState) -> None:
        pass


def checkpoint_meta(cfg: Config, state: TrainState) -> dict:
    """The ``meta.json`` fields of a checkpoint (or ``best/``) of ``state``."""
    return {"global_step": state.global_step, "epoch": state.epoch, "step_in_epoch": state.step_in_epoch,
            "num_classes": cfg.data.num_classes, "embedding_size": cfg.model.embedding_size,
            "backbone": cfg.model.backbone, "best_accuracy": state.best_accuracy,
            "config": cfg.to_dict(), **({"input_normalization": state.input_normalization}
                                        if state.input_normalization else {})}


class MetricsWriter:
    """Scalars to ``metrics.jsonl`` and, when VisualDL is installed, to ``output_dir/vdl`` (rank 0).

    ``metrics.jsonl`` holds this run's history: when it is opened, the lines of steps after
    ``start_step`` (the step it resumes from; -1 for a fresh run: all) are dropped — an earlier
    run's, or the part of this run that a crash lost and the resumed run repeats."""

    def __init__(self, output_dir: Path, enabled: bool, start_step: int = -1) -> None:
        self.enabled, self._vdl = enabled, None
        if not enabled:
            return
        output_dir.mkdir(parents=True, exist_ok=True)
        path = output_dir / "metrics.jsonl"
        if path.exists():
            _keep_metrics_until(path, start_step)
        self._file = open(path, "a", buffering=1)
        try:
            from visualdl import LogWriter
            self._vdl = LogWriter(logdir=str(output_dir / "vdl"))
        except ImportError:
            log.warning("visualdl is not installed: scalars go to metrics.jsonl only")

    def add(self, step: int, **scalars: float) -> None:
        if not self.enabled:
            return
        self._file.write(json.dumps({"step": step, **scalars}) + "\n")
        if self._vdl is not None:
            for tag, value in scalars.items():
                self._vdl.add_scalar(tag=tag, value=float(value), step=step)

    def close(self) -> None:
        if self.enabled:
            self._file.close()
            if self._vdl is not None:
                self._vdl.close()


def _keep_metrics_until(path: Path, step: int) -> None:
    """Rewrite ``path`` (JSON lines with a ``step``) keeping the lines of steps <= ``step``."""
    kept, dropped = [], 0
    for line in path.read_text().splitlines():
        try:
            keep = int(json.loads(line)["step"]) <= step
        except (ValueError, KeyError, TypeError):  # a line cut short by a crash
            keep = False
        if keep:
            kept.append(line)
        else:
            dropped += 1
    if dropped:
        write_text_atomic(path, "".join(f"{line}\n" for line in kept))
        log.warning("%s: dropped %d lines of %s (an earlier run's, or repeated by this one)", path, dropped,
                    f"steps after {step}" if step >= 0 else "every step")


class StepLogger(Callback):
    """Every ``train.log_every`` steps and at the last: the step line (loss, lr, global samples/s
    over the steps since the last line, eta) and its scalars; at the end the run's summary."""

    def __init__(self, cfg: Config, world_size: int, total_steps: int, metrics: MetricsWriter,
                 rank: int) -> None:
        self.every, self.total_steps, self.metrics, self.rank = cfg.train.log_every, total_steps, metrics, rank
        self.samples_per_step = cfg.train.batch_size * world_size * cfg.train.accumulate_steps
        self.started = self.window_start = 0.0
        self.steps = self.window_steps = 0

    def on_train_begin(self, state: TrainState) -> None:
        self.started = self.window_start = time.perf_counter()
        self.steps = self.window_steps = 0

    def on_step_end(self, step: StepEnd) -> None:
        self.steps += 1
        self.window_steps += 1
        s = step.state
        if s.global_step % self.every == 0 or step.done or step.preempted:
            now = time.perf_counter()
            speed = self.window_steps * self.samples_per_step / (now - self.window_start)
            eta = (self.total_steps - s.global_step) * (now - self.started) / self.steps
            log.info("step %d/%d epoch %d loss %.4f lr %.5f %.1f samples/s eta %s", s.global_step,
                     self.total_steps, s.epoch, step.loss, step.lr, speed,
                     time.strftime("%H:%M:%S", time.gmtime(eta)))
            self.metrics.add(s.global_step, loss=step.loss, lr=step.lr, samples_per_second=speed)
            self.window_start, self.window_steps = now, 0

    def on_train_end(self, state: TrainState) -> None:
        if self.rank == 0:
            log.info("finished: %d steps in %.1f s (%d skipped as non-finite)", self.steps,
                     time.perf_counter() - self.started, state.skipped_steps)


class Checkpointing(Callback):
    """A checkpoint every ``train.checkpoint_every_steps`` steps (0: none), at each epoch's end, at
    the last step and at the step of a preemption: every rank writes its part of ``target``, then
    all meet. ``last_path``: the folder of the last checkpoint written (rank 0; None elsewhere)."""

    def __init__(self, cfg: Config, target: ckpt.CheckpointTarget, writer: ckpt.CheckpointWriter,
                 sync: Callable[[str], float]) -> None:
        self.cfg, self.target, self.writer, self.sync = cfg, target, writer, sync
        self.every = cfg.train.checkpoint_every_steps
        self.last_path: Path | None = None

    def on_step_end(self, step: StepEnd) -> None:
        if (self.every and step.state.global_step % self.every == 0) or step.epoch_end or step.done \
                or step.preempted:
            self.save(step.state)

    def save(self, state: TrainState) -> None:
        """Write the checkpoint of ``state`` (nothing non-finite is ever written)."""
        started = time.monotonic()
        path = self.writer.save(self.target, checkpoint_meta(self.cfg, state))
        if path is not None:
            size = sum(record["bytes"] for record in ckpt.read_meta(path)["files"].values())
            seconds = time.monotonic() - started
            log.info("checkpoint %s: %.2f GB written in %.1f s (%.0f MB/s)", path, size / 1e9, seconds,
                     size / 1e6 / max(seconds, 1e-6))
            self.last_path = path
        self.sync(f"checkpoint {state.global_step} written")
