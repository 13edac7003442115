"""One training job per output folder: an exclusive lock on ``output_dir/train.lock``.

Rank 0 of a job takes a POSIX record lock (``fcntl.lockf``) on ``output_dir/train.lock`` before
the job writes anything into the folder, and writes who holds it (pid, host, start time,
command) into the file. The operating system releases the lock when the process ends, however
it ends (exit, crash, SIGKILL), so a lock file left by a dead process never blocks: only a held
lock counts, never the file's presence. The file stays in the folder after the job, naming its
last holder. A second job pointed at the same folder is refused with
:class:`OutputDirLockedError`, naming the job that holds it. The other ranks learn rank 0's
outcome through the job's TCP store, so every rank of the refused job stops.

Record locks belong to the process (a forked data-loader worker does not inherit them) and work
on network file systems that support POSIX locks (NFSv4, Lustre with ``flock``/``localflock``
mounts; a mount without lock support refuses the lock with an error naming the file).
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import shlex
import socket
import sys
import time
from pathlib import Path

from paddle_pfc.runtime.barrier import wait_for_count
from paddle_pfc.utils.errors import UsageError

LOCK_NAME = "train.lock"
_STORE_KEY = "paddle_pfc/output_lock"
_READ_KEY = "paddle_pfc/output_lock_read"
_held: dict[str, int] = {}  # resolved output folder -> file descriptor holding its lock


class OutputDirLockedError(UsageError, RuntimeError):
    """Another running job holds the output folder's lock (names that job)."""


def describe_holder(text: str) -> str:
    """``pid P on host H, started T, command: C`` from a lock file's contents (or what is known)."""
    try:
        info = json.loads(text)
        return (f"pid {info['pid']} on host {info['host']}, started {info['started']}, "
                f"command: {info['command']}")
    except (ValueError, KeyError, TypeError):
        return "a process whose details are not written yet"


def acquire(output_dir: str | os.PathLike) -> Path:
    """Lock ``output_dir`` for this process (creating the folder and ``train.lock``); the lock
    file's path. Idempotent within a process. :class:`OutputDirLockedError` when another process
    holds it; ``OSError`` naming the file when the file system refuses locks."""
    folder = Path(output_dir)
    key = str(folder.resolve())
    path = folder / LOCK_NAME
    if key in _held:
        return path
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        text = os.pread(fd, 1 << 16, 0).decode(errors="replace")
        os.close(fd)
        if exc.errno in (errno.EACCES, errno.EAGAIN):
            raise OutputDirLockedError(
                f"train.output_dir {folder} is in use by another training job: {describe_holder(text)} "
                f"(lock {path}). Wait for that job to end or stop it, or choose another train.output_dir"
            ) from None
        raise OSError(exc.errno, f"cannot lock {path}: {exc.strerror} (does the file system support "
                                 "POSIX locks?)") from exc
    holder = {"pid": os.getpid(), "host": socket.gethostname(),
              "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
              "command": shlex.join([os.path.basename(sys.executable), *sys.argv])}
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps(holder) + "\n").encode(), 0)
    os.fsync(fd)
    _held[key] = fd
    return path


def lock_for_job(output_dir: str | os.PathLike, rank: int, world_size: int, store=None,
                 ack_timeout: float = 120.0) -> None:
    """Rank 0 takes :func:`acquire`; on several ranks it publishes the outcome on the job's TCP
    store (``store``: default the global one) and every other rank raises the same
    :class:`OutputDirLockedError` when rank 0 could not lock. A refused rank 0 keeps the store
    (which it hosts) up until every other rank has read the outcome, or ``ack_timeout`` seconds.
    Call on every rank, before anything is written into ``output_dir``."""
    if world_size > 1 and store is None:
        from paddle_pfc.utils.paddle_compat import global_tcp_store

        store = global_tcp_store()
    if rank == 0:
        outcome = ""
        try:
            acquire(output_dir)
        except OutputDirLockedError as exc:
            outcome = str(exc)
            raise
        except OSError as exc:
            outcome = f"rank 0 could not lock the output folder: {exc}"
            raise
        finally:
            if world_size > 1:
                store.set(_STORE_KEY, outcome.encode() or b"ok")
                if outcome:  # rank 0 hosts the store: it stays until every other rank has read the refusal
                    wait_for_count(store, _READ_KEY, world_size - 1, ack_timeout)
        return
    if world_size > 1:
        outcome = store.get(_STORE_KEY).decode()
        if outcome != "ok":
            store.add(_READ_KEY, 1)
            raise OutputDirLockedError(outcome)
