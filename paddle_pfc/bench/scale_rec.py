"""RecordIO files of the size users bring (millions of images) without their bytes, for benchmarks.

Two layouts, each with a real ``.idx`` of every record:

* :func:`write_sparse_rec` — insightface's (header record 0, images ``1..N``, identity records
  ``N+1..N+C``) over a sparse ``.rec``: images ``stride`` bytes apart, only the header, the
  identity records and the images listed in ``image_keys`` written. Reading the dataset touches
  record 0, the first identity record and the last record; a loader reads the ``image_keys``.
* :func:`write_packed_rec` — no header record (keys ``0..N-1``, as files past 2^24 keys are, whose
  key bounds float32 header labels cannot hold): every image record is written, as its 32-byte
  record header with an empty image, since the class count reads every one, except the
  ``image_keys``, which hold a JPEG.
"""
from __future__ import annotations

import os

import numpy as np

from paddle_pfc.data.recordio import IRHeader, frame_record, pack

_DIGITS = 19


def idx_text(keys: np.ndarray, offsets: np.ndarray) -> bytes:
    """``key<TAB>offset`` lines of non-negative ``keys`` / ``offsets`` (vectorized)."""
    lines = np.concatenate([_ascii(keys), np.full((keys.size, 1), 9, np.uint8), _ascii(offsets),
                            np.full((keys.size, 1), 10, np.uint8)], axis=1)
    return lines[lines != 0].tobytes()


def _ascii(values: np.ndarray) -> np.ndarray:
    """Right-aligned decimal digits of ``values`` as uint8 ``[n, 19]``, leading positions 0."""
    values = np.asarray(values, dtype=np.int64)
    out = np.zeros((values.size, _DIGITS), np.uint8)
    rest = values.copy()
    for col in range(_DIGITS - 1, -1, -1):
        digit = (rest % 10).astype(np.uint8) + 48
        out[:, col] = np.where((rest > 0) | (col == _DIGITS - 1), digit, 0)
        rest //= 10
    return out


def class_ends(num_images: int, num_classes: int) -> np.ndarray:
    """End (exclusive, 0-based image number) of each class when ``num_images`` are spread evenly."""
    counts = np.full(num_classes, num_images // num_classes, np.int64)
    counts[:num_images % num_classes] += 1
    return np.cumsum(counts)


def _write_idx(idx_path: str, keys: np.ndarray, offsets: np.ndarray, block: int = 1 << 20) -> None:
    with open(idx_path, "wb") as f:
        for start in range(0, keys.size, block):
            f.write(idx_text(keys[start:start + block], offsets[start:start + block]))


def write_sparse_rec(folder: str, num_images: int, num_classes: int, image_keys: np.ndarray, jpeg: bytes,
                     stride: int = 1824) -> dict:
    """``folder/train.rec`` (sparse) and ``train.idx`` in insightface's layout; see the module doc.
    Returns ``{"rec", "idx", "rec_bytes"}``."""
    rec_path, idx_path = os.path.join(folder, "train.rec"), os.path.join(folder, "train.idx")
    ends = class_ends(num_images, num_classes)
    starts = np.concatenate(([0], ends[:-1]))
    head_at = num_images * stride
    with open(rec_path, "wb") as f:
        for key in np.unique(image_keys).tolist():
            record = frame_record(pack(IRHeader(0, float(np.searchsorted(ends, key - 1, side="right")), key, 0), jpeg))
            if len(record) > stride:
                raise ValueError(f"an image record of {len(record)} bytes does not fit the stride of {stride}")
            f.seek((key - 1) * stride)
            f.write(record)
        f.seek(head_at)
        f.write(frame_record(pack(IRHeader(2, [num_images + 1.0, num_images + 1.0 + num_classes], 0, 0), b"")))
        identities = np.zeros((num_classes, 10), np.uint32)  # frame (2 words), IRHeader (6), 2 float32 labels
        identities[:, 0], identities[:, 1], identities[:, 2] = 0xCED7230A, 32, 2
        ids = np.arange(num_images + 1, num_images + 1 + num_classes, dtype=np.uint64)
        identities[:, 4:6] = ids.view(np.uint32).reshape(-1, 2)
        identities[:, 8] = (starts + 1).astype(np.float32).view(np.uint32)
        identities[:, 9] = (ends + 1).astype(np.float32).view(np.uint32)
        f.write(identities.tobytes())
        size = f.tell()
    keys = np.concatenate((np.arange(1, num_images + 1), [0], ids.astype(np.int64)))
    offsets = np.concatenate((np.arange(num_images, dtype=np.int64) * stride, [head_at],
                              head_at + 40 + 40 * np.arange(num_classes, dtype=np.int64)))
    _write_idx(idx_path, keys, offsets)
    return {"rec": rec_path, "idx": idx_path, "rec_bytes": size}


def write_packed_rec(folder: str, num_images: int, num_classes: int, image_keys: np.ndarray, jpeg: bytes,
                     block: int = 1 << 20) -> dict:
    """``folder/train.rec`` and ``train.idx`` without a header record; see the module doc.
    Returns ``{"rec", "idx", "rec_bytes"}``."""
    rec_path, idx_path = os.path.join(folder, "train.rec"), os.path.join(folder, "train.idx")
    ends = class_ends(num_images, num_classes)
    offsets = np.empty(num_images, dtype=np.int64)
    with open(rec_path, "wb") as f:
        for start in range(0, num_images, block):
            keys = np.arange(start, min(num_images, start + block), dtype=np.int64)
            labels = np.searchsorted(ends, keys, side="right")
            records = np.zeros((keys.size, 8), np.uint32)  # frame (2 words), IRHeader (6 words)
            records[:, 0], records[:, 1] = 0xCED7230A, 24
            records[:, 3] = labels.astype(np.float32).view(np.uint32)
            records[:, 4:6] = keys.astype(np.uint64).view(np.uint32).reshape(-1, 2)
            images = {int(j): frame_record(pack(IRHeader(0, float(labels[j]), int(keys[j]), 0), jpeg))
                      for j in np.flatnonzero(np.isin(keys, image_keys))}
            sizes = np.full(keys.size, 32, np.int64)
            sizes[list(images)] = [len(record) for record in images.values()]
            offsets[start:start + keys.size] = f.tell() + np.cumsum(sizes) - sizes
            done = 0
            for j, record in sorted(images.items()):  # in key order: the offsets count up
                f.write(records[done:j].tobytes())
                f.write(record)
                done = j + 1
            f.write(records[done:].tobytes())
        size = f.tell()
    _write_idx(idx_path, np.arange(num_images, dtype=np.int64), offsets)
    return {"rec": rec_path, "idx": idx_path, "rec_bytes": size}
