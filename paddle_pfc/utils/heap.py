"""The C heap of this process."""
from __future__ import annotations

import ctypes

__all__ = ["release_free_heap"]


def release_free_heap() -> None:
    """Give the C heap's free memory back to the system (glibc keeps what large parses freed);
    nothing where the C library has no ``malloc_trim``."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass
