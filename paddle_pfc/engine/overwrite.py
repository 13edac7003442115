"""What ``--overwrite`` deletes, and how: only what a run of ours wrote, each deletion checked first.

A fresh run with ``train.overwrite`` deletes, under ``train.output_dir``: the ``latest`` pointer and
the ``step_*`` folders of ``checkpoints/``, and ``best/``. Each must carry our marker: a
``meta.json`` whose ``format`` is a checkpoint format of ours (complete checkpoints and ``best/``),
or, for an unfinished ``step_N.partial`` a killed save left, only the entries a save writes. Before
anything is deleted every folder is checked to be deletable (writable folders, nothing immutable or
append-only, no mount point inside); a folder that fails either check is an :class:`OutputDirError`
naming it, and nothing is deleted. Deletion then removes ``latest`` first and the checkpoints
oldest to newest, then ``best/``, so that a stop at any moment leaves the newest remaining
checkpoint the one resume auto takes.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from paddle_pfc.engine import checkpoint as ckpt
from paddle_pfc.utils.deletable import undeletable
from paddle_pfc.utils.errors import UsageError

__all__ = ["OutputDirError", "planned_deletions", "delete_earlier_run"]


class OutputDirError(UsageError, RuntimeError):
    """An output folder a run may not use as asked: it holds an earlier run (and no --overwrite),
    or something --overwrite may not or cannot delete."""


def _not_ours(folder: Path) -> str | None:
    """Why ``folder`` is not a checkpoint (or ``best/``) a run of ours wrote, or None."""
    if folder.is_symlink() or not folder.is_dir():
        return f"{folder} is not a folder (a symbolic link or a file)"
    if folder.name.endswith(".partial"):
        return ckpt.stranger_in_partial(folder)
    try:
        ckpt.read_meta(folder)
    except ckpt.CheckpointError as exc:
        return f"{folder} has no meta.json of a paddle_pfc checkpoint ({exc})"
    return None


def planned_deletions(output_dir: Path) -> list[Path]:
    """What ``--overwrite`` deletes under ``output_dir``, in order (``latest``, the checkpoints
    oldest to newest, unfinished ones, ``best/``), each checked to be ours and deletable;
    :class:`OutputDirError` naming the first that is not, before anything is deleted."""
    root, best = Path(output_dir) / "checkpoints", Path(output_dir) / "best"
    folders = sorted(root.glob("step_*")) if root.is_dir() else []
    complete = [folder for _, folder in ckpt.complete_checkpoints(root)] if folders else []
    plan = ([root / ckpt.LATEST] if (root / ckpt.LATEST).exists() or (root / ckpt.LATEST).is_symlink() else []) + \
        complete + [f for f in folders if f not in complete] + ([best] if best.exists() or best.is_symlink() else [])
    for target in plan:
        problem = None if target.name == ckpt.LATEST else _not_ours(target)
        if problem:
            raise OutputDirError(f"--overwrite refused: {problem}; it deletes only what a training run wrote. "
                                 "Nothing was deleted; move it away or choose another train.output_dir")
        problem = undeletable(target)
        if problem:
            raise OutputDirError(f"--overwrite cannot delete {target}: {problem}. Nothing was deleted")
    return plan


def delete_earlier_run(plan: list[Path]) -> int:
    """Delete ``plan`` (:func:`planned_deletions`) in order; the number of checkpoint folders
    deleted. A deletion that fails anyway is an :class:`OutputDirError` naming the folder."""
    removed = 0
    for target in plan:
        try:
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
                removed += target.name != "best"
            else:
                target.unlink()
        except OSError as exc:
            raise OutputDirError(f"--overwrite could not delete {target} ({exc.strerror or exc}); "
                                 f"{removed} earlier checkpoints were deleted before it, it may be partly deleted, the "
                                 "ones after it are intact") from None
    return removed
