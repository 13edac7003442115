"""Checkpoint folders under a run's root: which are complete, which is the latest, which pass their
checksums, and the ``meta.json`` that makes a folder complete."""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from paddle_pfc.engine.checkpoint.common import (
    FORMAT,
    FORMAT_V1,
    LATEST,
    MAX_META_BYTES,
    MAX_POINTER_BYTES,
    CheckpointError,
)
from paddle_pfc.engine.checkpoint.files import FileCheck, read_small, regular_file, write_bytes
from paddle_pfc.engine.checkpoint.npy import NpyRows
from paddle_pfc.engine.checkpoint.shards import saved_split
from paddle_pfc.engine.checkpoint.states import read_state


def step_dir(root: str | Path, global_step: int) -> Path:
    return Path(root) / f"step_{global_step:09d}"


def complete_checkpoints(root: str | Path) -> list[tuple[int, Path]]:
    """``[(global_step, folder)]`` of the complete checkpoints under ``root``, by the step recorded
    in each ``meta.json`` (oldest first); unreadable or unfinished folders are left out."""
    return scan_checkpoints(root)[0]


def scan_checkpoints(root: str | Path) -> tuple[list[tuple[int, Path]], list[tuple[Path, str]]]:
    """``(complete, unreadable)``: the complete checkpoints as :func:`complete_checkpoints`, and
    ``[(folder, reason)]`` of the ``step_*`` folders that are not unfinished (``.partial``, which
    a killed save leaves) but whose ``meta.json`` cannot be read (damaged or edited)."""
    found, unreadable = [], []
    for folder in sorted(Path(root).glob("step_*")):
        if not folder.is_dir() or folder.name.endswith(".partial"):
            continue
        try:
            step = int(read_meta(folder)["global_step"])
        except (CheckpointError, KeyError, TypeError, ValueError, OSError) as exc:
            unreadable.append((folder, f"{type(exc).__name__}: {exc}"))
            continue
        found.append((step, folder))
    return sorted(found, key=lambda item: (item[0], item[1].name)), unreadable


def latest_checkpoint(root: str | Path) -> Path | None:
    """The newest complete checkpoint under ``root``, or None: the one the ``latest`` pointer
    names when it is complete and no complete checkpoint has a higher recorded step, else the
    complete checkpoint with the highest step recorded in its meta.json."""
    done = complete_checkpoints(root)
    if not done:
        return None
    pointer = Path(root) / LATEST
    if pointer.exists():
        try:
            named = Path(root) / read_small(pointer, Path(root), MAX_POINTER_BYTES).strip()
        except CheckpointError:
            named = None  # a damaged pointer: the highest recorded step decides
        for step, folder in done:
            if folder == named and step >= done[-1][0]:
                return folder
    return done[-1][1]


#: ``exchange(name, value)``: every rank's ``value`` (a string), in rank order, once every rank has
#: called it with ``name`` (:meth:`paddle_pfc.runtime.barrier.StoreBarrier.exchange`).
Exchange = Callable[[str, str], list[str]]


def newest_intact_checkpoint(root: str | Path, rank: int = 0, world_size: int = 1,
                             exchange: Exchange | None = None) -> tuple[Path | None, list[tuple[Path, str]]]:
    """``(folder, damaged)``: the newest complete checkpoint under ``root`` (as
    :func:`latest_checkpoint`) that passes :func:`verify_checkpoint`, or None, and
    ``[(folder, reason)]`` of the newer ones that failed it (newest first). With ``world_size`` > 1
    each file is checked by one rank (:func:`verify_shared`) and every rank returns the same."""
    done = [folder for _, folder in complete_checkpoints(root)]
    newest = latest_checkpoint(root)
    order = ([newest] if newest is not None else []) + [f for f in reversed(done) if f != newest]
    damaged = []
    for folder in order:
        reason = verify_shared(folder, rank, world_size, exchange)
        if reason is not None:
            damaged.append((folder, reason))
            continue
        return folder, damaged
    return None, damaged


def verify_shared(path: str | Path, rank: int = 0, world_size: int = 1, exchange: Exchange | None = None) -> str | None:
    """None when every file of the checkpoint ``path`` passes :func:`verify_checkpoint`, else why
    not (the :class:`CheckpointError` of the lowest rank that found one). With ``world_size`` > 1
    (and ``exchange``) this rank checks its share of the files only and the ranks exchange their
    verdicts: every rank returns the same, and each file is read by one rank."""
    shared = world_size > 1 and exchange is not None
    try:
        verify_checkpoint(path, rank, world_size) if shared else verify_checkpoint(path)
        reason = ""
    except CheckpointError as exc:
        reason = str(exc) or type(exc).__name__
    verdicts = exchange(f"checked {Path(path).name}", reason) if shared else [reason]
    return next((verdict for verdict in verdicts if verdict), None)


def resolve_checkpoint(path: str | Path) -> Path:
    """A checkpoint folder, or a checkpoints root (→ its latest), checked to be complete."""
    path = Path(path)
    if (path / "meta.json").exists():
        return path
    if not path.exists():
        from paddle_pfc.engine.run_folder import missing_model_reason

        raise CheckpointError(f"{path}: {missing_model_reason(path)}")
    found = latest_checkpoint(path) or latest_checkpoint(path / "checkpoints")
    if found is None:
        raise CheckpointError(f"no complete checkpoint at {path} (expected meta.json or a 'latest' pointer)")
    return found


def read_meta(path: str | Path) -> dict:
    meta_path = Path(path) / "meta.json"
    try:
        meta = json.loads(read_small(meta_path, Path(path), MAX_META_BYTES))
    except json.JSONDecodeError as exc:
        raise CheckpointError(f"checkpoint file {meta_path} is corrupt: {exc}") from exc
    if not isinstance(meta, dict):
        raise CheckpointError(f"checkpoint file {meta_path} is corrupt: not a JSON object")
    if meta.get("format") not in (FORMAT, FORMAT_V1):
        raise CheckpointError(f"{meta_path}: format {meta.get('format')!r}, expected {FORMAT!r}")
    return meta


def write_meta(folder: Path, meta: dict, world_size: int, num_heads: int,
               files: Mapping[str, dict] | None = None) -> None:
    """``folder/meta.json``: ``meta`` plus the format, rank count, number of classifiers and
    ``files`` (relative path -> ``{"sha256", "bytes"}`` of every other file of the folder)."""
    meta = dict(meta, format=FORMAT, world_size=world_size, num_heads=num_heads, files=dict(files or {}))
    write_bytes(Path(folder) / "meta.json", json.dumps(meta, indent=1).encode())


def _check_splits(path: Path, meta: dict) -> None:
    """Every head's center shards partition the recorded classes (:func:`saved_split`)."""
    try:
        heads, world_size, num_classes = (int(meta[k]) for k in ("num_heads", "world_size", "num_classes"))
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"{path / 'meta.json'}: num_heads, world_size and num_classes must be "
                              f"recorded counts ({type(exc).__name__}: {exc})") from exc
    for index in range(heads):
        saved_split(path, index, world_size, num_classes)


def verify_checkpoint(path: str | Path, rank: int = 0, world_size: int = 1) -> dict:
    """The meta of the checkpoint folder ``path`` once every file of it has been checked: against
    its recorded sha256 and size, or, in a format-1 checkpoint (which records none), by reading
    its pickles and the headers and sizes of its ``.npy`` shards. :class:`CheckpointError` names
    the first damaged, missing or unreadable file. With ``world_size`` > 1 only rank ``rank``'s
    share of the recorded files is hashed (:func:`~.files.file_shares`; the meta, the split of the
    center shards and a format-1 checkpoint are checked whole on every rank)."""
    path = Path(path)
    meta = read_meta(path)
    check = FileCheck(path, meta)
    if check.records is not None:
        check.check_all(rank, world_size)
        _check_splits(path, meta)
        return meta
    for part in ("backbone", "states"):
        read_state(check, meta, part)
    _check_splits(path, meta)
    for shard in sorted((path / "centers").glob("*.npy")):
        regular_file(shard, path)
        NpyRows(shard)
    return meta


_PARTIAL = re.compile(r"step_\d+\.partial")
_PARTIAL_ENTRY = re.compile(r"(centers|backbone\.npz|states\.npz|meta\.json|done\.rank\d+)(\.tmp)?")


def stranger_in_partial(folder: Path) -> str | None:
    """Why ``folder`` is not an unfinished checkpoint a save left (``step_N.partial`` holding only
    what a save writes), or None."""
    if folder.is_symlink() or not folder.is_dir() or not _PARTIAL.fullmatch(folder.name):
        return f"{folder} is not an unfinished checkpoint folder (step_N.partial)"
    odd = sorted(p.name for p in folder.iterdir() if not _PARTIAL_ENTRY.fullmatch(p.name))
    return f"{folder} holds {odd[0]!r}, which no checkpoint save writes" if odd else None
