"""Process-level settings that must be in place before Paddle loads its math libraries.

Imported first by ``paddle_pfc/__init__.py``. On AMD CPUs Paddle's MKL picks a slow generic code
path for matrix products; ``MKL_DEBUG_CPU_TYPE=5`` selects the AVX2 kernels (measured here: the
[256,512]x[512,50000] head matmul runs about 2.2x faster). The variable is only set when the user
has not set it and the CPU reports vendor ``AuthenticAMD``; on Intel CPUs nothing changes.

glibc's malloc decides how freed CPU buffers are kept, and the head's step allocates many
block-sized temporaries, so the choice is a trade-off between page faults and resident memory.
``PADDLE_PFC_MALLOC`` picks it at import (``apply``) with ``mallopt``:

* unset / ``default``: glibc's own dynamic thresholds (nothing changes).
* ``speed``: mmap threshold fixed at glibc's maximum (32 MiB) and trim threshold at 2 GiB, so
  freed buffers stay in the process and are reused without faulting pages in again. Measured
  here (1M classes, ratio 0.1, 2 ranks, on Paddle's kernels): step 0.77 s instead of 1.00 s, but
  the RSS holds about 1 GiB more than the tensors need (fragmentation across the executor's
  thread arenas).
* ``memory``: mmap and trim thresholds at 1 MiB, so every large buffer is returned to the kernel
  when freed: the RSS follows the live tensors (what :mod:`paddle_pfc.planner` plans), at the
  price of a page fault per fresh page. For runs that must fit.
"""
from __future__ import annotations

import ctypes
import os

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: (mmap threshold, trim threshold) in bytes per mode; 32 MiB is glibc's largest mmap threshold.
MALLOC_MODES = {"speed": (32 * 2**20, 2**31 - 1), "memory": (2**20, 2**20)}


def _cpu_vendor() -> str:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="ignore") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def tune_malloc(mode: str | None = None) -> str:
    """Apply ``mode`` (default: ``$PADDLE_PFC_MALLOC``) with glibc ``mallopt``; return the mode in
    effect ("default" when nothing was changed). Raises ValueError for an unknown mode."""
    mode = mode if mode is not None else os.environ.get("PADDLE_PFC_MALLOC", "default")
    if mode in ("", "default"):
        return "default"
    if mode not in MALLOC_MODES:
        raise ValueError(f"PADDLE_PFC_MALLOC must be 'default', 'speed' or 'memory', got {mode!r}")
    mmap_threshold, trim_threshold = MALLOC_MODES[mode]
    try:
        libc = ctypes.CDLL("libc.so.6")
        ok = libc.mallopt(_M_MMAP_THRESHOLD, mmap_threshold) and libc.mallopt(_M_TRIM_THRESHOLD, trim_threshold)
    except (OSError, AttributeError):  # not glibc: nothing to tune
        ok = False
    return mode if ok else "default"


def apply() -> None:
    """Set math-library and allocator defaults for this process (idempotent)."""
    if "MKL_DEBUG_CPU_TYPE" not in os.environ and _cpu_vendor() == "AuthenticAMD":
        os.environ["MKL_DEBUG_CPU_TYPE"] = "5"
    tune_malloc()  # an unknown PADDLE_PFC_MALLOC raises here, naming the variable
