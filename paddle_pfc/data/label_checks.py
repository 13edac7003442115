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
_CHUNK = 1 << 23


def _powers(n: int, base: np.uint64) -> np.ndarray:
    out = np.full(n, base, np.uint64)
    out[0] = 1
    return np.cumprod(out)


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
                pw, ipw = _powers(max(_CHUNK, hi - lo) + 1, _BASE), _powers(max(_CHUNK, hi - lo) + 1, _BASE_INVERSE)
            sums = np.zeros(hi - lo + 1, np.uint64)
            np.cumsum(buf[lo:hi].astype(np.uint64) * pw[:hi - lo], out=sums[1:])
            s, e = starts[k:m] - lo, ends[k:m] - lo
            out[k:m] = ((sums[e] - sums[s]) * ipw[s]) ^ ((e - s).astype(np.uint64) * np.uint64(0xFF51AFD7ED558CCD))
            k = m
    return out


def irregular(buf: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Indices of the paths not in normal relative form (absolute ones among them)."""
    n = offsets.size - 1
    if n == 0 or buf.size == 0:
        return np.flatnonzero(offsets[1:] == offsets[:-1])
    slash, dot = buf == 47, buf == 46
    odd = np.flatnonzero(slash[:-1] & (dot[1:] | slash[1:]))  # '/.' or '//'
    owners = np.searchsorted(offsets, odd, side="right") - 1
    starts, ends = offsets[:-1], offsets[1:]
    empty = ends == starts
    first = buf[np.minimum(starts, buf.size - 1)]
    last = buf[np.maximum(ends - 1, 0)]
    edge = np.flatnonzero(empty | (first == 47) | (first == 46) | (last == 47))
    return np.union1d(owners, edge)


def folder_ends(buf: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The position of each path's last ``/`` (its start when it has none)."""
    pos = np.where(buf == 47, np.arange(buf.size, dtype=np.int64), -1)
    last = np.maximum.accumulate(pos) if pos.size else pos
    ends = offsets[1:] - 1
    found = last[np.maximum(ends, 0)] if last.size else np.full(ends.size, -1)
    return np.maximum(found, offsets[:-1])


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


def folder_groups(buf: np.ndarray, offsets: np.ndarray, regular: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(representatives, others)`` among the ``regular`` path indices (increasing): one path of
    each distinct folder, and the paths whose folder bytes differ from their hash group's
    representative (a hash collision: each is checked alone)."""
    if regular.size == 0:
        return regular, regular
    starts = offsets[:-1][regular]
    cut = folder_ends(buf, offsets)[regular]
    hashes = span_hashes(buf, starts, cut)
    run_start = np.ones(hashes.size, bool)
    run_start[1:] = hashes[1:] != hashes[:-1]  # a folder's images are usually listed together
    runs = np.flatnonzero(run_start)
    _, first_run, group = np.unique(hashes[runs], return_index=True, return_inverse=True)
    del hashes
    first = runs[first_run]
    rep = first[group.reshape(-1)][np.cumsum(run_start) - 1]
    lengths = cut - starts
    same = (lengths == lengths[rep]) & same_spans(buf, starts, starts[rep], np.minimum(lengths, lengths[rep]))
    return regular[first], regular[~same]


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
