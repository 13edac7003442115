"""How a training run starts: :class:`ResumePlan` (what it loads, from where, at which step, and
why), made by :func:`plan_resume` from the config and the files of ``train.output_dir``.

:func:`plan_resume` logs, deletes and waits for nothing; it raises what refuses the run. The
trainer carries the plan out (:meth:`paddle_pfc.engine.trainer.Trainer`): it logs what the plan
skipped, deletes what it lists and loads what it names.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from paddle_pfc.data.formats import data_format
from paddle_pfc.engine import checkpoint as ckpt
from paddle_pfc.engine.checkpoint.folders import Exchange
from paddle_pfc.engine.config import Config
from paddle_pfc.engine.overwrite import OutputDirError, planned_deletions
from paddle_pfc.engine.protect import check_data_spared, check_sources_spared

__all__ = ["ResumePlan", "plan_resume"]

#: Why a run starts as planned: ``fresh`` (no ``train.resume``, no earlier run in the folder),
#: ``overwrite`` (no ``train.resume``; ``train.overwrite`` deletes an earlier run), ``auto``
#: (``train.resume: auto``, the newest intact checkpoint), ``auto-none`` (``train.resume: auto``,
#: no intact checkpoint: a fresh start), ``named`` (``train.resume`` names the checkpoint).
Why = Literal["fresh", "overwrite", "auto", "auto-none", "named"]


@dataclass(frozen=True)
class ResumePlan:
    """What a run loads before its first step: ``load`` is ``checkpoint`` (``source`` the folder,
    ``step`` its global step), ``pretrained`` (``source`` is ``model.pretrained``) or ``nothing``
    (random initialisation); ``step`` is 0 unless a checkpoint is loaded. ``delete``: the earlier
    run's files ``train.overwrite`` deletes first (in order); ``unreadable`` / ``damaged``: the
    checkpoint folders ``resume auto`` skipped, with the reason (damaged: newest first)."""

    load: Literal["checkpoint", "pretrained", "nothing"]
    source: Path | None
    step: int
    why: Why
    delete: tuple[Path, ...] = ()
    unreadable: tuple[tuple[Path, str], ...] = ()
    damaged: tuple[tuple[Path, str], ...] = ()

    @property
    def checkpoint(self) -> Path | None:
        """The checkpoint folder to load, or None (a fresh start)."""
        return self.source if self.load == "checkpoint" else None


def plan_resume(cfg: Config, rank: int = 0, world_size: int = 1, exchange: Exchange | None = None) -> ResumePlan:
    """The :class:`ResumePlan` of ``cfg`` (``train.resume``: a path, ``auto`` or null).

    ``auto``: the newest complete checkpoint of ``output_dir/checkpoints`` whose files pass
    :func:`~paddle_pfc.engine.checkpoint.verify_checkpoint`, else a fresh start. With
    ``world_size`` > 1 and ``exchange`` each file is hashed by one rank
    (:func:`~paddle_pfc.engine.checkpoint.verify_shared`) and every rank gets the same plan. A
    checkpoint named by path must pass the same check (:class:`~paddle_pfc.engine.checkpoint.CheckpointError`).
    A fresh run into a folder that holds checkpoints or a ``best/`` model is an
    :class:`OutputDirError` unless ``train.overwrite`` (:mod:`~paddle_pfc.engine.overwrite`). An
    output folder that is, holds or lies inside ``data.root`` is refused, and so is a
    ``model.pretrained`` that lies where a fresh run deletes or replaces files
    (:mod:`~paddle_pfc.engine.protect`)."""
    output_dir = Path(cfg.train.output_dir)
    _check_spared(cfg, output_dir)
    resume = cfg.train.resume
    if resume == "auto":
        return _plan_auto(output_dir / "checkpoints", cfg.model.pretrained, rank, world_size, exchange)
    if resume:
        return _plan_named(resume, rank, world_size, exchange)
    return _plan_fresh(output_dir, cfg.model.pretrained, cfg.train.overwrite)


def _check_spared(cfg: Config, output_dir: Path) -> None:
    """Refuse an output folder that overlaps ``data.root``, or one whose fresh run would delete
    ``model.pretrained`` before reading it."""
    if data_format(cfg.data.kind).under_root:
        check_data_spared(output_dir, cfg.data.root)
    resume = cfg.train.resume
    if not resume or (resume == "auto" and ckpt.latest_checkpoint(output_dir / "checkpoints") is None):
        check_sources_spared(output_dir, cfg.model.pretrained)  # the run starts from model.pretrained


def _fresh(pretrained: str | None, why: Why, **skipped) -> ResumePlan:
    source = Path(pretrained) if pretrained else None
    return ResumePlan("pretrained" if source else "nothing", source, 0, why, **skipped)


def _from_checkpoint(folder: Path, why: Why, **skipped) -> ResumePlan:
    return ResumePlan("checkpoint", folder, int(ckpt.read_meta(folder)["global_step"]), why, **skipped)


def _plan_auto(root: Path, pretrained: str | None, rank: int, world_size: int,
               exchange: Exchange | None) -> ResumePlan:
    unreadable = tuple(ckpt.scan_checkpoints(root)[1])
    newest, damaged = ckpt.newest_intact_checkpoint(root, rank, world_size, exchange)
    skipped = {"unreadable": unreadable, "damaged": tuple(damaged)}
    if newest is None:
        return _fresh(pretrained, "auto-none", **skipped)
    return _from_checkpoint(newest, "auto", **skipped)


def _plan_named(resume: str, rank: int, world_size: int, exchange: Exchange | None) -> ResumePlan:
    named = ckpt.resolve_checkpoint(resume)  # a wrong path fails now, naming it
    damaged = ckpt.verify_shared(named, rank, world_size, exchange)
    if damaged is not None:  # and so does a damaged file, on every rank
        raise ckpt.CheckpointError(damaged)
    return _from_checkpoint(named, "named")


def _plan_fresh(output_dir: Path, pretrained: str | None, overwrite: bool) -> ResumePlan:
    root, best = output_dir / "checkpoints", output_dir / "best"
    leftovers = sorted(p.name for p in root.glob("step_*")) if root.is_dir() else []
    if not leftovers and not best.exists():
        return _fresh(pretrained, "fresh")
    if not overwrite:
        newest = ckpt.latest_checkpoint(root)
        found = (f"checkpoints in {root} (newest complete: {newest.name})" if newest else
                 f"{len(leftovers)} unfinished checkpoints in {root}" if leftovers else
                 f"best model in {best}")
        raise OutputDirError(
            f"{output_dir} already holds an earlier run's {found}. To continue that run, add "
            "--resume auto (or -o train.resume=auto); to start over and delete them, add "
            "--overwrite (-o train.overwrite=true); or choose another train.output_dir")
    return _fresh(pretrained, "overwrite", delete=tuple(planned_deletions(output_dir)))  # refused alike on every rank
