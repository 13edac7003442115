"""The files of a checkpoint: written atomically with their sha256 and size, read only when they
are regular files of the checkpoint, and checked against the checksums ``meta.json`` records."""
from __future__ import annotations

import errno
import fcntl
import hashlib
import mmap
import os
import stat
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from paddle_pfc.engine.checkpoint.common import FORMAT_V1, CheckpointError
from paddle_pfc.utils.atomic import atomic_write


def disk_error(path: Path, exc: OSError) -> OSError:
    """``exc`` re-raised with the path it failed on (``write``/``fsync`` errors carry none)."""
    return type(exc)(exc.errno, f"{exc.strerror or exc} while writing {path}")


class HashingFile:
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


def write_atomic(path: Path, write: Callable[[Any], None]) -> dict:
    """``write(file)`` into ``path`` atomically (temporary file, fsync, rename; on an error the
    temporary is removed); returns the file's ``{"sha256", "bytes"}``."""
    try:
        with atomic_write(path, "wb") as f:
            hashing = HashingFile(f)
            write(hashing)
    except OSError as exc:
        raise disk_error(path, exc) from exc
    return hashing.record()


#: Alignment of the memory, offsets and lengths of direct (``O_DIRECT``) writes.
DIRECT_ALIGN = 4096


class DirectFile:
    """A new file written past the page cache (``O_DIRECT``) through two page-aligned buffers of
    ``buffer_bytes``: ``write`` copies into one while a thread writes the other, full, to the disk in
    one request; :meth:`finish` writes the rest padded to :data:`DIRECT_ALIGN`, cuts the padding off
    and syncs; :meth:`close` always follows. Where the file system refuses direct writes it writes
    through the page cache."""

    def __init__(self, path: Path, buffer_bytes: int) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        try:
            self.fd = os.open(path, flags | getattr(os, "O_DIRECT", 0), 0o644)
        except OSError as exc:
            if exc.errno != errno.EINVAL:
                raise
            self.fd = os.open(path, flags, 0o644)
        size = max(DIRECT_ALIGN, buffer_bytes // DIRECT_ALIGN * DIRECT_ALIGN)
        self._buffers = (mmap.mmap(-1, size), mmap.mmap(-1, size))
        self.buffer, self.used, self.size = self._buffers[0], 0, 0
        self._writer, self._pending = ThreadPoolExecutor(max_workers=1), None

    def write(self, data) -> int:
        data = memoryview(data).cast("B")
        done = 0
        while done < data.nbytes:
            count = min(data.nbytes - done, len(self.buffer) - self.used)
            self.buffer[self.used:self.used + count] = data[done:done + count]
            self.used, done = self.used + count, done + count
            if self.used == len(self.buffer):
                self._flush(self.used)
        self.size += done
        return done

    def _flush(self, length: int) -> None:
        """Hand the first ``length`` bytes of the current buffer to the writer thread (after the
        previous one is written) and go on with the other buffer."""
        self._wait()
        self._pending = self._writer.submit(self._write_out, self.buffer, length)
        self.buffer = self._buffers[self.buffer is self._buffers[0]]
        self.used = 0

    def _wait(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def _write_out(self, buffer: mmap.mmap, length: int) -> None:
        view = memoryview(buffer)[:length]
        while view.nbytes:
            try:
                view = view[os.write(self.fd, view):]
            except OSError as exc:  # a file system that takes no direct write of this size
                if exc.errno != errno.EINVAL or not fcntl.fcntl(self.fd, fcntl.F_GETFL) & getattr(os, "O_DIRECT", 0):
                    raise
                fcntl.fcntl(self.fd, fcntl.F_SETFL, fcntl.fcntl(self.fd, fcntl.F_GETFL) & ~os.O_DIRECT)

    def finish(self) -> None:
        padded = -(-self.used // DIRECT_ALIGN) * DIRECT_ALIGN
        self.buffer[self.used:padded] = bytes(padded - self.used)
        self._flush(padded)
        self._wait()
        os.ftruncate(self.fd, self.size)
        os.fsync(self.fd)

    def close(self) -> None:
        self._writer.shutdown(wait=True)  # no write under way into a closed file
        os.close(self.fd)
        for buffer in self._buffers:
            buffer.close()


def write_direct(path: Path, write: Callable[[Any], None], buffer_bytes: int) -> dict:
    """:func:`write_atomic` for a large file, written through a :class:`DirectFile` (most disks take
    large direct writes many times faster than a page cache flushed by ``fsync``)."""
    path = Path(path)
    temporary = path.with_name(path.name + ".tmp")
    try:
        file = DirectFile(temporary, buffer_bytes)
        try:
            hashing = HashingFile(file)
            write(hashing)
            file.finish()
        finally:
            file.close()
        os.replace(temporary, path)
    except BaseException as exc:
        temporary.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise disk_error(path, exc) from exc
        raise
    return hashing.record()


def write_bytes(path: Path, data: bytes) -> dict:
    return write_atomic(path, lambda f: f.write(data))


def file_record(path: Path, limit: int | None = None) -> dict:
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


def read_small(path: Path, folder: Path, limit: int) -> str:
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


def present(path: Path, check: Callable[[Path], None] | None) -> Path:
    """``path``, after :class:`CheckpointError` if it is missing and ``check(path)`` if given."""
    if not path.exists():
        raise CheckpointError(f"checkpoint file missing: {path}")
    if check is not None:
        check(path)
    return path


class FileCheck:
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
            found = file_record(Path(path), limit=size)
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

    def check_all(self, rank: int = 0, world_size: int = 1) -> None:
        """Check every recorded file (format 1: nothing is recorded, see ``verify_checkpoint``); with
        ``world_size`` > 1 only rank ``rank``'s share of them (:func:`file_shares`)."""
        for rel in sorted(self.records or {}):
            if not isinstance(rel, str) or Path(rel).is_absolute() or ".." in Path(rel).parts:
                raise CheckpointError(f"{self.folder / 'meta.json'}: 'files' names {rel!r}, not a file of the "
                                      "checkpoint folder")
        for rel in file_shares(self.records or {}, world_size)[rank]:
            self(self.folder / rel)


def file_shares(records: dict, world_size: int) -> list[list[str]]:
    """The recorded files (``meta.json``'s ``files``) split among ``world_size`` ranks to be checked
    once each: largest first, each to the rank with the fewest bytes so far (the lowest rank on a
    tie), so every rank that reads the same records computes the same shares. Each share is sorted."""
    def size(rel: str) -> int:
        record = records[rel]
        value = record.get("bytes") if isinstance(record, dict) else None
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    shares: list[list[str]] = [[] for _ in range(world_size)]
    loads = [0] * world_size
    for rel in sorted(records, key=lambda r: (-size(r), r)):
        rank = loads.index(min(loads))
        shares[rank].append(rel)
        loads[rank] += size(rel)
    return [sorted(share) for share in shares]
