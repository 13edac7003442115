"""Does the head fit this machine's memory? Checked before anything is allocated.

On CPU the class centers and their momentum live in host memory. A shard that does not fit is
not refused by the allocator (Linux overcommits): the run builds, starts, and minutes later the
kernel's OOM killer ends it with SIGKILL and no message (measured 2026-11-27: the demo config
with 20M classes on one rank, killed at 24 GiB after 2.5 min). :func:`check_head_fits` compares
what :mod:`paddle_pfc.head.planner` plans for the ranks of this machine with the memory this
machine (or its cgroup) has available, and fails at once, naming the numbers, when the centers
and momentum, or the planned step peak beyond the plan's error, cannot fit; it warns when the
planned peak exceeds it by less.
"""
from __future__ import annotations

import logging
from pathlib import Path

from paddle_pfc.head import planner

log = logging.getLogger("paddle_pfc.train")

_GIB = 2**30
#: Where the cgroup files of the process's memory limit and use are (a container's limit is not in meminfo).
_CGROUP = Path("/sys/fs/cgroup")
#: A planned peak above this multiple of the available memory is an error, not a warning: the plan is
#: within 7 % of the measured peak RSS (docs/performance.md), and the backbone comes on top of it.
PLAN_MARGIN = 1.10


class HeadMemoryError(ValueError):
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


def _ranks(local_ranks: int) -> str:
    return f"{local_ranks} ranks on this machine" if local_ranks > 1 else "this rank"


def _ranks_need(local_ranks: int) -> str:
    return f"{_ranks(local_ranks)} need{'' if local_ranks > 1 else 's'}"


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
        f"{_ranks_need(local_ranks)} {state_bytes * local_ranks / _GIB:.2f} GiB, and {available / _GIB:.2f} GiB "
        f"is available (MemAvailable + SwapFree, within the cgroup's limit). Use more machines (ranks), "
        f"{center_dtype_setting} (half the bytes) or fewer classes; {planner_hint} plans a configuration")


def check_head_fits(num_classes: int, embedding_size: int, world_size: int, sample_ratio: float,
                    batch_size: int, center_dtype: str, compute_dtype: str, local_ranks: int,
                    available: int | None = None, warn: bool = True) -> planner.MemoryPlan:
    """The head's :func:`~paddle_pfc.head.planner.plan` per rank (``batch_size`` per rank, Momentum),
    checked against ``available`` bytes (default :func:`available_memory`) shared by the
    ``local_ranks`` ranks of this machine. Raises :class:`HeadMemoryError` when their centers and
    momentum alone exceed it (exact sizes), or their planned step peak exceeds it by more than
    :data:`PLAN_MARGIN`: the run cannot fit. Logs a warning (when ``warn``) when the planned peak
    exceeds it by less (the backbone comes on top of the plan). Returns the plan."""
    plan = planner.plan(num_classes, embedding_size, world_size, sample_ratio, batch_size, center_dtype,
                        compute_dtype, "momentum")
    available = available_memory() if available is None else available
    if available is None:
        return plan
    command = (f"paddle-pfc-plan --num-classes {num_classes} --embedding-size {embedding_size} --world-size "
               f"{world_size} --sample-ratio {sample_ratio:g} --batch-size {batch_size} --center-dtype "
               f"{center_dtype} --compute-dtype {compute_dtype} --memory {available / local_ranks / _GIB:.1f}GiB")
    check_state_fits(plan.centers + plan.momentum, local_ranks,
                     f"{num_classes:,} classes x {embedding_size} over {world_size} rank(s) are {plan.num_local:,} "
                     f"centers a rank, whose {center_dtype} values and momentum", available,
                     center_dtype_setting="classifier.center_dtype=bfloat16", planner_hint=f"`{command}`")
    peak = plan.total * local_ranks
    if peak > PLAN_MARGIN * available:
        raise HeadMemoryError(
            f"the head does not fit in memory: its planned step peak is {plan.total / _GIB:.2f} GiB a rank "
            f"({plan.num_local:,} centers and their momentum {(plan.centers + plan.momentum) / _GIB:.2f} GiB, "
            f"{plan.num_sample:,} kept a step, global batch {plan.global_batch}); {_ranks_need(local_ranks)} "
            f"{peak / _GIB:.2f} GiB, more than the {available / _GIB:.2f} GiB available (MemAvailable + SwapFree, "
            "within the cgroup's limit) by more than the plan's error. Use more machines (ranks), a lower "
            "classifier.sample_ratio, classifier.center_dtype=bfloat16 or fewer classes; "
            f"`{command}` plans a configuration")
    if peak > available and warn:
        log.warning("the head's planned peak is %.2f GiB for %s (%.2f GiB a rank), more than the %.2f GiB "
                    "available: the kernel may kill the run (SIGKILL, no message) once the step allocates "
                    "it. `%s` plans it", peak / _GIB, _ranks(local_ranks), plan.total / _GIB, available / _GIB, command)
    return plan
