"""What a benchmark rank's memory holds: its resident set (``/proc/self/status``, Linux) and Paddle's host
allocator statistic, each with its peak and a reset of that peak."""
from __future__ import annotations

import gc

import numpy as np
import paddle

from paddle_pfc.utils.paddle_compat import host_allocated_bytes, reset_host_allocated_peak


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def rss_mib() -> float:
    """Current resident set size of this process in MiB."""
    return _status_kib("VmRSS") / 1024.0


def peak_rss_mib() -> float:
    """Peak resident set size (VmHWM) since the last :func:`reset_peak_rss`, in MiB."""
    return _status_kib("VmHWM") / 1024.0


def allocated_mib(peak: bool = True) -> float:
    """Paddle's host allocator statistic "Allocated" (peak or current) in MiB; -1 if unavailable."""
    allocated = host_allocated_bytes(peak)
    return -1.0 if allocated is None else allocated / 2**20


def reset_peak_allocated() -> None:
    """Reset the peak of Paddle's host allocator statistic "Allocated" to its current value."""
    reset_host_allocated_peak()


def reset_peak_rss() -> bool:
    """Reset VmHWM to the current RSS (Linux ``clear_refs`` 5). False when not permitted."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def idle_overhead() -> float:
    """RSS (MiB) after a trivial static program has run: the fixed cost of a rank."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [4], "float32")
        y = x * 2.0 + 1.0
    exe = paddle.static.Executor(paddle.CPUPlace())
    with paddle.static.scope_guard(paddle.static.Scope()):
        exe.run(startup)
        exe.run(main, feed={"x": np.ones(4, np.float32)}, fetch_list=[y])
    gc.collect()
    return rss_mib()
