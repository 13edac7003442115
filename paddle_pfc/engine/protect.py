"""What a training run may delete or replace, checked against the models it starts from.

A run deletes or replaces, under ``train.output_dir``: the checkpoint folders of
``checkpoints/`` (``--overwrite`` on a fresh run; the rotation that keeps
``train.keep_checkpoints``) and ``best/`` (``--overwrite``; each better validation). A model named
by ``model.pretrained`` is read once at the first step, so a source inside those folders would be
deleted before it is read (``--overwrite``) or replaced by the fine-tuned model: permanent loss.
:func:`check_sources_spared` refuses such a run before anything is deleted, naming the conflict
and the way out. Paths are compared after resolving ``~``, ``..`` and symbolic links; a checkpoints
root stands for every checkpoint in it (its ``latest`` included).
"""
from __future__ import annotations

import os
from pathlib import Path

from paddle_pfc.utils.errors import UsageError

__all__ = ["SourceInOutputError", "deleted_by_run", "check_sources_spared", "check_data_spared"]


class SourceInOutputError(UsageError):
    """A model a run starts from lies where that run deletes or replaces files."""


def _real(path: str | os.PathLike) -> Path:
    return Path(os.path.realpath(Path(path).expanduser()))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def deleted_by_run(output_dir: str | os.PathLike) -> list[Path]:
    """The folders (resolved) under ``output_dir`` whose content a training run may delete or replace."""
    out = _real(output_dir)
    return [out / "checkpoints", out / "best"]


def check_sources_spared(output_dir: str | os.PathLike, pretrained: str | os.PathLike | None) -> None:
    """Raise :class:`SourceInOutputError` when ``pretrained`` (a file or folder, or None) lies in a
    folder this run deletes or replaces (:func:`deleted_by_run`), when it is ``output_dir`` itself
    or holds its ``checkpoints/`` (a run folder given as the source), or when ``output_dir`` lies
    inside it. Called before any deletion; a run that resumes takes nothing from ``pretrained`` and
    need not call it."""
    if not pretrained:
        return
    source, out = _real(pretrained), _real(output_dir)
    way_out = (f"give another train.output_dir (e.g. -o train.output_dir={Path(str(output_dir)).as_posix()}"
               f"_finetune), or copy the model elsewhere first (cp -r {pretrained} my_model/) and name the "
               "copy with --pretrained")
    for folder in deleted_by_run(out):
        if _inside(source, folder):
            what = ("deletes every checkpoint there with --overwrite and rotates them "
                    "(train.keep_checkpoints)" if folder.name == "checkpoints"
                    else "deletes it with --overwrite and replaces it at each better validation")
            raise SourceInOutputError(
                f"model.pretrained {pretrained} lies inside {folder} of train.output_dir {output_dir}: "
                f"this run {what}, so the model it starts from would be lost. Nothing was deleted; "
                f"{way_out}")
    if source == out or _inside(out, source):
        raise SourceInOutputError(
            f"train.output_dir {output_dir} is (or lies inside) model.pretrained {pretrained}: the run would "
            f"write over the model it starts from. Nothing was deleted; {way_out}")


def check_data_spared(output_dir: str | os.PathLike, data_root: str | os.PathLike | None) -> None:
    """Raise :class:`SourceInOutputError` when ``output_dir`` is ``data_root``, lies inside it or
    holds it: a run's ``checkpoints/`` and ``best/`` would become identities of an image folder,
    and ``--overwrite`` would delete an identity named ``best``."""
    if not data_root:
        return
    data, out = _real(data_root), _real(output_dir)
    if _inside(out, data) or _inside(data, out):
        raise SourceInOutputError(
            f"train.output_dir {output_dir} is, holds or lies inside data.root {data_root}: the run writes "
            "checkpoints/ and best/ there (and --overwrite deletes them). Nothing was deleted; give a "
            "train.output_dir outside the data")
