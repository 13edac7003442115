"""Does the head fit this machine's memory? Checked before anything is allocated.

On CPU the class centers and their momentum live in host memory. A shard that does not fit is
not refused by the allocator (Linux overcommits): the run builds, starts, and minutes later the
kernel's OOM killer ends it with SIGKILL and no message (docs/reliability.md). :func:`check_head_fits` compares
what :mod:`paddle_pfc.head.planner` plans for the ranks of this machine with the memory this
machine (or its cgroup) has available, and fails at once, naming the numbers, when the centers
and momentum, or the planned step peak beyond the plan's error, cannot fit; it warns when the
planned peak exceeds it by less.
"""
from __future__ import annotations

import logging
import os

from paddle_pfc.head import planner
from paddle_pfc.head.host_memory import HeadMemoryError, available_memory, check_state_fits, ranks_need, ranks_phrase
from paddle_pfc.kernels.blockwise import native_bfloat16_products

__all__ = ["PLAN_MARGIN", "check_head_fits"]

log = logging.getLogger("paddle_pfc.train")

_GIB = 2**30

#: A planned peak above this multiple of the available memory is an error, not a warning: the plan is
#: within 5 % of the measured peak RSS (docs/benchmarks.md), and the backbone comes on top of it.
PLAN_MARGIN = 1.10


def check_head_fits(num_classes: int, embedding_size: int, world_size: int, sample_ratio: float,
                    batch_size: int, center_dtype: str, compute_dtype: str, local_ranks: int,
                    available: int | None = None, warn: bool = True,
                    momentum_dtype: str | None = None, bfloat16_products: bool | None = None,
                    optimizer: str = "momentum") -> planner.MemoryPlan:
    """The head's :func:`~paddle_pfc.head.planner.plan` per rank (``batch_size`` per rank, the centers'
    ``optimizer`` of ``train.optimizer``, the malloc mode of ``$PADDLE_PFC_MALLOC``), checked against
    ``available`` bytes (default :func:`available_memory`) shared by the ``local_ranks`` ranks of this machine.
    Raises :class:`HeadMemoryError` when their centers and
    momentum alone exceed it (exact sizes), or their planned step peak exceeds it by more than
    :data:`PLAN_MARGIN`: the run cannot fit. Logs a warning (when ``warn``) when the planned peak
    exceeds it by less (the backbone comes on top of the plan). ``bfloat16_products`` (None: as the
    head decides on this machine, :func:`paddle_pfc.kernels.blockwise.native_bfloat16_products`)
    plans the layout of a CPU with native bfloat16 products. Returns the plan."""
    malloc = planner.planned_malloc(os.environ.get("PADDLE_PFC_MALLOC"))
    if bfloat16_products is None:
        bfloat16_products = compute_dtype == "bfloat16" and native_bfloat16_products()
    plan = planner.plan(num_classes, embedding_size, world_size, sample_ratio, batch_size, center_dtype,
                        compute_dtype, optimizer, malloc=malloc, momentum_dtype=momentum_dtype,
                        bfloat16_products=bfloat16_products)
    available = available_memory() if available is None else available
    if available is None:
        return plan
    momentum_option = "" if momentum_dtype is None else f" --momentum-dtype {momentum_dtype}"
    momentum_option += "" if optimizer == "momentum" else f" --optimizer {optimizer}"
    command = (f"paddle-pfc-plan --num-classes {num_classes} --embedding-size {embedding_size} --world-size "
               f"{world_size} --sample-ratio {sample_ratio:g} --batch-size {batch_size} --center-dtype "
               f"{center_dtype}{momentum_option} --compute-dtype {compute_dtype} --malloc {malloc} "
               f"--memory {available / local_ranks / _GIB:.1f}GiB")
    check_state_fits(plan.centers + plan.momentum, local_ranks,
                     f"{num_classes:,} classes x {embedding_size} over {world_size} rank(s) are {plan.num_local:,} "
                     f"centers a rank, whose {center_dtype} values and momentum", available,
                     center_dtype_setting="classifier.center_dtype=bfloat16", planner_hint=f"`{command}`")
    peak = plan.total * local_ranks
    if peak > PLAN_MARGIN * available:
        raise HeadMemoryError(
            f"the head does not fit in memory: its planned step peak is {plan.total / _GIB:.2f} GiB a rank "
            f"({plan.num_local:,} centers and their momentum {(plan.centers + plan.momentum) / _GIB:.2f} GiB, "
            f"{plan.num_sample:,} kept a step, global batch {plan.global_batch}); {ranks_need(local_ranks)} "
            f"{peak / _GIB:.2f} GiB, more than the {available / _GIB:.2f} GiB available (MemAvailable + SwapFree, "
            "within the cgroup's limit) by more than the plan's error. Use more machines (ranks), a lower "
            "classifier.sample_ratio, classifier.center_dtype=bfloat16, classifier.momentum_dtype=int8 or fewer "
            "classes; "
            f"`{command}` plans a configuration")
    if peak > available and warn:
        log.warning("the head's planned peak is %.2f GiB for %s (%.2f GiB a rank), more than the %.2f GiB "
                    "available: the kernel may kill the run (SIGKILL, no message) once the step allocates "
                    "it. `%s` plans it", peak / _GIB, ranks_phrase(local_ranks), plan.total / _GIB,
                    available / _GIB, command)
    return plan
