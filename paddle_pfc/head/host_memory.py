"""Does this machine have the memory for the head's persistable state? Checked before anything
is allocated.

On CPU the class centers and their momentum live in host memory. A shard that does not fit is
not refused by the allocator (Linux overcommits): the run builds, starts, and minutes later the
kernel's OOM killer ends it with SIGKILL and no message (docs/reliability.md). :func:`check_state_fits`
compares the state of this machine's ranks with the memory this machine (or its cgroup) has
available (:func:`available_memory`) and fails at once, naming the numbers. Imports no Paddle.
"""
from __future__ import annotations

from pathlib import Path

from paddle_pfc.utils.errors import UsageError

_GIB = 2**30
#: Where the cgroup files of the process's memory limit and use are (a container's limit is not in meminfo).
_CGROUP = Path("/sys/fs/cgroup")


class HeadMemoryError(UsageError):
    """The head's centers and momentum, or its planned step peak, need more memory than this machine has."""


def _meminfo_kib(text: str, field: str) -> int | None:
    for line in text.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return None


def available_memory(meminfo: str | None = None, cgroup: Path = _CGROUP) -> int | None:
    """Bytes a new allocation can get on this machine now: ``MemAvailable + SwapFree`` of
    ``/proc/meminfo``, capped by the cgroup's limit when the process has one (v2: ``memory.max -
    memory.current``; v1: ``memory.limit_in_bytes - memory.usage_in_bytes``); None when
    ``/proc/meminfo`` cannot be read (not Linux)."""
    try:
        text = meminfo if meminfo is not None else Path("/proc/meminfo").read_text()
    except OSError:
        return None
    available, swap = _meminfo_kib(text, "MemAvailable"), _meminfo_kib(text, "SwapFree") or 0
    if available is None:
        return None
    free = (available + swap) * 1024
    # cgroup v2, then v1 (whose "no limit" is a huge number, which min() passes over)
    for limit_file, usage_file in (("memory.max", "memory.current"),
                                   ("memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes")):
        try:
            limit = (cgroup / limit_file).read_text().strip()
            if limit != "max":
                free = min(free, int(limit) - int((cgroup / usage_file).read_text()))
            break
        except (OSError, ValueError):
            continue
    return max(0, free)


def ranks_phrase(local_ranks: int) -> str:
    """"this rank" or "N ranks on this machine"."""
    return f"{local_ranks} ranks on this machine" if local_ranks > 1 else "this rank"


def ranks_need(local_ranks: int) -> str:
    """"this rank needs" or "N ranks on this machine need"."""
    return f"{ranks_phrase(local_ranks)} need{'' if local_ranks > 1 else 's'}"


def check_state_fits(state_bytes: int, local_ranks: int, what: str, available: int | None = None,
                     center_dtype_setting: str = "center_dtype='bfloat16'",
                     planner_hint: str = "paddle-pfc-plan") -> None:
    """Raise :class:`HeadMemoryError` when the ``local_ranks`` ranks of this machine, each holding
    ``state_bytes`` of exact persistable state (``what``: whose), exceed ``available`` bytes
    (default :func:`available_memory`; no check when it is unknown). The message names
    ``center_dtype_setting`` and ``planner_hint`` as remedies (the caller's spelling of them)."""
    available = available_memory() if available is None else available
    if available is None or state_bytes * local_ranks <= available:
        return
    raise HeadMemoryError(
        f"the head does not fit in memory: {what} take {state_bytes / _GIB:.2f} GiB a rank; "
        f"{ranks_need(local_ranks)} {state_bytes * local_ranks / _GIB:.2f} GiB, and {available / _GIB:.2f} GiB "
        f"is available (MemAvailable + SwapFree, within the cgroup's limit). Use more machines (ranks), "
        f"{center_dtype_setting} (half the bytes) or fewer classes; {planner_hint} plans a configuration")
