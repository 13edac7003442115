"""The ``.idx`` of a RecordIO file as numpy arrays: parsed in blocks, checked, looked up by key.

``.idx`` lines are ``key<TAB>offset`` (ASCII decimal, non-negative). A block whose bytes are exactly
such lines is parsed by pandas' C reader; any other block (spaces, ``\\r\\n``, blank lines, a bad
line) is parsed line by line, which accepts what the format allows and names the first bad line.
Lookups go through the offsets as listed when the keys count up in file order (a header-less
``.rec`` from 0), a dense ``offset by key`` array when they are nearly contiguous (insightface's
files: keys ``1 .. N``, ``0``, ``N+1 .. N+C``), else the keys sorted once and ``searchsorted``.
"""
from __future__ import annotations

import io
import logging
import os
import time

import numpy as np

from paddle_pfc.utils.errors import InputDataError
from paddle_pfc.utils.heap import release_free_heap
from paddle_pfc.utils.progress import Progress

from ._text import ascii_int

_log = logging.getLogger("paddle_pfc.data")

_BLOCK_BYTES = 1 << 23
_MAX_DIGITS = 18  # below 2^63: a longer key or offset is no index entry
_PARSED_BYTES = b"0123456789\t\n"


def read_idx_file(idx_path: str, progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Parse a ``.idx`` file -> ``(keys int64 [K], offsets int64 [K])`` in file order.

    Raises :class:`InputDataError` naming the file and line for a malformed line, a negative or
    over-long number (more than 18 digits), non-ASCII text, and for an empty or unreadable file.
    ``progress``: log a progress line every 10 s (logger ``paddle_pfc.data``).
    """
    try:
        size = os.path.getsize(idx_path)
        with open(idx_path, "rb") as f:
            most = 1 + sum(block.count(b"\n") for block in iter(lambda: f.read(_BLOCK_BYTES), b""))
            f.seek(0)
            keys, offsets = np.empty(most, dtype=np.int64), np.empty(most, dtype=np.int64)
            count, line_no, rest = 0, 1, b""
            with Progress(f"data: read index {idx_path}", size, "bytes", write=_log, enabled=progress) as bar:
                while True:
                    block = f.read(_BLOCK_BYTES)
                    bar.update(len(block))
                    data = rest + block
                    cut = data.rfind(b"\n") + 1 if block else len(data)
                    data, rest = data[:cut], data[cut:]
                    if data:
                        data = data if data.endswith(b"\n") else data + b"\n"
                        lines = data.count(b"\n")
                        k, o = _parse_block(data, lines, line_no, idx_path)
                        keys[count:count + k.size], offsets[count:count + k.size] = k, o
                        count += k.size
                        line_no += lines
                    if not block:
                        break
    except OSError as e:
        raise InputDataError(idx_path, f"cannot read index file ({e.strerror or e})") from e
    release_free_heap()
    if count == 0:
        raise InputDataError(idx_path, "empty index file")
    return keys[:count], offsets[:count]


def _parse_block(data: bytes, lines: int, first_line: int, idx_path: str) -> tuple[np.ndarray, np.ndarray]:
    """Keys and offsets of the ``lines`` complete lines ``data`` (ends with a newline) starting at
    ``first_line``.

    The fast path takes ``data`` only when it holds nothing but digits, tabs and newlines, pandas
    reads exactly two integer columns and ``lines`` rows from it (a line of another field count, with
    an empty field, or a blank line fails that) and every number has at most 18 digits; any other
    block is parsed line by line, which names the first bad line.
    """
    if not data.translate(None, _PARSED_BYTES):
        import pandas as pd

        try:
            table = pd.read_csv(io.BytesIO(data), sep="\t", header=None, dtype=np.int64, engine="c",
                                na_filter=False).to_numpy()
        except (ValueError, OverflowError, pd.errors.ParserError):
            table = None
        if table is not None and table.shape == (lines, 2) and table.max() < 10 ** _MAX_DIGITS:
            return np.ascontiguousarray(table[:, 0]), np.ascontiguousarray(table[:, 1])
    return _parse_lines(data, first_line, idx_path)


def _parse_lines(data: bytes, first_line: int, idx_path: str) -> tuple[np.ndarray, np.ndarray]:
    """Line-by-line parse of ``data`` (tab or whitespace separated, blank lines skipped)."""
    keys: list[int] = []
    offsets: list[int] = []
    for line_no, line in enumerate(data.split(b"\n")[:-1], start=first_line):
        entry = f"line {line_no}"
        try:
            text = line.decode("ascii")
        except UnicodeDecodeError:
            raise InputDataError(idx_path, "index file is not ASCII text", entry) from None
        s = text.strip()
        if not s:
            continue
        parts = s.split("\t")
        if len(parts) != 2:
            parts = s.split()
        try:
            if len(parts) != 2:
                raise ValueError
            key, offset = ascii_int(parts[0]), ascii_int(parts[1])
        except ValueError:
            raise InputDataError(idx_path, f"malformed index line {text.rstrip()!r} (expected 'key<TAB>offset')",
                                 entry) from None
        for what, value, digits in (("key", key, parts[0]), ("offset", offset, parts[1])):
            if value < 0 or len(digits.lstrip("-")) > _MAX_DIGITS:
                raise InputDataError(idx_path, f"{what} {digits} is not an index {what} (a non-negative integer "
                                     f"of at most {_MAX_DIGITS} digits)", entry)
        keys.append(key)
        offsets.append(offset)
    return np.asarray(keys, dtype=np.int64).reshape(-1), np.asarray(offsets, dtype=np.int64).reshape(-1)


def entry_line(idx_path: str, entry: int) -> int:
    """The line number of the ``entry``-th (0-based) non-blank line of ``idx_path`` (for errors)."""
    with open(idx_path, "rb") as f:
        seen = -1
        for line_no, line in enumerate(f, start=1):
            seen += bool(line.strip())
            if seen == entry:
                return line_no
    return -1


class RecIndex:
    """Offsets of a ``.rec``'s records by key, from its ``.idx`` (keys and offsets in file order;
    the index takes ``offsets`` over: it may keep it as its lookup or sort it in place).
    ``in_order``: the keys are ``min_key, min_key+1, ...`` in file order (no other array is kept).

    Checked at construction (:class:`InputDataError` naming the ``.idx`` and the line): an offset
    at or beyond the end of the ``.rec`` (``file_size``), a key or an offset listed twice.
    """

    def __init__(self, keys: np.ndarray, offsets: np.ndarray, idx_path: str, rec_path: str, file_size: int):
        self.idx_path, self.size = idx_path, int(keys.size)
        bad = np.flatnonzero(offsets >= file_size)
        if bad.size:
            j = int(bad[0])
            raise InputDataError(idx_path, f"key {int(keys[j])} points at offset {int(offsets[j])} beyond the end "
                                 f"of {rec_path} ({file_size} bytes; truncated .rec?)",
                                 f"line {entry_line(idx_path, j)}")
        last = int(np.argmax(offsets))
        self.last_key, self.last_offset = int(keys[last]), int(offsets[last])
        self.min_key, self.max_key = int(keys.min()), int(keys.max())
        self.in_order = self.max_key - self.min_key == keys.size - 1 and _counts_up(keys, self.min_key)
        if self.in_order:  # keys min, min+1, ... in file order: the offsets are the lookup as they are
            self._dense, unique_keys = offsets, True
            self._sorted_keys = self._sorted_offsets = None
        elif self.max_key - self.min_key < 2 * keys.size + 1024:  # nearly contiguous: one slot a key
            self._dense = np.full(self.max_key - self.min_key + 1, -1, dtype=np.int64)
            self._dense[keys - self.min_key if self.min_key else keys] = offsets
            unique_keys = int(np.count_nonzero(self._dense >= 0)) == keys.size
            self._sorted_keys = self._sorted_offsets = None
        else:
            order = np.argsort(keys, kind="stable")
            self._sorted_keys, self._sorted_offsets = keys[order], offsets[order]
            del order
            unique_keys = not (self._sorted_keys[1:] == self._sorted_keys[:-1]).any()
            self._dense = None
        if not unique_keys:
            self._refuse_twice(keys, "key")
        if not (offsets[1:] > offsets[:-1]).all():  # a writer lists its records in file order
            by_offset = np.sort(offsets) if self.in_order else offsets
            by_offset.sort()  # else the caller's array: no copy of an index's size
            if (by_offset[1:] == by_offset[:-1]).any():
                del by_offset
                self._refuse_twice(read_idx_file(idx_path)[1], "offset")

    def _refuse_twice(self, values: np.ndarray, what: str) -> None:
        order = np.argsort(values, kind="stable")
        ordered = values[order]
        first = int(np.flatnonzero(ordered[1:] == ordered[:-1])[0])
        a, b = sorted((int(order[first]), int(order[first + 1])))
        raise InputDataError(self.idx_path, f"{what} {int(values[a])} appears in index entries {a + 1} and "
                             f"{b + 1} (lines {entry_line(self.idx_path, a)} and {entry_line(self.idx_path, b)}): "
                             "a .idx lists each record once")

    def offset(self, key: int) -> int | None:
        """The byte offset of record ``key``, None if the ``.idx`` does not list it."""
        if self._dense is not None:
            slot = key - self.min_key
            found = int(self._dense[slot]) if 0 <= slot < self._dense.size else -1
            return found if found >= 0 else None
        at = int(np.searchsorted(self._sorted_keys, key))
        if at < self.size and int(self._sorted_keys[at]) == key:
            return int(self._sorted_offsets[at])
        return None

    def offsets_of(self, keys: np.ndarray) -> np.ndarray:
        """Offsets of ``keys`` (all listed; -1 where one is not)."""
        keys = np.asarray(keys, dtype=np.int64)
        if self._dense is not None:
            slots = keys - self.min_key
            inside = (slots >= 0) & (slots < self._dense.size)
            return np.where(inside, self._dense[np.clip(slots, 0, self._dense.size - 1)], -1)
        at = np.minimum(np.searchsorted(self._sorted_keys, keys), self.size - 1)
        return np.where(self._sorted_keys[at] == keys, self._sorted_offsets[at], -1)

    def missing_in(self, start: int, end: int) -> tuple[int, int | None]:
        """``(how many, first)`` of the keys ``start .. end-1`` the ``.idx`` does not list."""
        counted, first = 0, None
        for lo in range(start, end, 1 << 22):
            hi = min(end, lo + (1 << 22))
            absent = np.flatnonzero(self.offsets_of(np.arange(lo, hi, dtype=np.int64)) < 0)
            counted += absent.size
            if first is None and absent.size:
                first = lo + int(absent[0])
        return counted, first

    def keys_outside(self, start: int, end: int) -> tuple[int, int | None]:
        """``(how many, first)`` of the listed keys outside ``start .. end-1``."""
        if self._dense is not None:
            below = np.flatnonzero(self._dense[:max(0, start - self.min_key)] >= 0) + self.min_key
            above = np.flatnonzero(self._dense[max(0, end - self.min_key):] >= 0) + max(end, self.min_key)
            outside = np.concatenate((below, above))
        else:
            listed = self._sorted_keys
            outside = listed[(listed < start) | (listed >= end)]
        return int(outside.size), (int(outside[0]) if outside.size else None)


def _counts_up(keys: np.ndarray, first: int, block: int = 1 << 22) -> bool:
    """Whether ``keys`` is ``first, first+1, ...`` (checked a block at a time)."""
    return all((keys[lo:lo + block] == np.arange(first + lo, first + min(keys.size, lo + block))).all()
               for lo in range(0, keys.size, block))


def timed_index(idx_path: str, rec_path: str, file_size: int) -> tuple[np.ndarray, RecIndex]:
    """``(keys in file order, RecIndex)`` of ``idx_path``, with one log line saying what was read and how
    long it took (and progress lines while a large file is read)."""
    started = time.perf_counter()
    size = os.path.getsize(idx_path) if os.path.isfile(idx_path) else 0
    keys, offsets = read_idx_file(idx_path, progress=size > (256 << 20))
    index = RecIndex(keys, offsets, idx_path, rec_path, file_size)
    _log.info("data: read index %s (%.1f MB, %d records) in %.1f s", idx_path, size / 1e6, keys.size,
              time.perf_counter() - started)
    return keys, index
