"""Process settings for fast CPU training: :func:`configure_process`, one explicit call.

Importing ``paddle_pfc`` changes nothing. :func:`paddle_pfc.init_distributed` calls
:func:`configure_process` (so a program written as the README shows gets it), and so do the
tools; a user may call it directly, before the first program runs. Each setting is decided from
the running machine, never assumed:

* **MKL on AMD CPUs.** Paddle's MKL picks a slow generic code path for matrix products on CPUs
  whose vendor is ``AuthenticAMD``; ``MKL_DEBUG_CPU_TYPE`` selects its kernels: ``7`` its AVX-512
  ones (Skylake-SP's subsets F, CD, BW, DQ, VL, which AMD's Zen 4 and Zen 5 have), ``5`` its AVX2
  ones. MKL reads the variable at its first call, so setting it after ``import paddle`` but before
  the first product works; ``7`` is faster than ``5`` where the AVX-512 subsets exist, and both
  than the generic path (figures: docs/performance.md). Set to ``7`` when the CPU is AMD with
  those AVX-512 subsets, to ``5`` when it is AMD with AVX2 only, and only when the user has not
  set it; elsewhere nothing changes.
* **malloc.** glibc's malloc decides how freed CPU buffers are kept, and the head's step allocates
  many block-sized temporaries, so the choice is a trade-off between page faults and resident
  memory. ``malloc=`` (default ``$PADDLE_PFC_MALLOC``, else ``speed``) sets it with ``mallopt``:

* ``default``: glibc's own dynamic thresholds (nothing changes).
* ``speed`` (the default): mmap threshold fixed at glibc's maximum (32 MiB) and trim threshold at 2 GiB, so
  freed buffers stay in the process and are reused without faulting pages in again: faster
  steps, but the RSS holds more than the tensors need (fragmentation across the executor's
  thread arenas; figures: docs/performance.md).
* ``memory``: mmap and trim thresholds at 1 MiB, so every large buffer is returned to the kernel
  when freed: the RSS follows the live tensors (what :mod:`paddle_pfc.head.planner` plans), at the
  price of a page fault per fresh page. For runs that must fit.

* **The executor's threads (CPU only).** Paddle 3.3's static executor runs a CPU program's ops on
  worker threads; glibc gives those threads their own malloc arenas, whose heaps are trimmed page
  by page whatever the thresholds above say, so every step faults its activations in again;
  running the ops in order on the calling thread (``FLAGS_new_executor_serial_run``) avoids those
  faults and is faster on CPU (figures: docs/performance.md). So when no GPU is visible, that
  flag is set (unless the user set it: the environment wins); GPU programs keep Paddle's
  scheduling, which overlaps streams.

The commands also give each rank its share of the cores before Paddle loads
(:func:`math_threads_for_this_rank`: Paddle alone would run its CPU math on one thread, so a
single-process ``train`` or ``validate`` left every other core idle; ranks that
``paddle.distributed.launch`` starts inherit its ``OMP_NUM_THREADS=1``); a user's own program sets
``OMP_NUM_THREADS`` itself. :func:`choose_mkl_kernels` is the MKL part alone, for the commands and
the inference models.
"""
from __future__ import annotations

import contextlib
import ctypes
import io
import os
import sys

from paddle_pfc.runtime.device import CpuInfo, cpu_info
from paddle_pfc.utils.errors import UsageError

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: (mmap threshold, trim threshold) in bytes per mode; 32 MiB is glibc's largest mmap threshold.
MALLOC_MODES = {"speed": (32 * 2**20, 2**31 - 1), "memory": (2**20, 2**20)}


def tune_malloc(mode: str | None = None) -> str:
    """Apply ``mode`` (default: ``$PADDLE_PFC_MALLOC``, else ``speed``) with glibc ``mallopt``;
    return the mode in effect ("default" when nothing was changed). Raises ValueError for an
    unknown mode, naming ``PADDLE_PFC_MALLOC``."""
    mode = mode if mode is not None else (os.environ.get("PADDLE_PFC_MALLOC") or "speed")
    if mode == "default":
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


def mkl_kernels_for(cpu: CpuInfo) -> str | None:
    """The ``MKL_DEBUG_CPU_TYPE`` that gives ``cpu`` MKL's fastest kernels it can run: ``"7"``
    (AVX-512) for an AMD CPU with :attr:`~paddle_pfc.runtime.device.CpuInfo.avx512_core`, ``"5"``
    (AVX2) for an AMD CPU with AVX2 only; None elsewhere (Intel CPUs get MKL's best path anyway)."""
    if cpu.vendor != "AuthenticAMD":
        return None
    if cpu.avx512_core:
        return "7"
    return "5" if cpu.has("AVX2") else None


def choose_mkl_kernels() -> str:
    """Set ``MKL_DEBUG_CPU_TYPE`` to :func:`mkl_kernels_for` the running CPU when the user has not
    set it (the math-library part of :func:`configure_process`, which the command-line tools and
    the inference models apply on their own: it is what makes MKL's products fast on AMD CPUs;
    it takes effect where MKL has not run yet). Returns the value in effect (``""``: none)."""
    kernels = mkl_kernels_for(cpu_info())
    if "MKL_DEBUG_CPU_TYPE" not in os.environ and kernels is not None:
        os.environ["MKL_DEBUG_CPU_TYPE"] = kernels
    return os.environ.get("MKL_DEBUG_CPU_TYPE", "")


def math_threads_for_this_rank(limit: int = 8) -> int | None:
    """Before Paddle is imported: set ``OMP_NUM_THREADS`` (which Paddle's CPU math, MKL and the
    native oneDNN ops read when they load; Paddle's default is one thread) to this rank's share of
    the cores: the CPUs this process may run on divided among the job's ranks on this machine, at
    most ``limit``; then import Paddle without the warning it prints for more than one thread (it
    is about ranks that would share cores, which this share avoids). For the commands that train
    or embed images (``train``, and ``validate`` / ``eval_ijb`` on a checkpoint). Nothing changes
    where the user set ``OMP_NUM_THREADS`` or Paddle is already imported (too late then). Returns
    the thread count set, or None."""
    from paddle_pfc.utils.launch_env import local_world_size

    if os.environ.get("OMP_NUM_THREADS", "").strip() or "paddle" in sys.modules:
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    threads = max(1, min(limit, cores // local_world_size()))
    os.environ["OMP_NUM_THREADS"] = str(threads)
    _import_paddle_without_thread_warning()
    return threads


#: The lines Paddle prints to stderr at import when ``OMP_NUM_THREADS`` > 1.
_PADDLE_THREAD_WARNING = ("WARNING: OMP_NUM_THREADS set to ", "PLEASE USE OMP_NUM_THREADS WISELY")


def _import_paddle_without_thread_warning() -> None:
    """``import paddle``, whatever it writes to ``sys.stderr`` passed on except :data:`_PADDLE_THREAD_WARNING`."""
    written = io.StringIO()
    with contextlib.redirect_stderr(written):
        import paddle  # noqa: F401
    sys.stderr.write("".join(line for line in written.getvalue().splitlines(keepends=True)
                             if not line.startswith(_PADDLE_THREAD_WARNING)))


SERIAL_FLAG = "FLAGS_new_executor_serial_run"
#: Paddle's switches of its global oneDNN kernels (two flags in 3.3, each enough on its own).
ONEDNN_FLAGS = ("FLAGS_use_onednn", "FLAGS_use_mkldnn")


class ProcessSettingError(UsageError, RuntimeError):
    """A process-wide Paddle setting with which paddle_pfc's CPU programs cannot run."""


def refuse_global_onednn() -> None:
    """Raise :class:`ProcessSettingError` naming the flag when no GPU is visible and Paddle's global
    oneDNN mode is on (``FLAGS_use_onednn`` or ``FLAGS_use_mkldnn``, from the environment or
    ``paddle.set_flags``): in Paddle 3.3.1 it kills a CPU training step with a segmentation fault
    in its batch norm kernel (either flag) or a ``dnnl::error`` in the head's ops
    (docs/paddle-notes.md, docs/performance.md). GPU programs do not use those kernels."""
    import paddle

    from paddle_pfc.runtime.device import gpu_visible

    on = [flag for flag in ONEDNN_FLAGS if paddle.get_flags([flag])[flag]]
    if on and not gpu_visible():
        raise ProcessSettingError(
            f"{' and '.join(on)} {'is' if len(on) == 1 else 'are'} on: Paddle 3.3's global oneDNN mode crashes "
            "CPU training (a segmentation fault in its batch norm, dnnl::error in the head's ops). Unset it: "
            "paddle_pfc already runs the backbones' convolutions on oneDNN through its own ops (PADDLE_PFC_NATIVE)")


def serial_executor_on_cpu() -> bool:
    """Run static programs' ops in order on the calling thread when no GPU is visible and the
    user has not set ``FLAGS_new_executor_serial_run`` (see the module docstring); returns whether
    the flag is now on."""
    import paddle

    from paddle_pfc.runtime.device import gpu_visible

    if SERIAL_FLAG not in os.environ and not gpu_visible():
        paddle.set_flags({SERIAL_FLAG: True})
    return bool(paddle.get_flags([SERIAL_FLAG])[SERIAL_FLAG])


def configure_process(malloc: str | None = None) -> dict[str, str]:
    """Apply this process's math-library, allocator and executor settings (idempotent; call it
    before the first program runs). ``malloc``: ``speed`` | ``memory`` | ``default`` (None:
    ``$PADDLE_PFC_MALLOC``, else ``speed``). Raises :class:`ProcessSettingError` when Paddle's
    global oneDNN mode is on without a GPU (:func:`refuse_global_onednn`). Returns what is in effect:
    ``{"malloc": mode, "mkl_debug_cpu_type": value or "", "serial_executor": "yes" | "no"}``."""
    choose_mkl_kernels()
    refuse_global_onednn()
    mode = tune_malloc(malloc)  # an unknown mode raises here, naming the variable
    serial = serial_executor_on_cpu()
    return {"malloc": mode, "mkl_debug_cpu_type": os.environ.get("MKL_DEBUG_CPU_TYPE", ""),
            "serial_executor": "yes" if serial else "no"}
