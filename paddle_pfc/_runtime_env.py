"""Process-level settings that must be in place before Paddle loads its math libraries.

Imported first by ``paddle_pfc/__init__.py``. On AMD CPUs Paddle's MKL picks a slow generic code
path for matrix products; ``MKL_DEBUG_CPU_TYPE=5`` selects the AVX2 kernels (measured here: the
[256,512]x[512,50000] head matmul runs about 2.2x faster). The variable is only set when the user
has not set it and the CPU reports vendor ``AuthenticAMD``; on Intel CPUs nothing changes.

glibc's malloc returns freed buffers above its (dynamic) mmap threshold, and heap memory above its
trim threshold, to the kernel; the next step then faults the same pages in again, zeroing each one
(measured here: ~100k page faults and 0.2 s of system time per step of a 1M-class head, a third of
its overhead). ``apply`` therefore fixes the mmap threshold at glibc's maximum (32 MiB, above the
head's blocks) and the trim threshold at 2 GiB with ``mallopt``, unless the user set
``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` (or those ``GLIBC_TUNABLES``) or
``PADDLE_PFC_MALLOC_TUNING=0``. The price: the RSS stays at its peak instead of shrinking between
steps (the planner, :mod:`paddle_pfc.planner`, plans that peak).
"""
from __future__ import annotations

import ctypes
import os

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 * 2**20   # glibc's largest accepted value (HEAP_MAX_SIZE / 2 on 64-bit)
TRIM_THRESHOLD = 2**31 - 1    # mallopt takes an int


def _cpu_vendor() -> str:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="ignore") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def tune_malloc() -> bool:
    """Keep freed CPU buffers in the process (see the module docstring); True if applied."""
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    user_set = any(k in os.environ for k in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")) \
        or "mmap_threshold" in tunables or "trim_threshold" in tunables
    if user_set or os.environ.get("PADDLE_PFC_MALLOC_TUNING", "1") == "0":
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
            bool(libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    except (OSError, AttributeError):  # not glibc: nothing to tune
        return False


def apply() -> None:
    """Set math-library and allocator defaults for this process (idempotent)."""
    if "MKL_DEBUG_CPU_TYPE" not in os.environ and _cpu_vendor() == "AuthenticAMD":
        os.environ["MKL_DEBUG_CPU_TYPE"] = "5"
    tune_malloc()
