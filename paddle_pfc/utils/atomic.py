"""Files written whole or not at all: a temporary beside the target, renamed over it."""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


@contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", **open_args) -> Iterator[IO]:
    """Open ``<path>.tmp`` for writing (``mode``: ``"w"`` or ``"wb"``; ``open_args`` as for
    :func:`open`); when the block ends without an error the file is flushed to disk and renamed
    over ``path`` (``os.replace``), so a reader sees the old file or the whole new one. On an error
    the temporary is removed and ``path`` is untouched."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write: mode must be 'w' or 'wb', got {mode!r}")
    target = Path(path)
    temporary = target.with_name(target.name + ".tmp")
    try:
        with open(temporary, mode, **open_args) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> None:
    """``path`` holds ``text`` afterwards, written through :func:`atomic_write`."""
    with atomic_write(path, "w", encoding=encoding) as handle:
        handle.write(text)


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    """``path`` holds ``data`` afterwards, written through :func:`atomic_write`."""
    with atomic_write(path, "wb") as handle:
        handle.write(data)
