"""MXNet RecordIO (``train.rec`` / ``train.idx``) without mxnet, in insightface's layout.

Record framing (dmlc-core ``RecordIOWriter``), all little-endian uint32::

    magic 0xced7230a | lrec = (cflag << 29) | length | payload | zero pad to 4 bytes

``cflag`` 0 = whole record; 1/2/3 = first/middle/last part of a record that was
split because its payload contained the magic word at a 4-byte aligned position
(the reader re-inserts the magic between parts).

Payload of an image record: ``IRHeader`` packed as ``struct 'IfQQ'``
(flag uint32, label float32, id uint64, id2 uint64; 24 bytes); when
``flag > 0``, ``flag`` float32 labels follow (``label`` field then 0) and the
first of them is the class label; then the encoded (JPEG) image.

``.idx``: text lines ``key<TAB>byte offset``.

insightface convention (MS1M / Glint360K, ``face2rec2.py``): images have keys
``1..N``; record key 0 is a header with ``flag=2`` and labels ``[N+1, N+1+C]``;
keys ``N+1 .. N+C`` are identity records with labels ``[first_key, end_key)``
of each identity's (contiguous) images. Header/identity records carry no image.
"""
from __future__ import annotations

import logging
import math
import numbers
import operator
import os
import struct
import time
from collections import namedtuple
from collections.abc import Iterable

import numpy as np

from paddle_pfc.utils.errors import BudgetError, InputDataError

from ._image import SizeLike, as_size, decode_rgb, fit_size
from .rec_index import read_idx_file, timed_index  # noqa: F401  (read_idx_file: also read from here)
from .rec_labels import all_labels, max_label
from .shape_policy import DEFAULT_NON_SQUARE, checked_non_square

_log = logging.getLogger("paddle_pfc.data")

MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", MAGIC)
_IR_FORMAT = "<IfQQ"
_IR_SIZE = struct.calcsize(_IR_FORMAT)  # 24
_LEN_MASK = (1 << 29) - 1

IRHeader = namedtuple("IRHeader", ["flag", "label", "id", "id2"])
IRHeader.__doc__ = "Image record header: flag, label (float or float32 array), id, id2."


# --------------------------------------------------------------------------- pack / unpack
def pack(header: IRHeader, payload: bytes) -> bytes:
    """Pack ``header`` + ``payload`` like ``mx.recordio.pack``.

    A scalar ``header.label`` is stored in the header (flag=0); a sequence label
    is stored as ``flag=len`` float32 values after the header (label field 0).
    """
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        head = struct.pack(_IR_FORMAT, 0, float(header.label), int(header.id), int(header.id2))
        return head + bytes(payload)
    label = np.asarray(header.label, dtype="<f4").reshape(-1)
    head = struct.pack(_IR_FORMAT, label.size, 0.0, int(header.id), int(header.id2))
    return head + label.tobytes() + bytes(payload)


def unpack(record: bytes, where: str = "record") -> tuple[IRHeader, bytes]:
    """Inverse of :func:`pack`: ``(IRHeader, payload)``; label is a float (flag 0) or float32 array."""
    if len(record) < _IR_SIZE:
        raise ValueError(f"{where}: record of {len(record)} bytes is shorter than the {_IR_SIZE}-byte IRHeader")
    flag, label, rid, rid2 = struct.unpack_from(_IR_FORMAT, record, 0)
    body = record[_IR_SIZE:]
    if flag > 0:
        if len(body) < 4 * flag:
            raise ValueError(f"{where}: IRHeader flag={flag} needs {4 * flag} label bytes, only {len(body)} present")
        label = np.frombuffer(body, dtype="<f4", count=flag).astype(np.float32)
        body = body[4 * flag:]
    return IRHeader(flag, label, rid, rid2), body


def header_class_label(header: IRHeader) -> float:
    """The class label of an image record (``label`` or ``label[0]`` when flag > 0)."""
    return float(header.label) if header.flag == 0 else float(header.label[0])


# --------------------------------------------------------------------------- framing
def _encode_lrec(cflag: int, length: int) -> bytes:
    return struct.pack("<II", MAGIC, (cflag << 29) | length)


def frame_record(buf: bytes) -> bytes:
    """Frame one record exactly like dmlc ``RecordIOWriter::WriteRecord``."""
    buf = bytes(buf)
    n = len(buf)
    if n >= (1 << 29):
        raise ValueError(f"record of {n} bytes is too large for RecordIO (< 2^29)")
    out = []
    start = 0
    for i in range(0, n - n % 4, 4):  # aligned magic words must be split out
        if buf[i:i + 4] == _MAGIC_BYTES:
            out.append(_encode_lrec(1 if start == 0 else 2, i - start))
            out.append(buf[start:i])
            start = i + 4
    out.append(_encode_lrec(3 if start != 0 else 0, n - start))
    out.append(buf[start:])
    pad = (-n) % 4  # dmlc pads by the full record length
    out.append(b"\0" * pad)
    return b"".join(out)


def read_record_at(fd: int, offset: int, file_size: int, path: str) -> tuple[bytes, int]:
    """Read the (possibly multi-part) record starting at ``offset`` of open file ``fd``.

    Returns ``(payload, next_offset)``. Raises ``ValueError`` naming ``path`` and
    the offset for a bad magic, a truncated header/payload, or a broken part chain.
    """
    parts: list[bytes] = []
    pos = offset
    first = True
    while True:
        if pos + 8 > file_size:
            raise ValueError(f"{path}: truncated record at offset {pos} (record starts at {offset}): "
                             f"need 8 header bytes, file has {file_size}")
        head = os.pread(fd, 8, pos)
        if len(head) != 8:
            raise ValueError(f"{path}: short read at offset {pos}")
        magic, lrec = struct.unpack("<II", head)
        if magic != MAGIC:
            raise ValueError(f"{path}: bad RecordIO magic 0x{magic:08x} at offset {pos} "
                             f"(expected 0x{MAGIC:08x}; corrupt file or wrong .idx offset)")
        cflag, length = lrec >> 29, lrec & _LEN_MASK
        if cflag not in (0, 1, 2, 3) or (first and cflag in (2, 3)) or (not first and cflag in (0, 1)):
            raise ValueError(f"{path}: invalid record part flag {cflag} at offset {pos}")
        padded = (length + 3) & ~3
        if pos + 8 + length > file_size:
            raise ValueError(f"{path}: truncated record at offset {pos}: payload of {length} bytes "
                             f"runs past end of file ({file_size} bytes)")
        data = os.pread(fd, length, pos + 8) if length else b""
        if len(data) != length:
            raise ValueError(f"{path}: short read of {length} bytes at offset {pos + 8}")
        parts.append(data)
        pos += 8 + padded
        if cflag in (0, 3):
            return (data if len(parts) == 1 else _MAGIC_BYTES.join(parts)), min(pos, file_size)
        first = False


# --------------------------------------------------------------------------- writer
class RecordIOWriter:
    """Sequential writer of ``.rec`` + ``.idx`` (``write_idx(key, payload)``). Use as a context manager."""

    def __init__(self, rec_path: str, idx_path: str):
        self.rec_path, self.idx_path = rec_path, idx_path
        self._rec = open(rec_path, "wb")
        self._idx = open(idx_path, "w", encoding="ascii", newline="\n")
        self._pos = 0

    def write_idx(self, key: int, payload: bytes) -> int:
        """Append one record with index ``key``; returns its byte offset."""
        framed = frame_record(payload)
        off = self._pos
        self._rec.write(framed)
        self._idx.write(f"{int(key)}\t{off}\n")
        self._pos += len(framed)
        return off

    def close(self) -> None:
        if self._rec is not None:
            self._rec.close()
            self._idx.close()
            self._rec = self._idx = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def write_insightface_rec(out_dir: str, items: Iterable[tuple[int, bytes]], num_classes: int | None = None,
                          prefix: str = "train", presorted: bool = False) -> dict:
    """Write ``(label, jpeg_bytes)`` items as ``{prefix}.rec/.idx`` in insightface's layout.

    Items are stably sorted by label so every identity is contiguous (with
    ``presorted=True`` they are streamed as given - no memory held - and must
    have non-decreasing labels). Images get keys ``1..N`` (flag 0, scalar float
    label); then header key 0 (``flag=2, label=[N+1, N+1+C]``) and one identity
    record per class ``0..C-1`` (``[first_key, end_key)``, an empty range for a
    class without images), with ``C = num_classes`` or ``max(label)+1``.
    Returns ``{"num_images": N, "num_classes": C, "rec": path, "idx": path}``. The files are
    written under other names and renamed over ``{prefix}.rec/.idx`` only when complete: a run that
    fails leaves no partial pair, and an earlier pair in ``out_dir`` as it was.
    """
    if not presorted:
        items = sorted(((int(lab), data) for lab, data in items), key=lambda t: t[0])
    os.makedirs(out_dir, exist_ok=True)
    rec_path = os.path.join(out_dir, prefix + ".rec")
    idx_path = os.path.join(out_dir, prefix + ".idx")
    partial = f".partial-{os.getpid()}"  # renamed over rec_path / idx_path only when all is written
    try:
        with RecordIOWriter(rec_path + partial, idx_path + partial) as w:
            n, C = _write_layout(w, items, num_classes)
        os.replace(rec_path + partial, rec_path)
        os.replace(idx_path + partial, idx_path)
    finally:
        for path in (rec_path + partial, idx_path + partial):
            if os.path.exists(path):
                os.remove(path)
    return {"num_images": n, "num_classes": C, "rec": rec_path, "idx": idx_path}


def _write_layout(w: RecordIOWriter, items: Iterable[tuple[int, bytes]],
                  num_classes: int | None) -> tuple[int, int]:
    """Write the images (keys 1..N), the header (key 0) and the identity records to ``w``; ``(N, C)``."""
    ranges = {}  # label -> [first_key, end_key)
    n = 0
    last = -1
    for lab, data in items:
        lab = int(lab)
        if lab < 0 or (num_classes is not None and lab >= num_classes):
            raise ValueError(f"write_insightface_rec: label {lab} outside [0, {num_classes})")
        if lab < last:
            raise ValueError(f"write_insightface_rec: presorted items not sorted by label ({lab} after {last})")
        n += 1
        if n + 1 >= (1 << 24) or lab >= (1 << 24):
            raise ValueError("write_insightface_rec: labels/keys beyond 2^24 are not exact in float32")
        w.write_idx(n, pack(IRHeader(0, float(lab), n, 0), data))
        ranges.setdefault(lab, [n, n])[1] = n + 1
        last = lab
    if n == 0:
        raise ValueError("write_insightface_rec: no items")
    C = last + 1 if num_classes is None else int(num_classes)
    if n + 1 + C >= (1 << 24):
        raise ValueError("write_insightface_rec: labels/keys beyond 2^24 are not exact in float32")
    w.write_idx(0, pack(IRHeader(2, [float(n + 1), float(n + 1 + C)], 0, 0), b""))
    nxt = 1
    for c in range(C):
        s, e = ranges.get(c, (nxt, nxt))
        nxt = e
        w.write_idx(n + 1 + c, pack(IRHeader(2, [float(s), float(e)], n + 1 + c, 0), b""))
    return n, C


# --------------------------------------------------------------------------- reader
class RecordDataset:
    """Random-access reader of an insightface ``train.rec`` / ``train.idx`` pair.

    ``ds[i] -> (rgb uint8 [H, W, 3], label int)`` (resized to ``image_size``
    if given and different). If record 0 is an insightface header (flag > 0),
    the images are keys ``1 .. header.label[0]-1`` and ``header_num_classes`` is
    ``label[1]-label[0]``; otherwise every key in the ``.idx`` is an image (as
    in arcface_torch's ``MXFaceDataset``).

    ``num_classes``: explicit value, else the header's identity count, else
    ``max(label)+1`` from one vectorized pass over all record headers
    (:mod:`~paddle_pfc.data.rec_labels`). A record whose label is
    not an integer in ``[0, num_classes)`` raises ``ValueError`` naming the file,
    record key and offset; corrupt/truncated data raises ``ValueError`` naming
    the file, record and offset. Picklable (file handle reopened lazily per process); the index
    is numpy arrays (:mod:`~paddle_pfc.data.rec_index`), shared by forked loader workers.

    Checked at construction (``ValueError``; :class:`InputDataError` naming the ``.idx`` line for
    the index): a malformed line, a key or offset listed twice or an offset past the ``.rec``'s end
    in the ``.idx``; bytes after the last indexed record (a stale ``.idx``); a header announcing
    more images or identities than the ``.idx`` lists (:class:`BudgetError`, before allocating),
    whose images are not all indexed,
    whose identity range leaves keys unexplained, or whose first identity record holds an image;
    ``num_classes`` below the last image's label. Record 0 is a header only if it carries labels
    and no image (a multi-label image record at key 0 is an image). Index lines lost between two
    records are found only when that key is read. No record is skipped (``num_skipped`` is 0).
    """

    num_skipped = 0

    def __init__(self, root: str | None = None, rec_path: str | None = None, idx_path: str | None = None,
                 image_size: SizeLike = 112, num_classes: int | None = None,
                 non_square: str = DEFAULT_NON_SQUARE):
        if rec_path is None:
            if root is None:
                raise ValueError("RecordDataset: give root or rec_path")
            rec_path = os.path.join(root, "train.rec")
        if idx_path is None:
            idx_path = os.path.splitext(rec_path)[0] + ".idx"
        self.rec_path, self.idx_path = os.path.abspath(rec_path), os.path.abspath(idx_path)
        self.image_size = as_size(image_size)
        self.non_square = checked_non_square(non_square)
        if not os.path.isfile(self.rec_path):
            raise ValueError(f"{self.rec_path}: record file not found")
        self._file_size = os.path.getsize(self.rec_path)
        keys, self._index = timed_index(self.idx_path, self.rec_path, self._file_size)
        self._fd = None
        self._pid = None
        self._check_end_of_data()
        self.header: IRHeader | None = None
        self.header_num_classes: int | None = None
        # The image keys in file order; None when they are _first_key, _first_key+1, ... (no array)
        self._keys: np.ndarray | None = None if self._index.in_order else keys
        self._first_key, self._num_images = self._index.min_key, int(keys.size)
        del keys
        header_offset = self._index.offset(0)
        if header_offset is not None:
            where = f"{self.rec_path} record 0 (offset {header_offset})"
            h, body = unpack(self._read_payload(0), where)
            if h.flag > 0 and not body:  # a header carries no image; a multi-label image record does
                self._keys = None  # the image keys are 1 .. label[0]-1: no array of them
                self._first_key, self._num_images = 1, self._header_image_end(h, where) - 1
        if num_classes is not None:
            self.num_classes = int(num_classes)
            if self.header_num_classes is not None and self.header_num_classes > self.num_classes:
                self._check_last_label()
            elif self.header_num_classes is not None and self.header_num_classes < self.num_classes:
                _log.warning("data: num_classes=%d, but the header of %s lists %d identities: %d classes have no "
                             "image (give none: the header's count)", self.num_classes, self.rec_path,
                             self.header_num_classes, self.num_classes - self.header_num_classes)
        elif self.header_num_classes is not None:
            self.num_classes = int(self.header_num_classes)
            _log.info("data: %d classes (header record of %s)", self.num_classes, self.rec_path)
        else:
            self.num_classes = self._count_classes()

    # -- file access (lazy per process so the dataset can be sent to worker processes)
    def _fileno(self) -> int:
        if self._fd is None or self._pid != os.getpid():
            self._fd = os.open(self.rec_path, os.O_RDONLY)
            self._pid = os.getpid()
        return self._fd

    def offset_of(self, key: int) -> int | None:
        """Byte offset of record ``key`` in the ``.rec`` (None if the ``.idx`` does not list it)."""
        return self._index.offset(key)

    def _read_payload(self, key: int) -> bytes:
        off = self._index.offset(key)
        if off is None:
            raise InputDataError(self.idx_path, f"no record with key {key}")
        return read_record_at(self._fileno(), off, self._file_size, f"{self.rec_path}: record {key}")[0]

    # -- checks at construction: each costs a few reads, or a pass over the .idx's keys
    def _check_end_of_data(self) -> None:
        """The record at the highest offset must end where the file ends (else the ``.idx`` misses
        records: appended ones, or lost index lines at its end)."""
        key, offset = self._index.last_key, self._index.last_offset
        end = read_record_at(self._fileno(), offset, self._file_size, f"{self.rec_path}: record {key}")[1]
        if end < self._file_size:
            raise ValueError(f"{self.rec_path}: {self._file_size - end} bytes follow the last record that "
                             f"{self.idx_path} indexes (key {key} at offset {offset}): the .idx is stale or "
                             "incomplete (records appended, or index lines lost); rebuild it")

    def _header_image_end(self, h: IRHeader, where: str) -> int:
        """The end ``label[0]`` of the image keys ``1 .. label[0]-1`` of an insightface header record
        ``h``, checked against the ``.idx``: no more images or identities than it lists (refused
        before allocating), every announced image indexed, no key beyond the identity records, and the
        first identity record without an image. Sets ``header`` and ``header_num_classes``."""
        if h.flag < 2:
            raise ValueError(f"{where}: header record has flag={h.flag}, expected >= 2 labels")
        end_img, id_end = float(h.label[0]), float(h.label[1])
        if not (end_img.is_integer() and id_end.is_integer() and 2 <= end_img <= id_end):
            raise ValueError(f"{where}: header labels [{end_img}, {id_end}] are not the key bounds "
                             "[first identity, end] of insightface's layout (2 <= first identity <= end)")
        end_img, id_end = int(end_img), int(id_end)
        listed = self._index.size
        for what, declared in (("images", end_img - 1), ("identities", id_end - end_img)):
            if declared > listed:
                raise BudgetError(self.rec_path, f"the number of {what} its header record announces", declared,
                                  listed, entry="record 0",
                                  hint=f"the entries of {self.idx_path}: the header does not describe this file")
        missing, first_missing = self._index.missing_in(1, end_img)
        if missing:
            raise ValueError(f"{where}: the header announces images 1..{end_img - 1}, but {self.idx_path} "
                             f"lacks {missing} of them (first: key {first_missing})")
        extra, first_extra = self._index.keys_outside(0, id_end)
        if extra:
            raise ValueError(f"{where}: {self.idx_path} holds {extra} key(s) beyond the header's images "
                             f"1..{end_img - 1} and identities {end_img}..{id_end - 1} (first: key "
                             f"{first_extra}): the header does not describe this file")
        if self._index.offset(end_img) is not None:
            _, body = unpack(self._read_payload(end_img), f"{self.rec_path}: record {end_img}")
            if body:
                raise ValueError(f"{self.rec_path}: record {end_img}, the first identity record by the header, "
                                 f"holds an image ({len(body)} bytes): the header announces fewer images "
                                 "than the file holds")
        self.header, self.header_num_classes = h, id_end - end_img
        return end_img

    def _count_classes(self) -> int:
        """``max(label) + 1`` over every image record (no header record to say it): one vectorized
        pass over the records' headers, with a line saying what it found."""
        started = time.perf_counter()
        best = max_label(self.rec_path, len(self), self._offsets_of_samples, self._file_size,
                         lambda i: self.read_label(i, check=False))
        _log.info("data: %d classes (the largest label of %d records of %s, no header record) in %.1f s",
                  best + 1, len(self), self.rec_path, time.perf_counter() - started)
        return best + 1

    def _offsets_of_samples(self, start: int, stop: int) -> np.ndarray:
        """The ``.rec`` offsets of samples ``start .. stop-1``."""
        if self._keys is None:
            return self._index.offsets_of(np.arange(start, stop, dtype=np.int64) + self._first_key)
        return self._index.offsets_of(self._keys[start:stop])

    def _check_last_label(self) -> None:
        """With fewer classes than the header's identities: the last image's label (the largest in
        insightface's layout, images sorted by identity) must be below ``num_classes``."""
        key = self.key_of(len(self) - 1)
        label = self.read_label(len(self) - 1, check=False)
        if label >= self.num_classes:
            raise InputDataError(f"{self.rec_path}: num_classes={self.num_classes}, but the header lists "
                                 f"{self.header_num_classes} identities and the last image (record {key}) has "
                                 f"label {label}: give num_classes >= {label + 1} (data.num_classes), or null (the "
                                 "header's count)")

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_fd"] = None
        d["_pid"] = None
        return d

    def __del__(self):
        fd = getattr(self, "_fd", None)
        if fd is not None and self._pid == os.getpid():
            try:
                os.close(fd)
            except OSError:
                pass

    def __len__(self) -> int:
        return self._num_images

    @property
    def keys(self) -> np.ndarray:
        """The image records' keys in sample order (int64; made on each access for a range of keys)."""
        if self._keys is None:
            return np.arange(self._first_key, self._first_key + self._num_images, dtype=np.int64)
        return self._keys

    def key_of(self, index: int) -> int:
        """The record key of sample ``index`` (negative counts from the end; IndexError outside)."""
        index = operator.index(index)
        if not -self._num_images <= index < self._num_images:
            raise IndexError(f"sample {index} outside a dataset of {self._num_images}")
        if self._keys is None:
            return index % self._num_images + self._first_key
        return int(self._keys[index])

    def _where(self, key: int) -> str:
        return f"{self.rec_path}: record {key} (offset {self._index.offset(key)})"

    def _check_label(self, value: float, key: int, check: bool) -> int:
        lab = int(value) if math.isfinite(value) else -1
        if lab != value or lab < 0:
            raise ValueError(f"{self._where(key)}: label {value!r} is not a non-negative integer")
        if check and lab >= self.num_classes:
            raise ValueError(f"{self._where(key)}: label {lab} outside [0, {self.num_classes})")
        return lab

    def read_label(self, index: int, check: bool = True) -> int:
        """Label of sample ``index`` (reads only the record, no image decode)."""
        key = self.key_of(index)
        h, _ = unpack(self._read_payload(key), self._where(key))
        return self._check_label(header_class_label(h), key, check)

    def __getitem__(self, index: int) -> tuple[np.ndarray, int]:
        key = self.key_of(index)
        where = self._where(key)
        h, img = unpack(self._read_payload(key), where)
        label = self._check_label(header_class_label(h), key, True)
        return fit_size(decode_rgb(img, where), self.image_size, self.non_square), label

    def read_labels(self) -> np.ndarray:
        """Every sample's label (int64 ``[len(self)]``, each checked against ``num_classes``), read from
        the records' headers in one vectorized pass (no image decode)."""
        labels = all_labels(self.rec_path, len(self), self._offsets_of_samples, self._file_size,
                            lambda i: self.read_label(i, check=False))
        bad = np.flatnonzero(labels >= self.num_classes)
        if bad.size:
            self.read_label(int(bad[0]))  # raises, naming the record
        return labels
