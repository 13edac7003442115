"""Values derived from a config and the run: the base learning rate, the verification set paths."""
from __future__ import annotations

import os

from .schema import Config


def resolve_lr(cfg: Config, world_size: int) -> float:
    """The run's base learning rate for ``global_batch = cfg.train.batch_size * world_size *
    cfg.train.accumulate_steps`` (the samples of one optimizer step):

    * ``train.lr_reference_batch`` set: ``(train.lr or 0.1) * global_batch / lr_reference_batch``
      (the linear scaling rule: lowering the batch lowers the rate with it);
    * else ``train.lr`` as given, or, when it is null, ``0.1 * global_batch / 512``.

    Gradient-scale convention: the trainer's gradient is the exact gradient of the
    MEAN loss over the global batch (each rank's local-mean gradient averaged over
    ranks, as DDP does in arcface_torch), so this is insightface's rule unchanged
    (e.g. 8 GPUs x 128 -> 0.2, as in its ms1mv3_r50 config).
    """
    if isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1:
        raise ValueError(f"world_size must be an int >= 1, got {world_size!r}")
    t = cfg.train
    global_batch = t.batch_size * world_size * t.accumulate_steps
    if t.lr_reference_batch is not None:
        return (0.1 if t.lr is None else float(t.lr)) * global_batch / t.lr_reference_batch
    if t.lr is not None:
        return float(t.lr)
    return 0.1 * global_batch / 512.0


def describe_lr(cfg: Config, world_size: int) -> str:
    """How :func:`resolve_lr` reached the rate, for the start-up log line."""
    t = cfg.train
    global_batch = t.batch_size * world_size * t.accumulate_steps
    rate = resolve_lr(cfg, world_size)
    if t.lr is not None and t.lr_reference_batch is None:
        return f"lr {rate:.4g} (train.lr, not scaled with the global batch {global_batch})"
    base = 0.1 if t.lr is None else float(t.lr)
    reference = t.lr_reference_batch or 512
    return f"lr {rate:.4g} = {base:g} x global batch {global_batch} / reference batch {reference}"


def log_interval(log_every: int, steps_per_epoch: int) -> int:
    """Steps between log lines: ``log_every``, or fewer so that an epoch logs about 4 lines."""
    return max(1, min(log_every, steps_per_epoch // 4))


def resolve_validation_sets(cfg: Config) -> list[tuple[str, str]]:
    """``[(name, path)]`` of ``validation.sets``; relative paths are joined to ``data.root``
    (left relative to the working directory when ``data.root`` is null)."""
    out = []
    for s in cfg.validation.sets:
        p = os.path.expanduser(s.path)
        if not os.path.isabs(p) and cfg.data.root is not None:
            p = os.path.join(os.path.expanduser(cfg.data.root), p)
        out.append((s.name, p))
    return out
