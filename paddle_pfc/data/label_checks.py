"""The path checks of a parsed ``label.txt`` over its paths buffer: hashes, root escapes by folder,
images listed twice.

Paths in normal form (relative, no ``.``/``..`` component, no ``//``, no trailing ``/``, not starting
with ``.``) are checked vectorized: duplicates by a 64-bit hash of the path, the candidates then
compared byte for byte; the root escape once per distinct folder (one ``lstat`` per folder not seen
before, each folder's members compared byte for byte with the one resolved). The few other paths
(:func:`irregular`) go through ``os.path.normpath`` / ``os.path.realpath`` one by one.
"""
from __future__ import annotations

import os
import stat

import numpy as np

_BASE = np.uint64(0x9E3779B97F4A7C15)
_BASE_INVERSE = np.uint64(pow(0x9E3779B97F4A7C15, -1, 1 << 64))
_CHUNK = 1 << 20


_powers_cache: dict[int, np.ndarray] = {}


def _powers(n: int, base: np.uint64) -> np.ndarray:
    """``base ** k`` (mod 2^64) for ``k < n``, kept for the next call."""
    held = _powers_cache.get(int(base))
    if held is None or held.size < n:
        held = np.full(n, base, np.uint64)
        held[0] = 1
        _powers_cache[int(base)] = held = np.cumprod(held)
    return held


def release_powers() -> None:
    """Drop the powers :func:`span_hashes` keeps between calls (16 MB)."""
    _powers_cache.clear()


def span_hashes(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """A 64-bit hash of ``buf[starts[k]:ends[k]]`` for each ``k`` (spans in buffer order, not
    overlapping), computed a chunk of spans at a time."""
    out = np.empty(starts.size, np.uint64)
    k, n = 0, starts.size
    pw = ipw = np.empty(0, np.uint64)
    with np.errstate(over="ignore"):
        while k < n:
            lo = int(starts[k])
            m = min(n, max(k + 1, int(np.searchsorted(ends, lo + _CHUNK, side="right"))))
            hi = int(ends[m - 1])
            if pw.size < hi - lo + 1:
                size = max(_CHUNK, hi - lo) + 1
                pw, ipw = _powers(size, _BASE), _powers(size, _BASE_INVERSE)
            sums = np.zeros(hi - lo + 1, np.uint64)
            np.cumsum(buf[lo:hi].astype(np.uint64) * pw[:hi - lo], out=sums[1:])
            s, e = starts[k:m] - lo, ends[k:m] - lo
            out[k:m] = ((sums[e] - sums[s]) * ipw[s]) ^ ((e - s).astype(np.uint64) * np.uint64(0xFF51AFD7ED558CCD))
            k = m
    return out


def _chunks(offsets: np.ndarray, nbytes: int = _CHUNK):
    """``(i, j)`` ranges of paths holding at most ``nbytes`` bytes (at least one path each)."""
    i, n = 0, offsets.size - 1
    while i < n:
        j = min(n, max(i + 1, int(np.searchsorted(offsets, offsets[i] + nbytes, side="right")) - 1))
        yield i, j
        i = j


def irregular(buf: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Indices of the paths not in normal relative form (absolute ones among them)."""
    found = [np.flatnonzero(offsets[1:] == offsets[:-1])]
    for i, j in _chunks(offsets):
        lo, hi = int(offsets[i]), int(offsets[j])
        seg = buf[lo:hi]
        slash, dot = seg == 47, seg == 46
        odd = np.flatnonzero(slash[:-1] & (dot[1:] | slash[1:])) + lo  # '/.' or '//'
        found.append(np.searchsorted(offsets, odd, side="right") - 1)
        starts, ends = offsets[i:j], offsets[i + 1:j + 1]
        full = ends > starts
        first, last = buf[starts[full]], buf[ends[full] - 1]
        found.append(np.arange(i, j)[full][(first == 47) | (first == 46) | (last == 47)])
    return np.unique(np.concatenate(found))


def folder_ends(buf: np.ndarray, offsets: np.ndarray, i: int, j: int) -> np.ndarray:
    """The position of the last ``/`` of paths ``i .. j-1`` (a path's start when it has none)."""
    lo, hi = int(offsets[i]), int(offsets[j])
    if hi == lo:
        return offsets[i:j].copy()
    last = np.maximum.accumulate(np.where(buf[lo:hi] == 47, np.arange(lo, hi, dtype=np.int64), -1))
    return np.maximum(last[np.maximum(offsets[i + 1:j + 1] - 1 - lo, 0)], offsets[i:j])


def same_spans(buf: np.ndarray, a: np.ndarray, b: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Whether ``buf[a[k]:a[k]+lengths[k]] == buf[b[k]:b[k]+lengths[k]]`` for each ``k`` (chunked)."""
    same = np.ones(a.size, bool)
    ends = np.cumsum(lengths)
    k = 0
    while k < a.size:
        m = max(k + 1, int(np.searchsorted(ends, (ends[k - 1] if k else 0) + (_CHUNK >> 2), side="right")))
        m = min(m, a.size)
        lens = lengths[k:m]
        owner = np.repeat(np.arange(k, m), lens)
        within = np.arange(owner.size) - np.repeat(np.cumsum(lens) - lens, lens)
        differs = buf[a[owner] + within] != buf[b[owner] + within]
        same[np.unique(owner[differs])] = False
        k = m
    return same


def folder_groups(buf: np.ndarray, offsets: np.ndarray, odd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(representatives, others)`` of the paths but the ``odd`` ones: the first path of each
    distinct folder (by hash), and the paths whose folder bytes differ from their hash group's
    representative (a hash collision: each is checked alone). Holds 14 bytes a path."""
    n = offsets.size - 1
    if n == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    hashes, lengths = np.empty(n, np.uint64), np.empty(n, np.int32)
    for i, j in _chunks(offsets):
        cut = folder_ends(buf, offsets, i, j)
        hashes[i:j], lengths[i:j] = span_hashes(buf, offsets[i:j], cut), cut - offsets[i:j]
    alone = np.zeros(n, bool)
    alone[odd] = True
    run_start = alone.copy()  # a folder's images are usually listed together: one run each
    run_start[0] = True
    run_start[1:] |= (hashes[1:] != hashes[:-1]) | alone[:-1]
    runs = np.flatnonzero(run_start)
    del run_start
    grouped = ~alone[runs]
    _, first, group = np.unique(hashes[runs[grouped]], return_index=True, return_inverse=True)
    del hashes, alone
    reps = runs[grouped][first]
    rep_of_run = np.full(runs.size, -1, np.int64)
    rep_of_run[grouped] = reps[group.reshape(-1)]
    others = []
    for i, j in _chunks(offsets, _CHUNK * 8):
        index = np.arange(i, j)
        rep = rep_of_run[np.searchsorted(runs, index, side="right") - 1]
        check = (rep >= 0) & (rep != index)
        index, rep = index[check], rep[check]
        size = lengths[index]
        same = (size == lengths[rep]) & same_spans(buf, offsets[index], offsets[rep], np.minimum(size, lengths[rep]))
        others.append(index[~same])
    return reps, np.concatenate(others) if others else np.empty(0, np.int64)


class FolderResolver:
    """The real path of folders below ``root`` (normal-form relative paths), one ``lstat`` per
    folder not resolved before; ``inside`` tells whether a real path is ``root`` or below it."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self._prefix = self.root.rstrip(os.sep) + os.sep
        self._folders: dict[str, str] = {}

    def inside(self, real: str) -> bool:
        return real == self.root or real.startswith(self._prefix)

    def real(self, folder: str) -> str:
        got = self._folders.get(folder)
        if got is None:
            parent, _, name = folder.rpartition("/")
            candidate = os.path.join(self.real(parent) if parent else self.root, name)
            try:
                link = stat.S_ISLNK(os.lstat(candidate).st_mode)
            except OSError:
                link = False
            got = self._folders[folder] = os.path.realpath(candidate) if link else candidate
        return got
