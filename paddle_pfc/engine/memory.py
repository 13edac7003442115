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

import dataclasses
import logging
import os

from paddle_pfc.head import planner
from paddle_pfc.head.host_memory import HeadMemoryError, available_memory, check_state_fits, ranks_need, ranks_phrase
from paddle_pfc.head.spec import HeadSpec

__all__ = ["PLAN_MARGIN", "check_head_fits", "training_head_spec"]

log = logging.getLogger("paddle_pfc.train")

_GIB = 2**30

#: A planned peak above this multiple of the available memory is an error, not a warning: the plan is
#: within 5 % of the measured peak RSS (docs/benchmarks.md), and the backbone comes on top of it.
PLAN_MARGIN = 1.10


def _cpu_backend(kernels: str | None, compute_dtype: str) -> dict:
    """The backend fields of a :class:`HeadSpec` for a CPU head of ``kernels`` (the setting) and
    ``compute_dtype``, as :func:`paddle_pfc.kernels.choose_backend` and the block operations decide
    them on this machine (the native kernels are built, as the head would build them)."""
    from paddle_pfc.kernels import native_ops, requested
    from paddle_pfc.kernels.blockwise import native_bfloat16_products

    kind = "fused" if requested(kernels)[0] == "fused" else "composite"
    native = kind == "composite" and native_ops.kernels() is not None
    return dict(kernels=kind, native=native, indexed_products=native and native_ops.blas_library() is not None,
                bfloat16_products=native and compute_dtype == "bfloat16" and native_bfloat16_products())


def training_head_spec(cfg, world_size: int) -> HeadSpec:
    """The :class:`HeadSpec` of the head a training config ``cfg`` builds on ``world_size`` CPU ranks
    (rank 0, the largest shard; ``train.batch_size`` per rank, ``train.accumulate_steps``, the centers'
    optimizer of ``train.optimizer``, the malloc mode of ``$PADDLE_PFC_MALLOC``, the backend this machine gives it)."""
    c = cfg.classifier
    return HeadSpec(num_classes=cfg.data.num_classes, embedding_size=cfg.model.embedding_size,
                    world_size=world_size, sample_ratio=c.sample_ratio, batch_size=cfg.train.batch_size,
                    center_dtype=c.center_dtype, compute_dtype=c.dtype, momentum_dtype=c.momentum_dtype,
                    optimizer=cfg.train.optimizer, accumulate_steps=cfg.train.accumulate_steps,
                    malloc=planner.planned_malloc(os.environ.get("PADDLE_PFC_MALLOC")),
                    **_cpu_backend(c.kernels, c.dtype))


def check_head_fits(spec: HeadSpec, local_ranks: int, available: int | None = None,
                    warn: bool = True) -> planner.MemoryPlan:
    """The :func:`~paddle_pfc.head.planner.plan_spec` of ``spec`` (its largest shard; ``spec.batch_size``
    per rank; :func:`training_head_spec` describes a training config's head), checked against
    ``available`` bytes (default :func:`available_memory`) shared by the ``local_ranks`` ranks of this
    machine. Raises :class:`HeadMemoryError` when their centers and momentum alone exceed it (exact
    sizes), or their planned step peak exceeds it by more than :data:`PLAN_MARGIN`: the run cannot
    fit. Logs a warning (when ``warn``) when the planned peak exceeds it by less (the backbone comes
    on top of the plan). Returns the plan."""
    spec = dataclasses.replace(spec, rank=0) if spec.rank else spec
    plan = planner.plan_spec(spec)
    num_classes, embedding_size, world_size = spec.num_classes, spec.embedding_size, spec.world_size
    center_dtype, malloc = spec.center_dtype, spec.malloc
    available = available_memory() if available is None else available
    if available is None:
        return plan
    momentum_option = "" if spec.momentum_dtype == center_dtype else f" --momentum-dtype {spec.momentum_dtype}"
    momentum_option += "" if spec.optimizer == "momentum" else f" --optimizer {spec.optimizer}"
    command = (f"paddle-pfc-plan --num-classes {num_classes} --embedding-size {embedding_size} --world-size "
               f"{world_size} --sample-ratio {spec.sample_ratio:g} --batch-size {spec.batch_size} --center-dtype "
               f"{center_dtype}{momentum_option} --compute-dtype {spec.compute_dtype} --malloc {malloc} "
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
