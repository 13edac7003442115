"""Training checkpoints: atomic, strict, and resumable on any number of ranks.

Layout of one checkpoint directory (a folder every rank can write; shared across nodes)::

    step_000001200/
      meta.json                  progress (epoch, step_in_epoch, global_step), world_size,
                                 num_classes, embedding_size, the config, the center files
      backbone.pdparams          pickle {structured name (layer.state_dict key): ndarray}  (rank 0)
      states.pdstates            pickle {variable name: ndarray}: every other persistable of the
                                 training program except class centers and the learning rate
                                 (backbone momentum, ...)                                  (rank 0)
      centers/head0.weight.rank1.npy, centers/head0.velocity.rank1.npy, centers/head0.rank1.json
                                 each rank's shard rows [class_start, class_start + num_local)

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

import json
import os
import pickle
import shutil
import time
from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence

import numpy as np

from paddle_pfc.head.dtypes import HOST_DTYPES, convert

from paddle_pfc.head.classifier import class_split

FORMAT = "paddle_pfc.checkpoint/1"
LATEST = "latest"


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


class CheckpointError(ValueError):
    """A checkpoint that cannot be loaded into this program (names the tensor or field)."""


class NonFiniteStateError(FloatingPointError):
    """A tensor about to be written into a checkpoint holds inf/NaN (names it); nothing is saved."""


def check_finite(name: str, value: np.ndarray, bfloat16_bits: bool = False) -> None:
    """Raise :class:`NonFiniteStateError` naming ``name`` if a float array (or, with
    ``bfloat16_bits``, a uint16 array of bfloat16 bit patterns) holds inf or NaN."""
    value = np.asarray(value)
    if bfloat16_bits and value.dtype == np.uint16:
        bad = np.count_nonzero((value & 0x7F80) == 0x7F80)
    elif np.issubdtype(value.dtype, np.floating):
        bad = value.size - np.count_nonzero(np.isfinite(value))
    else:
        return
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
    """``[(kind, variable name)]`` of a classifier's shard: its centers and their momentum."""
    return [("weight", head.weight.name)] + ([("velocity", head.velocity.name)]
                                             if head.velocity is not None else [])


def _disk_error(path: Path, exc: OSError) -> OSError:
    """``exc`` re-raised with the path it failed on (``write``/``fsync`` errors carry none)."""
    return type(exc)(exc.errno, f"{exc.strerror or exc} while writing {path}")


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        raise _disk_error(path, exc) from exc


def _save_npy(path: str, value: np.ndarray) -> None:
    try:
        np.save(path, value)
    except OSError as exc:
        raise _disk_error(Path(path), exc) from exc


def _pickle(path: Path, obj) -> None:
    _atomic_write_bytes(path, pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def _unpickle(path: Path):
    if not path.exists():
        raise CheckpointError(f"checkpoint file missing: {path}")
    try:
        with open(path, "rb") as f:
            return pickle.load(f)
    except Exception as exc:
        raise CheckpointError(f"checkpoint file {path} is unreadable: {exc}") from exc


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
        named = Path(root) / pointer.read_text().strip()
        for step, folder in done:
            if folder == named and step >= done[-1][0]:
                return folder
    return done[-1][1]


def resolve_checkpoint(path: str | Path) -> Path:
    """A checkpoint folder, or a checkpoints root (→ its latest), checked to be complete."""
    path = Path(path)
    if (path / "meta.json").exists():
        return path
    found = latest_checkpoint(path) or latest_checkpoint(path / "checkpoints")
    if found is None:
        raise CheckpointError(f"no complete checkpoint at {path} (expected meta.json or a 'latest' pointer)")
    return found


def read_meta(path: str | Path) -> dict:
    meta_path = Path(path) / "meta.json"
    try:
        meta = json.loads(meta_path.read_text())
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint file missing: {meta_path}") from None
    except json.JSONDecodeError as exc:
        raise CheckpointError(f"checkpoint file {meta_path} is corrupt: {exc}") from exc
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{meta_path}: format {meta.get('format')!r}, expected {FORMAT!r}")
    return meta


def load_backbone_state(path: str | Path) -> tuple[dict, dict[str, np.ndarray]]:
    """``(config dict, {structured name: ndarray})`` of a checkpoint (or ``best/``) folder."""
    path = resolve_checkpoint(path)
    return read_meta(path)["config"], _unpickle(path / "backbone.pdparams")


# ------------------------------------------------------------------------------------- saving
def write_backbone(folder: Path, target: CheckpointTarget) -> None:
    """``folder/backbone.pdparams``: {structured name: ndarray} of ``target``'s backbone."""
    _pickle(Path(folder) / "backbone.pdparams", read_finite(target.scope, target.backbone_names))


def write_meta(folder: Path, meta: dict, world_size: int, num_heads: int) -> None:
    """``folder/meta.json``: ``meta`` plus the format, rank count and number of classifiers."""
    meta = dict(meta, format=FORMAT, world_size=world_size, num_heads=num_heads)
    _atomic_write_bytes(Path(folder) / "meta.json", json.dumps(meta, indent=1).encode())


class CheckpointWriter:
    """Writes checkpoints of one training run (every rank holds one, with the same arguments)."""

    def __init__(self, root: str | Path, rank: int, world_size: int, keep: int = 3,
                 wait_timeout: float = 1800.0) -> None:
        self.root, self.rank, self.world_size = Path(root), rank, world_size
        self.keep, self.wait_timeout = keep, wait_timeout
        if rank == 0:
            self.root.mkdir(parents=True, exist_ok=True)
            for stale in self.root.glob("step_*.partial"):  # left by a killed run
                shutil.rmtree(stale, ignore_errors=True)

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
        for path, value in shards:
            _save_npy(path, value)
        for index, head in enumerate(heads):
            info = partial / "centers" / f"head{index}.rank{self.rank}.json"
            _atomic_write_bytes(info, json.dumps(
                {"class_start": head.class_start, "num_local": head.num_local,
                 "has_velocity": head.velocity is not None, "center_dtype": head.center_dtype}).encode())
        if self.rank == 0:
            _pickle(partial / "backbone.pdparams", backbone)
            _pickle(partial / "states.pdstates", states)
        _atomic_write_bytes(partial / f"done.rank{self.rank}", b"")
        if self.rank != 0:
            return None
        deadline = time.monotonic() + self.wait_timeout
        while not all((partial / f"done.rank{r}").exists() for r in range(self.world_size)):
            if time.monotonic() > deadline:
                raise TimeoutError(f"checkpoint {partial}: not every rank wrote its shard within "
                                   f"{self.wait_timeout:.0f}s (is the output folder shared by all nodes?)")
            time.sleep(0.05)
        write_meta(partial, meta, self.world_size, len(heads))
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
            shutil.rmtree(old, ignore_errors=True)


def remove_checkpoints(root: str | Path) -> int:
    """Delete every checkpoint folder (complete or partial) and the ``latest`` pointer under
    ``root``; the number of folders removed (for a fresh run asked to overwrite)."""
    root = Path(root)
    removed = 0
    for folder in root.glob("step_*"):
        if folder.is_dir():
            shutil.rmtree(folder)
            removed += 1
    (root / LATEST).unlink(missing_ok=True)
    return removed


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


def reshard_rows(path: Path, head_index: int, kind: str, saved_world_size: int, start: int, count: int,
                 width: int, center_dtype: str = "float32") -> np.ndarray:
    """Rows ``[start, start+count)`` of the full center matrix, read from any saved split and
    returned in the host form of ``center_dtype`` (saved rows of another dtype are converted)."""
    out = np.empty((count, width), dtype=HOST_DTYPES[center_dtype])
    filled = 0
    for r in range(saved_world_size):
        info_path = path / "centers" / f"head{head_index}.rank{r}.json"
        if not info_path.exists():
            raise CheckpointError(f"checkpoint file missing: {info_path}")
        try:
            info = json.loads(info_path.read_text())
            lo, hi = max(start, info["class_start"]), min(start + count, info["class_start"] + info["num_local"])
        except (ValueError, KeyError, TypeError) as exc:
            raise CheckpointError(f"checkpoint file {info_path} is corrupt: {type(exc).__name__}: {exc}") from exc
        if lo >= hi:
            continue
        shard_path = path / "centers" / f"head{head_index}.{kind}.rank{r}.npy"
        if not shard_path.exists():
            raise CheckpointError(f"checkpoint file missing: {shard_path}")
        try:
            shard = np.load(shard_path, mmap_mode="r")
        except (ValueError, OSError, EOFError) as exc:  # truncated, or not an .npy
            raise CheckpointError(f"checkpoint file {shard_path} is unreadable: {exc}") from exc
        if shard.shape != (info["num_local"], width):
            raise CheckpointError(f"{shard_path}: shape {list(shard.shape)}, expected "
                                  f"{[info['num_local'], width]}")
        out[lo - start:hi - start] = convert(shard[lo - info["class_start"]:hi - info["class_start"]],
                                             center_dtype)
        filled += hi - lo
    if filled != count:
        raise CheckpointError(f"checkpoint centers of head{head_index} do not cover classes "
                              f"[{start}, {start + count})")
    return out


def load_checkpoint(path: str | Path, target: CheckpointTarget, expect: dict) -> dict:
    """Load a checkpoint (folder or root) into ``target``; return its meta.

    ``expect``: fields that must match (num_classes, embedding_size, backbone, ...).
    """
    scope, place, heads = target.scope, target.place, target.heads
    path = resolve_checkpoint(path)
    meta = read_meta(path)
    for key, value in expect.items():
        _check_same(key, meta.get(key), value)
    _check_same("number of classifiers", meta.get("num_heads"), len(heads))
    _assign_strict(scope, _unpickle(path / "backbone.pdparams"), dict(target.backbone_names), "backbone",
                   place)
    _assign_strict(scope, _unpickle(path / "states.pdstates"), {n: n for n in target.state_names},
                   "optimizer state", place)
    for index, head in enumerate(heads):
        start, count = class_split(head.num_classes, head.world_size, head.rank)
        for kind, name in center_tensors(head):
            rows = reshard_rows(path, index, kind, meta["world_size"], start, count, head.embedding_size,
                                head.center_dtype)
            write_tensor(scope, name, rows, place)
    return meta
