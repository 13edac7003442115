"""Class labels of many RecordIO image records at once, read from their headers through a memory map.

A record whose label the vectorized read cannot take as is (split in parts, at an unaligned offset,
near the end of the file, or not a valid image record) goes to a per-record reader, which either
reads it or raises the error naming the file and record.
"""
from __future__ import annotations

import contextlib
import logging
import mmap
from collections.abc import Callable

import numpy as np

from paddle_pfc.utils.progress import Progress

_log = logging.getLogger("paddle_pfc.data")

_MAGIC = 0xCED7230A
_LEN_MASK = (1 << 29) - 1
_WORDS = 9  # magic, lrec, IRHeader (flag, label, id 2 words, id2 2 words), first label of a label vector
_BATCH = 1 << 16


def _label_batches(rec_path: str, count: int, offsets_of: Callable[[int, int], np.ndarray], file_size: int,
                   read_one: Callable[[int], int], what: str):
    """``(start, labels int64)`` of records ``start ..`` in batches, each record read from its header
    in the map or, where that cannot be taken as is, by ``read_one(i)`` (which raises for a bad record);
    progress lines every 10 s when there are many records (logger ``paddle_pfc.data``)."""
    with open(rec_path, "rb") as f, _mapped(f.fileno(), file_size) as mapped, \
            Progress(f"data: {what} over {count} records of {rec_path}", count, "records", write=_log,
                     enabled=count > (1 << 20)) as bar:
        words = np.frombuffer(mapped, dtype="<u4", count=file_size // 4) if mapped is not None else None
        for start in range(0, count, _BATCH):
            chunk = offsets_of(start, min(count, start + _BATCH))
            values, usable = _batch_labels(words, chunk, file_size)
            labels = np.where(usable, values, 0).astype(np.int64)
            for j in np.flatnonzero(~usable).tolist():
                labels[j] = int(read_one(start + j))
            yield start, labels
            bar.update(chunk.size)
            if mapped is not None and chunk.size:  # the pages read leave this process (they stay cached)
                first = max(0, int(chunk.min())) // mmap.PAGESIZE * mmap.PAGESIZE
                last = min(file_size, max(0, int(chunk.max())) + 4 * _WORDS)
                mapped.madvise(mmap.MADV_DONTNEED, first, max(0, last - first))
        del words


def max_label(rec_path: str, count: int, offsets_of: Callable[[int, int], np.ndarray], file_size: int,
              read_one: Callable[[int], int]) -> int:
    """The largest class label of ``count`` image records (``offsets_of(start, stop)``: the offsets of
    records ``start .. stop-1``); ``read_one(i)`` reads record ``i``'s label one record at a time (it
    raises for a bad record)."""
    best = -1
    for _, labels in _label_batches(rec_path, count, offsets_of, file_size, read_one, "count classes"):
        if labels.size:
            best = max(best, int(labels.max()))
    return best


def all_labels(rec_path: str, count: int, offsets_of: Callable[[int, int], np.ndarray], file_size: int,
               read_one: Callable[[int], int]) -> np.ndarray:
    """The class labels (int64 ``[count]``) of ``count`` image records, as :func:`max_label` reads them."""
    out = np.empty(count, np.int64)
    for start, labels in _label_batches(rec_path, count, offsets_of, file_size, read_one, "read labels"):
        out[start:start + labels.size] = labels
    return out


@contextlib.contextmanager
def _mapped(fd: int, file_size: int):
    """A read-only map of the file (None when it is too small to hold one record header)."""
    if file_size < 4 * _WORDS:
        yield None
        return
    mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    try:
        yield mapped
    finally:
        try:
            mapped.close()
        except BufferError:  # an error's traceback still holds a view: the map goes with it
            pass


def _batch_labels(words: np.ndarray | None, offsets: np.ndarray, file_size: int) -> tuple[np.ndarray, np.ndarray]:
    """``(labels float32, usable)`` of the records at ``offsets``: usable where the record is a whole
    (one-part) image record whose label is a non-negative integer."""
    if words is None:
        return np.zeros(offsets.size, np.float32), np.zeros(offsets.size, bool)
    aligned = (offsets % 4 == 0) & (offsets + 4 * _WORDS <= file_size)
    first_word = np.where(aligned, offsets // 4, 0)
    head = words[first_word[:, None] + np.arange(_WORDS)]
    magic, lrec, flag = head[:, 0], head[:, 1], head[:, 2]
    length = (lrec & _LEN_MASK).astype(np.int64)
    values = np.where(flag == 0, head[:, 3].view("<f4"), head[:, 8].view("<f4"))
    with np.errstate(invalid="ignore"):
        usable = (aligned & (magic == _MAGIC) & (lrec >> 29 == 0) & (length >= 24 + 4 * (flag > 0))
                  & (offsets + 8 + length <= file_size) & np.isfinite(values) & (values >= 0)
                  & (values == np.floor(values)))
    return values, usable
