"""Values derived from a config and the run: the base learning rate, the verification set paths."""
from __future__ import annotations

import os

from .schema import Config


def resolve_lr(cfg: Config, world_size: int) -> float:
    """Base learning rate: ``cfg.train.lr`` if set, else ``0.1 * global_batch / 512``
    with ``global_batch = cfg.train.batch_size * world_size``.

    Gradient-scale convention: the trainer's gradient is the exact gradient of the
    MEAN loss over the global batch (each rank's local-mean gradient averaged over
    ranks, as DDP does in arcface_torch), so this is insightface's rule unchanged
    (e.g. 8 GPUs x 128 -> 0.2, as in its ms1mv3_r50 config).
    """
    if isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1:
        raise ValueError(f"world_size must be an int >= 1, got {world_size!r}")
    if cfg.train.lr is not None:
        return float(cfg.train.lr)
    return 0.1 * cfg.train.batch_size * world_size / 512.0


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
