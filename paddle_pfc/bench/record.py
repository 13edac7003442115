"""The JSON record of one benchmark configuration (:mod:`paddle_pfc.bench.main` lists its fields):
every rank's figures (:class:`RankFigures`) and the record's groups of fields, in the record's order."""
from __future__ import annotations

import os
import platform
from dataclasses import dataclass, fields

import numpy as np
import paddle

from paddle_pfc.bench.communication import RankGather
from paddle_pfc.utils.cpu import cpu_summary

__all__ = ["RankFigures", "configuration_fields", "timing_fields", "memory_fields", "run_fields"]

#: one rank's figure, or (gathered) every rank's in rank order
Figure = float | np.ndarray


def _rounded(value: float, digits: int) -> float | None:
    return None if np.isnan(value) else round(value, digits)


@dataclass(frozen=True)
class RankFigures:
    """A configuration's figures of one rank, gathered from every rank in this order: built with
    floats (this rank's), :meth:`gather` returns one with an array of every rank's figure a field
    (in rank order)."""

    peak: Figure
    step_peak: Figure
    idle: Figure
    floor_s: Figure
    median_step: Figure
    startup_s: Figure
    persistent_alloc: Figure
    startup_alloc: Figure
    step_alloc: Figure
    user_s: Figure
    sys_s: Figure
    minflt: Figure
    bf16_floor_s: Figure
    step_over_floor: Figure
    gemm_gflops: Figure
    floor_over_gemm: Figure
    step_over_bf16_floor: Figure
    paired_step_s: Figure
    passes_s: Figure
    bound_over_floor: Figure
    step_over_bound: Figure

    @classmethod
    def of_rank(cls, train: dict, floor: dict, idle: float, median_step: float) -> RankFigures:
        """This rank's figures: ``train`` from :func:`~paddle_pfc.bench.steps.run_train`, ``floor``
        from :func:`~paddle_pfc.bench.floor.paired_floor`."""
        return cls(train["peak"], train["step_peak"], idle, floor["floor_s"], median_step, train["startup_s"],
                   train["persistent_alloc"], train["startup_alloc"], train["step_alloc"], train["user_s"],
                   train["sys_s"], train["minflt"], floor["bf16_floor_s"], floor["step_over_floor"],
                   floor["gemm_gflops"], floor["floor_over_gemm"], floor["step_over_bf16_floor"],
                   floor["paired_step_s"], floor["passes_s"], floor["bound_over_floor"], floor["step_over_bound"])

    def gather(self, gather: RankGather) -> RankFigures:
        """Every rank's figures (a collective: every rank calls it)."""
        return RankFigures(*gather([getattr(self, f.name) for f in fields(self)]).T)


def configuration_fields(args, cfg: dict, train: dict, world_size: int) -> dict:
    return {
        "mode": args.mode,
        "num_classes": cfg["num_classes"],
        "embedding_size": cfg["embedding_size"],
        "batch_per_rank": cfg["batch_size"],
        "world_size": world_size,
        "sample_ratio": cfg["sample_ratio"],
        "dtype": cfg["dtype"],
        "center_dtype": cfg["center_dtype"],
        "momentum_dtype": train["momentum_dtype"],  # the head's (None: no head)
        "num_local": train["num_local"],
        "num_sample": train["num_sample"],
        "chunks": train["chunks"],
        "steps": args.steps,
        "warmup": args.warmup,
    }


def timing_fields(cfg: dict, train: dict, ranks: RankFigures, world_size: int) -> dict:
    """The step's times and its floors: the slowest rank's floor and GEMM (the floors run on every
    rank at once), the slowest rank's passes and its bound (the ranks' steps end together)."""
    median_step = float(ranks.median_step[0])  # rank 0's
    floor_s = float(np.max(ranks.floor_s))
    n = cfg["batch_size"] * world_size
    products = 6.0 * n * train["num_sample"] * cfg["embedding_size"]
    return {
        "median_step_s": round(median_step, 6),
        "min_step_s": round(min(train["times"]), 6),
        "samples_per_s": round(n / median_step, 2),
        "paired_step_s": _rounded(float(ranks.paired_step_s[0]), 6),
        "floor_s": _rounded(floor_s, 6),
        "step_over_floor": _rounded(float(np.min(ranks.step_over_floor)), 3),
        "floor_gflops": _rounded(products / floor_s / 1e9, 1),
        "bf16_floor_s": _rounded(float(np.max(ranks.bf16_floor_s)), 6),
        "step_over_bf16_floor": _rounded(float(np.min(ranks.step_over_bf16_floor)), 3),
        "gemm_peak_gflops": _rounded(float(np.min(ranks.gemm_gflops)), 1),
        "floor_over_gemm_peak": _rounded(float(np.min(ranks.floor_over_gemm)), 3),
        "passes_s": _rounded(float(np.max(ranks.passes_s)), 6),
        "bound_over_floor": _rounded(float(np.max(ranks.bound_over_floor)), 3),
        "step_over_bound": _rounded(float(np.min(ranks.step_over_bound)), 3),
    }


def memory_fields(ranks: RankFigures) -> dict:
    """Memory, CPU time and page faults, a list by rank (and the maxima)."""
    return {
        "peak_rss_mib": [round(v, 1) for v in ranks.peak],
        "peak_rss_mib_max": round(float(ranks.peak.max()), 1),
        "step_peak_rss_mib": [round(v, 1) for v in ranks.step_peak],
        "step_peak_rss_mib_max": round(float(ranks.step_peak.max()), 1),
        "idle_rss_mib": [round(v, 1) for v in ranks.idle],
        "persistent_alloc_mib": [round(v, 1) for v in ranks.persistent_alloc],
        "startup_peak_alloc_mib": [round(v, 1) for v in ranks.startup_alloc],
        "step_peak_alloc_mib": [round(v, 1) for v in ranks.step_alloc],
        "cpu_user_s_per_step": [round(v, 4) for v in ranks.user_s],
        "cpu_sys_s_per_step": [round(v, 4) for v in ranks.sys_s],
        "minor_faults_per_step": [round(v) if np.isfinite(v) else None for v in ranks.minflt],
        "rank_median_step_s": [round(v, 6) for v in ranks.median_step],
        "startup_s": round(float(ranks.startup_s.max()), 3),
    }


def run_fields(train: dict, settings: dict, can_reset: bool) -> dict:
    """The losses, the process's settings and the machine."""
    return {
        "first_loss": train["losses"][0],
        "last_loss": train["losses"][-1],
        "peak_reset_ok": can_reset,
        "malloc": settings["malloc"],
        "mkl_debug_cpu_type": settings["mkl_debug_cpu_type"] or None,
        "native_kernels": train["native"],
        "sequential_executor": bool(paddle.get_flags(["FLAGS_new_executor_sequential_run"])
                                    ["FLAGS_new_executor_sequential_run"]),
        "serial_executor": bool(paddle.get_flags(["FLAGS_new_executor_serial_run"])
                                ["FLAGS_new_executor_serial_run"]),  # configure_process: on CPU
        "host": platform.node(),
        "cpu": cpu_summary(),
        "cpus": os.cpu_count(),
    }
