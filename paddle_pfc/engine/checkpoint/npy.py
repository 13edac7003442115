"""Center shards as ``.npy`` files, streamed: written from a tensor's memory and read back into it a
bounded chunk of rows at a time, the bytes exactly those of ``np.save`` / ``np.load``."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from paddle_pfc.engine.checkpoint.common import (
    CHUNK_BYTES,
    CheckpointError,
    NonFiniteStateError,
    count_nonfinite,
    rows_per_chunk,
)
from paddle_pfc.engine.checkpoint.files import write_direct


def write_npy(path: Path, rows: np.ndarray, name: str, chunk_bytes: int = CHUNK_BYTES) -> dict:
    """``path`` holding ``rows`` (a C-contiguous 2-D array; a tensor's memory is not copied) byte for
    byte as ``np.save`` writes it: its header, then ``chunk_bytes`` of rows at a time, hashed as they
    go, past the page cache (:func:`write_direct`). Rows holding inf/NaN (uint16 arrays: bfloat16
    bit patterns) stop it with :class:`NonFiniteStateError` naming ``name`` and the rows, and no
    file is left. Returns the file's ``{"sha256", "bytes"}``."""
    if rows.ndim != 2 or not rows.flags.c_contiguous:
        raise ValueError(f"{name}: a shard is written from C-contiguous rows, got {rows.ndim} axes")
    step = rows_per_chunk(rows.strides[0], chunk_bytes)

    def write(file) -> None:
        np.lib.format.write_array_header_1_0(file, np.lib.format.header_data_from_array_1_0(rows))
        for start in range(0, rows.shape[0], step):
            chunk = rows[start:start + step]
            bad = count_nonfinite(chunk, bfloat16_bits=True)
            if bad:
                raise NonFiniteStateError(f"{name}: rows [{start}, {start + len(chunk)}) hold {bad} inf/NaN "
                                          "values; refusing to write a checkpoint that could not be resumed")
            if chunk.size:
                file.write(chunk)

    return write_direct(Path(path), write, chunk_bytes)


class NpyRows:
    """A 2-D ``.npy`` file whose rows are read into caller's memory (no mapping, no copy of the file).
    Opening reads and checks its header: an array of data (no pickled objects), in C order, and a
    file size that holds exactly the rows the header declares; :class:`CheckpointError` names the
    file otherwise."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            with open(self.path, "rb") as f:
                version = np.lib.format.read_magic(f)
                if version not in ((1, 0), (2, 0)):
                    raise ValueError(f"npy format version {version} is not one np.save writes for arrays")
                read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                               else np.lib.format.read_array_header_2_0)
                shape, fortran, dtype = read_header(f)
                self.offset = f.tell()
                size = f.seek(0, 2)
        except (ValueError, OSError, EOFError, SyntaxError) as exc:
            raise CheckpointError(f"checkpoint file {self.path} is unreadable: {exc}") from exc
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        problem = ("holds Python objects" if self.dtype.hasobject else
                   f"is {len(self.shape)}-dimensional, not rows" if len(self.shape) != 2 else
                   "is in Fortran order" if fortran and self.shape[1] > 1 else None)
        if problem:
            raise CheckpointError(f"checkpoint file {self.path} is unreadable: its array {problem}")
        self.row_bytes = self.shape[1] * self.dtype.itemsize
        declared = self.shape[0] * self.row_bytes
        if size - self.offset != declared:
            raise CheckpointError(f"checkpoint file {self.path} is unreadable: it holds {size - self.offset:,} "
                                  f"bytes of rows, its header declares {declared:,} ({list(self.shape)} "
                                  f"{self.dtype})")

    def read_into(self, out: np.ndarray, first: int) -> None:
        """Rows ``[first, first + len(out))`` into ``out`` (C-contiguous, of this file's dtype)."""
        if out.dtype != self.dtype or not out.flags.c_contiguous or out.shape[1:] != self.shape[1:]:
            raise ValueError(f"{self.path}: rows of {list(self.shape)} {self.dtype} read into "
                             f"{list(out.shape)} {out.dtype}")
        target = memoryview(out.reshape(-1)).cast("B")
        try:
            with open(self.path, "rb", buffering=0) as f:
                f.seek(self.offset + first * self.row_bytes)
                done = 0
                while done < target.nbytes:
                    got = f.readinto(target[done:])
                    if not got:
                        raise EOFError(f"{target.nbytes - done} bytes short of rows [{first}, {first + len(out)})")
                    done += got
        except (OSError, EOFError) as exc:
            raise CheckpointError(f"checkpoint file {self.path} is unreadable: {exc}") from exc
