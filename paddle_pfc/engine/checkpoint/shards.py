"""Center shards of any saved split read into the rows of this run's split (resharding), a bounded
chunk of rows at a time, straight into the memory they end in."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from paddle_pfc.engine.checkpoint.common import (
    CHUNK_BYTES,
    MAX_META_BYTES,
    CheckpointError,
    count_nonfinite,
    rows_per_chunk,
)
from paddle_pfc.engine.checkpoint.files import present, read_small
from paddle_pfc.engine.checkpoint.npy import NpyRows
from paddle_pfc.head.dtypes import HOST_DTYPES, convert


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
        info_path = present(path / "centers" / f"head{head_index}.rank{r}.json", check)
        text = read_small(info_path, path, MAX_META_BYTES)
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


def _open_shard(shard_path: Path, num_local: int, width: int, out_dtype: np.dtype, center_dtype: str) -> NpyRows:
    shard = NpyRows(shard_path)
    if shard.shape != (num_local, width):
        raise CheckpointError(f"{shard_path}: shape {list(shard.shape)}, expected {[num_local, width]}")
    if (shard.dtype == np.int8) != (out_dtype == np.int8):  # codes are no values: never converted
        raise CheckpointError(f"{shard_path}: {shard.dtype} rows, this run stores {center_dtype}")
    return shard


def read_rows_into(out: np.ndarray, path: Path, head_index: int, kind: str, saved_world_size: int, start: int,
                   center_dtype: str = "float32", check: Callable[[Path], Path] | None = None,
                   num_classes: int | None = None, chunk_bytes: int = CHUNK_BYTES) -> None:
    """Rows ``[start, start + len(out))`` of the full center matrix into ``out`` (C-contiguous
    ``[rows, width]`` in the host form of ``center_dtype``; a tensor's own memory), read from any
    saved split (which must partition the ``num_classes`` classes exactly: :func:`saved_split`)
    ``chunk_bytes`` of rows at a time; saved rows of another dtype are converted chunk by chunk.
    ``check(file)`` is called on each file before it is read (the checksum check of loading). Rows
    holding inf/NaN are a :class:`CheckpointError` naming the shard file and the classes; ``out``
    then holds the rows read before them."""
    path = Path(path)
    count, width = out.shape
    split = saved_split(path, head_index, saved_world_size, num_classes, check)
    total = split[-1][0] + split[-1][1] if split else 0
    if start < 0 or start + count > total:
        raise CheckpointError(f"checkpoint centers of head{head_index} do not cover classes "
                              f"[{start}, {start + count}): its shards hold [0, {total})")
    if out.dtype != HOST_DTYPES[center_dtype]:
        raise ValueError(f"rows of {center_dtype} are read into {HOST_DTYPES[center_dtype]}, not {out.dtype}")
    for r, (first, num_local) in enumerate(split):
        lo, hi = max(start, first), min(start + count, first + num_local)
        if lo >= hi:
            continue
        shard_path = present(path / "centers" / f"head{head_index}.{kind}.rank{r}.npy", check)
        shard = _open_shard(shard_path, num_local, width, out.dtype, center_dtype)
        step = rows_per_chunk(width * max(shard.dtype.itemsize, out.dtype.itemsize), chunk_bytes)
        for a in range(lo, hi, step):
            b = min(hi, a + step)
            rows = out[a - start:b - start]
            if shard.dtype == out.dtype:
                shard.read_into(rows, a - first)
            else:
                saved = np.empty((b - a, width), shard.dtype)
                shard.read_into(saved, a - first)
                rows[...] = convert(saved, center_dtype)
            bad = count_nonfinite(rows, bfloat16_bits=True)
            if bad:
                raise CheckpointError(f"checkpoint file {shard_path}: class centers ({kind}) of classes "
                                      f"[{a}, {b}) hold {bad} inf/NaN values")


def reshard_rows(path: Path, head_index: int, kind: str, saved_world_size: int, start: int, count: int,
                 width: int, center_dtype: str = "float32",
                 check: Callable[[Path], Path] | None = None, num_classes: int | None = None) -> np.ndarray:
    """Rows ``[start, start+count)`` of the full center matrix as a new host array in the form of
    ``center_dtype`` (:func:`read_rows_into`; for a tensor that offers no view of its memory)."""
    out = np.empty((count, width), dtype=HOST_DTYPES[center_dtype])
    read_rows_into(out, path, head_index, kind, saved_world_size, start, center_dtype, check, num_classes)
    return out
