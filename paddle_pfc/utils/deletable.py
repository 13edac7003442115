"""Whether a file or folder tree can be deleted, checked before anything of it is."""
from __future__ import annotations

import fcntl
import os
import struct
from pathlib import Path

__all__ = ["undeletable"]

_FS_IOC_GETFLAGS = 0x80086601
_IMMUTABLE_OR_APPEND = 0x10 | 0x20


def _locked(path: Path) -> bool:
    """Whether ``path`` carries the immutable or append-only attribute (``chattr +i`` / ``+a``),
    which stops even root from deleting it (or anything in it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        flags = struct.unpack("i", fcntl.ioctl(fd, _FS_IOC_GETFLAGS, bytes(8))[:4])[0]
    except OSError:  # a file system without these attributes
        return False
    finally:
        os.close(fd)
    return bool(flags & _IMMUTABLE_OR_APPEND)


def _writable_folder(folder: Path) -> str | None:
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"{folder} is not writable"
    if _locked(folder):
        return f"{folder} is immutable or append-only (lsattr)"
    return None


def undeletable(target: Path) -> str | None:
    """Why ``target`` (a file, or a folder and everything in it) cannot be deleted, or None."""
    problem = _writable_folder(target.parent)
    if problem or target.is_symlink() or not target.is_dir():
        return problem or (f"{target} is immutable or append-only (lsattr)" if _locked(target) else None)
    for dirpath, dirnames, filenames in os.walk(target):
        folder = Path(dirpath)
        if folder != target and os.path.ismount(folder):
            return f"{folder} is a mount point"
        problem = _writable_folder(folder)
        if problem:
            return problem
        for name in filenames + dirnames:
            if _locked(folder / name):
                return f"{folder / name} is immutable or append-only (lsattr)"
    return None
