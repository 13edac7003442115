"""Training checkpoints: atomic, strict, and resumable on any number of ranks.

Layout of one checkpoint directory (a folder every rank can write; shared across nodes)::

    step_000001200/
      meta.json                  progress (epoch, step_in_epoch, global_step), world_size,
                                 num_classes, embedding_size, the config, and ``files``: the
                                 sha256 and size of every other file of the checkpoint
      backbone.npz               {structured name (layer.state_dict key): ndarray}        (rank 0)
      states.npz                 {variable name: ndarray}: every other persistable of the
                                 training program except class centers and the learning rate
                                 (backbone momentum, ...)                                  (rank 0)
      centers/head0.weight.rank1.npy, centers/head0.velocity.rank1.npy, centers/head0.rank1.json
                                 each rank's shard rows [class_start, class_start + num_local)

Every file holds data only (``.npz`` / ``.npy`` read with ``allow_pickle=False``, JSON): loading
a checkpoint runs no code from it (:mod:`paddle_pfc.utils.npz_state`). bfloat16 tensors are
stored as their uint16 bit patterns. Checkpoints of format 1 (``backbone.pdparams`` /
``states.pdstates``, pickles of ``{name: ndarray}``, no checksums) still load: their pickles are
read through :mod:`paddle_pfc.utils.safe_pickle`, which constructs arrays and containers only.

Verification on load: every file read is checked against its recorded sha256 and size (a flipped
byte or a truncated file is an error naming the file); loaded tensors must be finite, and
BatchNorm running variances in ``[0, MAX_BN_VARIANCE]`` (an error names the checkpoint and tensor).

Atomicity: everything is written into ``step_N.partial/``; each rank then drops
``done.rank<r>``; rank 0 waits for all of them, writes ``meta.json``, renames the folder to
``step_N`` and only then points ``latest`` at it (``os.replace``). A kill at any moment leaves the
previous complete checkpoint loadable. Saving and loading take a :class:`CheckpointTarget` (the
scope, place and variable names of one rank's programs). Loading is strict: a missing, unexpected
or mis-shaped tensor, or a different num_classes / embedding size / backbone, is an error naming
it. Center shards (and their momentum) are resharded to the loading run's balanced split, so N
ranks' checkpoints resume on M ranks.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import stat
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from paddle_pfc.head.dtypes import HOST_DTYPES, convert
from paddle_pfc.head.geometry import class_split
from paddle_pfc.utils.atomic import atomic_write
from paddle_pfc.utils.deletable import undeletable
from paddle_pfc.utils.errors import PfcError
from paddle_pfc.utils.npz_state import StateFileError, load_state, state_bytes
from paddle_pfc.utils.safe_pickle import ARRAY_GLOBALS, MalformedPickleError, UnsafePickleError, load_file

FORMAT = "paddle_pfc.checkpoint/2"
#: format 1: pickled backbone.pdparams / states.pdstates, no checksums (read-only)
FORMAT_V1 = "paddle_pfc.checkpoint/1"
LATEST = "latest"
BACKBONE_FILE, STATES_FILE = "backbone.npz", "states.npz"
LEGACY_BACKBONE_FILE, LEGACY_STATES_FILE = "backbone.pdparams", "states.pdstates"
#: Largest BatchNorm running variance a loaded checkpoint may hold. A trained face backbone's are
#: O(1e-3..1e3); a variance of 1e10 (activations of std 1e5) means a diverged or damaged model.
MAX_BN_VARIANCE = 1e10
#: Largest meta.json (or shard split record) read; one holds progress, the config and checksums.
MAX_META_BYTES = 16 << 20
MAX_POINTER_BYTES = 4096


class CheckpointTarget(Protocol):
    """What a checkpoint is saved from and loaded into: one rank's initialised programs.

    ``scope`` / ``place``: where the variables live; ``backbone_names``: structured name (layer
    ``state_dict`` key) -> variable name; ``state_names``: every other persistable rank 0 saves
    (optimizer states, ...); ``heads``: the ``LargeScaleClassifier`` shards of this rank.
    """

    scope: Any
    place: Any
    backbone_names: Mapping[str, str]
    state_names: Sequence[str]
    heads: Sequence


class CheckpointError(PfcError, ValueError):
    """A checkpoint that cannot be loaded into this program (names the tensor or field)."""


class NonFiniteStateError(PfcError, FloatingPointError):
    """A tensor about to be written into a checkpoint holds inf/NaN (names it); nothing is saved."""


def count_nonfinite(value: np.ndarray, bfloat16_bits: bool = False) -> int:
    """Number of inf/NaN values of a float array (or, with ``bfloat16_bits``, of a uint16 array
    of bfloat16 bit patterns); 0 for other dtypes."""
    value = np.asarray(value)
    if bfloat16_bits and value.dtype == np.uint16:
        return int(np.count_nonzero((value & 0x7F80) == 0x7F80))
    if np.issubdtype(value.dtype, np.floating):
        return int(value.size - np.count_nonzero(np.isfinite(value)))
    return 0


def check_finite(name: str, value: np.ndarray, bfloat16_bits: bool = False) -> None:
    """Raise :class:`NonFiniteStateError` naming ``name`` if a float array (or, with
    ``bfloat16_bits``, a uint16 array of bfloat16 bit patterns) holds inf or NaN."""
    value = np.asarray(value)
    bad = count_nonfinite(value, bfloat16_bits)
    if bad:
        raise NonFiniteStateError(f"{name}: {bad} of {value.size} values are inf/NaN; refusing to write "
                                  "a checkpoint that could not be resumed")


# ------------------------------------------------------------------------------------- helpers
def persistable_names(program) -> list[str]:
    """Names of the persistable variables (parameters, statistics, optimizer states) of ``program``.

    PIR declares parameters with ``builtin.parameter`` and optimizer accumulators (momentum, ...)
    with persistable ``pd_op.data`` ops; feed inputs are non-persistable ``pd_op.data``. Ops inside
    control flow count too: with loss scaling the optimizer creates its accumulators inside the
    branch that applies the updates.
    """
    names = []

    def visit(block) -> None:
        for op in block.ops:
            if op.name() == "builtin.parameter":
                names.append(op.attrs()["parameter_name"])
            elif op.name() == "pd_op.data" and op.result(0).persistable:
                names.append(op.attrs()["name"])
            for inner in op.blocks():
                visit(inner)

    visit(program.global_block())
    return list(dict.fromkeys(names))


def read_tensor(scope, name: str) -> np.ndarray:
    var = scope.find_var(name)
    if var is None:
        raise CheckpointError(f"variable {name!r} is not in the scope (was the startup program run?)")
    return np.array(var.get_tensor())


def write_tensor(scope, name: str, value: np.ndarray, place) -> None:
    scope.find_var(name).get_tensor().set(np.ascontiguousarray(value), place)


def read_finite(scope, names: Mapping[str, str], label: str = "") -> dict[str, np.ndarray]:
    """``{key: value of variable names[key]}``, each checked by :func:`check_finite` (named
    ``label + key``)."""
    values = {key: read_tensor(scope, name) for key, name in names.items()}
    for key, value in values.items():
        check_finite(label + key, value)
    return values


def center_tensors(head) -> list[tuple[str, str]]:
    """``[(kind, variable name)]`` of a classifier's shard: its centers, their momentum and (int8
    momentum) its row scales."""
    return [("weight", head.weight.name)] + [
        (kind, value.name) for kind, value in (("velocity", head.velocity), ("velocity_scale", head.velocity_scale))
        if value is not None]


def _tensor_dtype(head, kind: str) -> str:
    """The storage dtype of a shard tensor of ``kind`` (:func:`center_tensors`)."""
    return {"weight": head.center_dtype, "velocity": head.momentum_dtype, "velocity_scale": "float32"}[kind]


def _disk_error(path: Path, exc: OSError) -> OSError:
    """``exc`` re-raised with the path it failed on (``write``/``fsync`` errors carry none)."""
    return type(exc)(exc.errno, f"{exc.strerror or exc} while writing {path}")


class _HashingFile:
    """A write-only file that keeps the sha256 and size of what went through it."""

    def __init__(self, file) -> None:
        self._file, self.sha256, self.size = file, hashlib.sha256(), 0

    def write(self, data) -> int:
        data = memoryview(data).cast("B")
        self.sha256.update(data)
        self.size += data.nbytes
        return self._file.write(data)

    def record(self) -> dict:
        return {"sha256": self.sha256.hexdigest(), "bytes": self.size}


def _atomic_write(path: Path, write: Callable[[Any], None]) -> dict:
    """``write(file)`` into ``path`` atomically (temporary file, fsync, rename); returns the
    file's ``{"sha256", "bytes"}``."""
    try:
        with atomic_write(path, "wb") as f:
            hashing = _HashingFile(f)
            write(hashing)
    except OSError as exc:
        raise _disk_error(path, exc) from exc
    return hashing.record()


def _atomic_write_bytes(path: Path, data: bytes) -> dict:
    return _atomic_write(path, lambda f: f.write(data))


def _save_npy(path: str | Path, value: np.ndarray) -> dict:
    # a file object that is no real file: numpy writes through its write() in chunks
    return _atomic_write(Path(path), lambda f: np.save(f, value, allow_pickle=False))


def _file_record(path: Path, limit: int | None = None) -> dict:
    """``{"sha256", "bytes"}`` of the file at ``path`` as it is on disk; with ``limit``, hashing
    stops after ``limit + 1`` bytes (the size then shows the file is longer than expected)."""
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22 if limit is None else min(1 << 22, limit + 1 - size)):
            digest.update(chunk)
            size += len(chunk)
    return {"sha256": digest.hexdigest(), "bytes": size}


def regular_file(path: Path, folder: Path) -> int:
    """The size of ``path``, a regular file of the checkpoint ``folder`` (a symbolic link counts
    only when it resolves to a regular file inside ``folder``); :class:`CheckpointError` naming it
    for a device, FIFO, folder or a link out of the checkpoint, before any byte of it is read."""
    path = Path(path)
    try:
        if path.is_symlink():
            real, inside = Path(os.path.realpath(path)), Path(os.path.realpath(folder))
            if inside not in real.parents:
                raise CheckpointError(f"checkpoint file {path} is a symbolic link to {real}, outside the "
                                      f"checkpoint {folder}")
        info = os.stat(path)
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint file missing: {path}") from None
    except OSError as exc:
        raise CheckpointError(f"checkpoint file {path} is unreadable: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(info.st_mode):
        raise CheckpointError(f"checkpoint file {path} is not a regular file (a device, FIFO or folder)")
    return info.st_size


def _read_small(path: Path, folder: Path, limit: int) -> str:
    """The text of ``path``, a regular file of ``folder`` (:func:`regular_file`) of at most
    ``limit`` bytes (meta.json, a shard's split record, the ``latest`` pointer)."""
    size = regular_file(path, folder)
    if size > limit:
        raise CheckpointError(f"checkpoint file {path} is {size:,} bytes, over the limit of {limit:,} for "
                              "this file (not one the checkpoint was written with)")
    try:
        return Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"checkpoint file {path} is unreadable: {exc}") from exc


class _FileCheck:
    """Checks each file of a checkpoint against the sha256 and size ``meta.json`` records for it,
    once, before it is read. Format-1 checkpoints record none: their files are read unverified."""

    def __init__(self, folder: Path, meta: dict, enabled: bool = True) -> None:
        self.folder, self.enabled = Path(folder), enabled
        self.records = meta.get("files") if meta.get("format") != FORMAT_V1 else None
        if self.records is not None and not isinstance(self.records, dict):
            raise CheckpointError(f"{self.folder / 'meta.json'}: 'files' is not a table of checksums")
        self._done: set[str] = set()

    def __call__(self, path: Path) -> Path:
        rel = Path(path).relative_to(self.folder).as_posix()
        size = regular_file(path, self.folder)
        if not self.enabled or self.records is None or rel in self._done:
            return path
        record = self.records.get(rel)
        if not isinstance(record, dict) or "sha256" not in record or "bytes" not in record:
            raise CheckpointError(f"checkpoint file {path} has no checksum in {self.folder / 'meta.json'} "
                                  "(a file the checkpoint was not written with)")
        if not isinstance(record["bytes"], int) or size != record["bytes"]:
            raise CheckpointError(f"checkpoint file {path} is damaged: {size} bytes, meta.json records "
                                  f"{record['bytes']} (truncated or overwritten)")
        try:
            found = _file_record(Path(path), limit=size)
        except OSError as exc:
            raise CheckpointError(f"checkpoint file {path} is unreadable: {exc.strerror or exc}") from exc
        if found["bytes"] != record["bytes"]:
            raise CheckpointError(f"checkpoint file {path} is damaged: {found['bytes']} bytes, meta.json records "
                                  f"{record['bytes']} (truncated or overwritten)")
        if found["sha256"] != record["sha256"]:
            raise CheckpointError(f"checkpoint file {path} is damaged: its sha256 {found['sha256'][:16]}... differs "
                                  f"from the {record['sha256'][:16]}... recorded in meta.json (changed after it "
                                  "was written)")
        self._done.add(rel)
        return path

    def check_all(self) -> None:
        """Check every recorded file (format 1: nothing is recorded, see :func:`verify_checkpoint`)."""
        for rel in sorted(self.records or {}):
            if not isinstance(rel, str) or Path(rel).is_absolute() or ".." in Path(rel).parts:
                raise CheckpointError(f"{self.folder / 'meta.json'}: 'files' names {rel!r}, not a file of the "
                                      "checkpoint folder")
            self(self.folder / rel)


def _read_state(check: _FileCheck, meta: dict, part: str,
                expected: Collection[str] | None = None) -> dict[str, np.ndarray]:
    """``{name: ndarray}`` of a checkpoint's ``part`` ("backbone" or "states"), verified; with
    ``expected``, an ``.npz`` entry of another name is refused before it is read."""
    folder = check.folder
    if meta.get("format") == FORMAT_V1:
        path = check(folder / (LEGACY_BACKBONE_FILE if part == "backbone" else LEGACY_STATES_FILE))
        try:
            state = load_file(path, allowed=ARRAY_GLOBALS)
        except UnsafePickleError as exc:
            raise CheckpointError(str(exc)) from exc
        except MalformedPickleError as exc:
            raise CheckpointError(f"checkpoint file {path} is unreadable: {exc}") from exc
        if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, np.ndarray)
                                                  for k, v in state.items()):
            raise CheckpointError(f"checkpoint file {path} is not a {{name: array}} state")
        return state
    path = check(folder / (BACKBONE_FILE if part == "backbone" else STATES_FILE))
    try:
        return load_state(path, expected)
    except StateFileError as exc:
        raise CheckpointError(f"checkpoint file {path} is unreadable: {exc}") from exc


def check_loaded_state(where: str | Path, state: Mapping[str, np.ndarray], kind: str) -> None:
    """A loaded ``state`` must be finite and its BatchNorm running variances (names ending in
    ``_variance``) in ``[0, MAX_BN_VARIANCE]``; :class:`CheckpointError` names ``where`` and the
    tensor otherwise."""
    for key, value in state.items():
        bad = count_nonfinite(value)
        if bad:
            raise CheckpointError(f"checkpoint {where}: {kind} tensor {key!r} holds {bad} inf/NaN values "
                                  f"(of {np.asarray(value).size})")
        if key.endswith("_variance") and np.asarray(value).size and np.issubdtype(value.dtype, np.floating):
            low, high = float(np.min(value)), float(np.max(value))
            if low < 0 or high > MAX_BN_VARIANCE:
                wrong = low if low < 0 else high
                raise CheckpointError(f"checkpoint {where}: {kind} BatchNorm running variance {key!r} holds "
                                      f"{wrong:.6g} (a variance is >= 0 and at most {MAX_BN_VARIANCE:g})")


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
            named = Path(root) / _read_small(pointer, Path(root), MAX_POINTER_BYTES).strip()
        except CheckpointError:
            named = None  # a damaged pointer: the highest recorded step decides
        for step, folder in done:
            if folder == named and step >= done[-1][0]:
                return folder
    return done[-1][1]


def newest_intact_checkpoint(root: str | Path) -> tuple[Path | None, list[tuple[Path, str]]]:
    """``(folder, damaged)``: the newest complete checkpoint under ``root`` (as
    :func:`latest_checkpoint`) that passes :func:`verify_checkpoint`, or None, and
    ``[(folder, reason)]`` of the newer ones that failed it (newest first)."""
    done = [folder for _, folder in complete_checkpoints(root)]
    newest = latest_checkpoint(root)
    order = ([newest] if newest is not None else []) + [f for f in reversed(done) if f != newest]
    damaged = []
    for folder in order:
        try:
            verify_checkpoint(folder)
        except CheckpointError as exc:
            damaged.append((folder, str(exc)))
            continue
        return folder, damaged
    return None, damaged


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
        meta = json.loads(_read_small(meta_path, Path(path), MAX_META_BYTES))
    except json.JSONDecodeError as exc:
        raise CheckpointError(f"checkpoint file {meta_path} is corrupt: {exc}") from exc
    if not isinstance(meta, dict):
        raise CheckpointError(f"checkpoint file {meta_path} is corrupt: not a JSON object")
    if meta.get("format") not in (FORMAT, FORMAT_V1):
        raise CheckpointError(f"{meta_path}: format {meta.get('format')!r}, expected {FORMAT!r}")
    return meta


def _check_splits(path: Path, meta: dict) -> None:
    """Every head's center shards partition the recorded classes (:func:`saved_split`)."""
    try:
        heads, world_size, num_classes = (int(meta[k]) for k in ("num_heads", "world_size", "num_classes"))
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"{path / 'meta.json'}: num_heads, world_size and num_classes must be "
                              f"recorded counts ({type(exc).__name__}: {exc})") from exc
    for index in range(heads):
        saved_split(path, index, world_size, num_classes)


def verify_checkpoint(path: str | Path) -> dict:
    """The meta of the checkpoint folder ``path`` once every file of it has been checked: against
    its recorded sha256 and size, or, in a format-1 checkpoint (which records none), by reading
    its pickles and the headers and sizes of its ``.npy`` shards. :class:`CheckpointError` names
    the first damaged, missing or unreadable file."""
    path = Path(path)
    meta = read_meta(path)
    check = _FileCheck(path, meta)
    if check.records is not None:
        check.check_all()
        _check_splits(path, meta)
        return meta
    for part in ("backbone", "states"):
        _read_state(check, meta, part)
    _check_splits(path, meta)
    for shard in sorted((path / "centers").glob("*.npy")):
        regular_file(shard, path)
        try:
            np.load(shard, mmap_mode="r", allow_pickle=False)
        except (ValueError, OSError, EOFError) as exc:
            raise CheckpointError(f"checkpoint file {shard} is unreadable: {exc}") from exc
    return meta


def load_backbone_state(path: str | Path) -> tuple[dict, dict[str, np.ndarray]]:
    """``(config dict, {structured name: ndarray})`` of a checkpoint (or ``best/``) folder, its
    file verified and its tensors checked (see the module doc)."""
    path = resolve_checkpoint(path)
    meta = read_meta(path)
    state = _read_state(_FileCheck(path, meta), meta, "backbone")
    check_loaded_state(path, state, "backbone")
    return meta["config"], state


# ------------------------------------------------------------------------------------- saving

def model_from_checkpoint(ckpt_dir) -> tuple[dict, dict[str, np.ndarray]]:
    """``(model_args, state)`` of a training checkpoint (:func:`load_backbone_state`):
    ``model_args`` = ``{"backbone", "embedding_size", "input_size", "dropout"}`` from its config's
    ``model`` section (a missing key is a ``ValueError`` naming the checkpoint)."""
    config, state = load_backbone_state(os.fspath(ckpt_dir))
    model = config.get("model", {}) if isinstance(config, Mapping) else {}
    missing = [k for k in ("backbone", "embedding_size", "input_size") if k not in model]
    if missing:
        raise ValueError(f"{ckpt_dir}: checkpoint config lacks model.{', model.'.join(missing)}")
    args = {"backbone": model["backbone"], "embedding_size": int(model["embedding_size"]),
            "input_size": model["input_size"], "dropout": float(model.get("dropout", 0.0) or 0.0)}
    return args, state


def write_backbone(folder: Path, target: CheckpointTarget) -> dict[str, dict]:
    """``folder/backbone.npz``: {structured name: ndarray} of ``target``'s backbone; returns its
    ``{file name: {"sha256", "bytes"}}`` for :func:`write_meta`."""
    state = read_finite(target.scope, target.backbone_names)
    return {BACKBONE_FILE: _atomic_write_bytes(Path(folder) / BACKBONE_FILE, state_bytes(state, "backbone"))}


def write_meta(folder: Path, meta: dict, world_size: int, num_heads: int,
               files: Mapping[str, dict] | None = None) -> None:
    """``folder/meta.json``: ``meta`` plus the format, rank count, number of classifiers and
    ``files`` (relative path -> ``{"sha256", "bytes"}`` of every other file of the folder)."""
    meta = dict(meta, format=FORMAT, world_size=world_size, num_heads=num_heads, files=dict(files or {}))
    _atomic_write_bytes(Path(folder) / "meta.json", json.dumps(meta, indent=1).encode())


_PARTIAL = re.compile(r"step_\d+\.partial")
_PARTIAL_ENTRY = re.compile(r"(centers|backbone\.npz|states\.npz|meta\.json|done\.rank\d+)(\.tmp)?")


def stranger_in_partial(folder: Path) -> str | None:
    """Why ``folder`` is not an unfinished checkpoint a save left (``step_N.partial`` holding only
    what a save writes), or None."""
    if folder.is_symlink() or not folder.is_dir() or not _PARTIAL.fullmatch(folder.name):
        return f"{folder} is not an unfinished checkpoint folder (step_N.partial)"
    odd = sorted(p.name for p in folder.iterdir() if not _PARTIAL_ENTRY.fullmatch(p.name))
    return f"{folder} holds {odd[0]!r}, which no checkpoint save writes" if odd else None


class CheckpointWriter:
    """Writes checkpoints of one training run (every rank holds one, with the same arguments)."""

    def __init__(self, root: str | Path, rank: int, world_size: int, keep: int = 3,
                 wait_timeout: float = 1800.0) -> None:
        self.root, self.rank, self.world_size = Path(root), rank, world_size
        self.keep, self.wait_timeout = keep, wait_timeout
        if rank == 0:
            self.root.mkdir(parents=True, exist_ok=True)
            for stale in self.root.glob("step_*.partial"):  # left by a killed run
                problem = stranger_in_partial(stale) or undeletable(stale)
                if problem is None:
                    shutil.rmtree(stale, ignore_errors=True)
                else:
                    logging.getLogger("paddle_pfc.train").warning("left %s as it is: %s", stale, problem)

    def save(self, target: CheckpointTarget, meta: dict) -> Path | None:
        """Write this rank's part of ``target`` (``meta``: its progress, ``meta["global_step"]``
        names the folder); rank 0 finishes the checkpoint and returns its path."""
        scope, heads = target.scope, target.heads
        final = step_dir(self.root, meta["global_step"])
        partial = final.with_name(final.name + ".partial")
        try:
            (partial / "centers").mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _disk_error(partial / "centers", exc) from exc
        # Read and check everything first: a non-finite value anywhere writes nothing.
        shards = []
        for index, head in enumerate(heads):
            prefix = partial / "centers" / f"head{index}"
            for kind, name in center_tensors(head):
                value = read_tensor(scope, name)
                check_finite(f"rank {self.rank}: class centers {name} ({kind})", value, bfloat16_bits=True)
                shards.append((f"{prefix}.{kind}.rank{self.rank}.npy", value))
        if self.rank == 0:
            backbone = read_finite(scope, target.backbone_names, "rank 0: ")
            states = read_finite(scope, {name: name for name in target.state_names}, "rank 0: ")
        files = {}  # this rank's files: relative path -> {"sha256", "bytes"}
        for path, value in shards:
            files[Path(path).relative_to(partial).as_posix()] = _save_npy(path, value)
        for index, head in enumerate(heads):
            info = partial / "centers" / f"head{index}.rank{self.rank}.json"
            files[info.relative_to(partial).as_posix()] = _atomic_write_bytes(info, json.dumps(
                {"class_start": head.class_start, "num_local": head.num_local,
                 "has_velocity": head.velocity is not None, "center_dtype": head.center_dtype,
                 "momentum_dtype": head.momentum_dtype}).encode())
        if self.rank == 0:
            files[BACKBONE_FILE] = _atomic_write_bytes(partial / BACKBONE_FILE, state_bytes(backbone, "backbone"))
            files[STATES_FILE] = _atomic_write_bytes(partial / STATES_FILE, state_bytes(states, "states"))
        # the marker carries the rank's checksums to rank 0, which records them in meta.json
        _atomic_write_bytes(partial / f"done.rank{self.rank}", json.dumps(files).encode())
        if self.rank != 0:
            return None
        deadline = time.monotonic() + self.wait_timeout
        while not all((partial / f"done.rank{r}").exists() for r in range(self.world_size)):
            if time.monotonic() > deadline:
                raise TimeoutError(f"checkpoint {partial}: not every rank wrote its shard within "
                                   f"{self.wait_timeout:.0f}s (is the output folder shared by all nodes?)")
            time.sleep(0.05)
        for r in range(1, self.world_size):
            files.update(json.loads((partial / f"done.rank{r}").read_text()))
        write_meta(partial, meta, self.world_size, len(heads), files)
        if final.exists():
            shutil.rmtree(final)
        os.replace(partial, final)
        _atomic_write_bytes(self.root / LATEST, final.name.encode())
        self._prune(final)
        return final

    def _prune(self, newest: Path) -> None:
        """Keep the ``keep`` complete checkpoints with the highest recorded steps (never ``newest``)."""
        done = [folder for _, folder in complete_checkpoints(self.root) if folder != newest]
        for old in done[:max(0, len(done) - (self.keep - 1))]:
            problem = undeletable(old)
            try:
                if problem is None:
                    shutil.rmtree(old)
            except OSError as exc:
                problem = f"{exc.strerror or exc}: {exc.filename}"
            if problem:
                logging.getLogger("paddle_pfc.train").warning(
                    "checkpoint rotation (train.keep_checkpoints=%d) could not delete %s: %s; it stays",
                    self.keep, old, problem)


# ------------------------------------------------------------------------------------- loading
def _check_same(what: str, saved, expected) -> None:
    if saved != expected:
        raise CheckpointError(f"checkpoint {what} is {saved!r}, this run has {expected!r}")


#: State that may be present on one side only: the loss scale and its counters (turning loss
#: scaling on starts from ``init_loss_scaling``; turning it off drops them).
OPTIONAL_STATE_PREFIX = "loss_scaling@"


def _assign_strict(scope, saved: dict[str, np.ndarray], expected: dict[str, str], kind: str, place) -> None:
    """Write ``saved[key]`` into variable ``expected[key]`` for every key; both sets must match
    (except the optional loss-scaling state)."""
    optional = {k for k in set(saved) ^ set(expected) if k.startswith(OPTIONAL_STATE_PREFIX)}
    saved = {k: v for k, v in saved.items() if k not in optional}
    expected = {k: v for k, v in expected.items() if k not in optional}
    missing = sorted(set(expected) - set(saved))
    unexpected = sorted(set(saved) - set(expected))
    if missing:
        raise CheckpointError(f"{kind}: tensor {missing[0]!r} missing from the checkpoint"
                              + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
    if unexpected:
        raise CheckpointError(f"{kind}: unexpected tensor {unexpected[0]!r} in the checkpoint"
                              + (f" (and {len(unexpected) - 1} more)" if len(unexpected) > 1 else ""))
    for key, name in expected.items():
        current = read_tensor(scope, name)
        value = np.asarray(saved[key])
        if value.shape != current.shape or value.dtype != current.dtype:
            raise CheckpointError(f"{kind}: tensor {key!r} has shape {list(value.shape)} {value.dtype} in "
                                  f"the checkpoint, the program has {list(current.shape)} {current.dtype}")
    for key, name in expected.items():
        write_tensor(scope, name, saved[key], place)


def _present(path: Path, check: Callable[[Path], None] | None) -> Path:
    """``path``, after :class:`CheckpointError` if it is missing and ``check(path)`` if given."""
    if not path.exists():
        raise CheckpointError(f"checkpoint file missing: {path}")
    if check is not None:
        check(path)
    return path


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def saved_split(path: Path, head_index: int, saved_world_size: int, num_classes: int | None = None,
                check: Callable[[Path], Path] | None = None) -> list[tuple[int, int]]:
    """``[(class_start, num_local)]`` of each saved rank's shard of head ``head_index``, as its
    ``head<i>.rank<r>.json`` records it. The shards must partition the classes exactly: ranks in
    order, each starting where the one before ends, from 0 to ``num_classes`` (when given; the
    checkpoint's recorded class count). :class:`CheckpointError` names the file and the ranges of
    a gap, an overlap or a shard past the end."""
    split = []
    for r in range(saved_world_size):
        info_path = _present(path / "centers" / f"head{head_index}.rank{r}.json", check)
        text = _read_small(info_path, path, MAX_META_BYTES)
        try:
            info = json.loads(text)
            first, count = info["class_start"], info["num_local"]
        except (ValueError, KeyError, TypeError) as exc:
            raise CheckpointError(f"checkpoint file {info_path} is corrupt: {type(exc).__name__}: {exc}") from exc
        if not _is_count(first) or not _is_count(count):
            raise CheckpointError(f"checkpoint file {info_path} is corrupt: class_start {first!r} and num_local "
                                  f"{count!r} are not counts")
        expected = split[-1][0] + split[-1][1] if split else 0
        if first != expected:
            what = "overlaps" if first < expected else "leaves a gap after"
            raise CheckpointError(f"checkpoint file {info_path}: shard classes [{first}, {first + count}) "
                                  f"{what} classes [0, {expected}) of the ranks before it; the center shards "
                                  "must partition the classes exactly")
        split.append((first, count))
    total = split[-1][0] + split[-1][1] if split else 0
    if num_classes is not None and total != num_classes:
        raise CheckpointError(f"checkpoint {path}: the center shards of head{head_index} hold classes [0, {total}), "
                              f"meta.json records {num_classes} classes; the shards must partition them exactly")
    return split


def reshard_rows(path: Path, head_index: int, kind: str, saved_world_size: int, start: int, count: int,
                 width: int, center_dtype: str = "float32",
                 check: Callable[[Path], Path] | None = None, num_classes: int | None = None) -> np.ndarray:
    """Rows ``[start, start+count)`` of the full center matrix, read from any saved split (which
    must partition the ``num_classes`` classes exactly: :func:`saved_split`) and returned in the
    host form of ``center_dtype`` (saved rows of another dtype are converted). ``check(file)`` is
    called on each file before it is read (the checksum check of :func:`load_checkpoint`)."""
    path = Path(path)
    split = saved_split(path, head_index, saved_world_size, num_classes, check)
    total = split[-1][0] + split[-1][1] if split else 0
    if start < 0 or start + count > total:
        raise CheckpointError(f"checkpoint centers of head{head_index} do not cover classes "
                              f"[{start}, {start + count}): its shards hold [0, {total})")
    out = np.empty((count, width), dtype=HOST_DTYPES[center_dtype])
    for r, (first, num_local) in enumerate(split):
        lo, hi = max(start, first), min(start + count, first + num_local)
        if lo >= hi:
            continue
        shard_path = _present(path / "centers" / f"head{head_index}.{kind}.rank{r}.npy", check)
        try:
            shard = np.load(shard_path, mmap_mode="r", allow_pickle=False)
        except (ValueError, OSError, EOFError) as exc:  # truncated, or not an .npy
            raise CheckpointError(f"checkpoint file {shard_path} is unreadable: {exc}") from exc
        if shard.shape != (num_local, width):
            raise CheckpointError(f"{shard_path}: shape {list(shard.shape)}, expected {[num_local, width]}")
        if (shard.dtype == np.int8) != (out.dtype == np.int8):  # codes are no values: never converted
            raise CheckpointError(f"{shard_path}: {shard.dtype} rows, this run stores {center_dtype}")
        rows = convert(shard[lo - first:hi - first], center_dtype)
        bad = count_nonfinite(rows, bfloat16_bits=True)
        if bad:
            raise CheckpointError(f"checkpoint file {shard_path}: class centers ({kind}) of classes "
                                  f"[{lo}, {hi}) hold {bad} inf/NaN values")
        out[lo - start:hi - start] = rows
    return out


def load_checkpoint(path: str | Path, target: CheckpointTarget, expect: dict, verify: bool = True) -> dict:
    """Load a checkpoint (folder or root) into ``target``; return its meta.

    ``expect``: fields that must match (num_classes, embedding_size, backbone, ...). ``verify``:
    check each file read against its recorded checksum (off only for a checkpoint that
    :func:`verify_checkpoint` has just checked). Loaded tensors are checked either way
    (:func:`check_loaded_state`; center rows as they are read, naming their shard file).
    """
    scope, place, heads = target.scope, target.place, target.heads
    path = resolve_checkpoint(path)
    meta = read_meta(path)
    for key, value in expect.items():
        _check_same(key, meta.get(key), value)
    _check_same("number of classifiers", meta.get("num_heads"), len(heads))
    check = _FileCheck(path, meta, enabled=verify)
    backbone = _read_state(check, meta, "backbone", expected=set(target.backbone_names))
    check_loaded_state(path, backbone, "backbone")
    states = _read_state(check, meta, "states")
    check_loaded_state(path, states, "optimizer state")
    _assign_strict(scope, backbone, dict(target.backbone_names), "backbone", place)
    _assign_strict(scope, states, {n: n for n in target.state_names}, "optimizer state", place)
    for index, head in enumerate(heads):
        _check_momentum_dtype(path, index, head, check)
    for index, head in enumerate(heads):
        start, count = class_split(head.num_classes, head.world_size, head.rank)
        for kind, name in center_tensors(head):
            width = 1 if kind == "velocity_scale" else head.embedding_size
            rows = reshard_rows(path, index, kind, meta["world_size"], start, count, width,
                                _tensor_dtype(head, kind), check, num_classes=head.num_classes)
            write_tensor(scope, name, rows, place)
    return meta


def _check_momentum_dtype(path: Path, index: int, head, check: Callable[[Path], None]) -> None:
    """:class:`CheckpointError` when head ``index``'s saved momentum is int8 and this run's is not, or
    the other way round (a float momentum converts between float dtypes; int8 codes do not)."""
    if head.velocity is None:
        return
    info_path = _present(path / "centers" / f"head{index}.rank0.json", check)
    try:
        info = json.loads(info_path.read_text())
        saved = info.get("momentum_dtype", info["center_dtype"]) if info["has_velocity"] else None
    except (ValueError, KeyError, TypeError) as exc:
        raise CheckpointError(f"checkpoint file {info_path} is corrupt: {type(exc).__name__}: {exc}") from exc
    if saved is not None and (saved == "int8") != (head.momentum_dtype == "int8"):
        raise CheckpointError(
            f"checkpoint {path}: the class centers' momentum of head{index} is stored as {saved}, this run's "
            f"classifier.momentum_dtype is {head.momentum_dtype}; resume with classifier.momentum_dtype={saved}")
