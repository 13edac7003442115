"""What a :class:`RecordDataset` or an :class:`ImageFolderDataset` costs at scale: build time, peak
memory, and its loader workers' memory.

:func:`measure` runs in a process of its own (its peak RSS is the process's): it builds the dataset,
then reads ``batches`` batches (none: no loader) with ``workers`` loader worker processes and reads
each worker's memory from ``/proc/<pid>/smaps_rollup`` (Linux).
"""
from __future__ import annotations

import time

import numpy as np

from paddle_pfc.data.loader import BatchLoader, DistributedBatchSampler, build_dataset

SEED = 0


def first_indices(num_images: int, batch_size: int, batches: int) -> np.ndarray:
    """Dataset indices the loader reads in its first ``batches`` steps (one rank, seed :data:`SEED`)."""
    sampler = DistributedBatchSampler(num_images, batch_size, seed=SEED)
    return sampler.epoch_permutation(0)[:batch_size * batches]


def memory_of(pid: int | str = "self") -> dict:
    """``{"rss", "pss", "private"}`` bytes of process ``pid`` (private: its pages no other process maps)."""
    fields = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            name, _, rest = line.partition(":")
            parts = rest.split()
            if len(parts) == 2 and parts[1] == "kB":
                fields[name] = int(parts[0]) * 1024
    return {"rss": fields["Rss"], "pss": fields["Pss"],
            "private": fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)}


def peak_rss() -> int:
    """The largest RSS of this process's memory map so far (``VmHWM``; unlike ``ru_maxrss`` it does
    not carry a parent's peak over a fork and exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise OSError("/proc/self/status has no VmHWM line")


def measure(root: str, workers: int, batch_size: int, batches: int, kind: str = "rec") -> dict:
    """Build the dataset (``kind``: a data format under ``data.root``, ``rec`` or ``folder``) at
    ``root`` and read ``batches`` batches with ``workers`` workers."""
    before = memory_of()["rss"]
    started = time.perf_counter(), time.process_time()
    dataset = build_dataset(kind, root, image_size=112)
    build_s, build_cpu_s = time.perf_counter() - started[0], time.process_time() - started[1]
    peak = peak_rss()
    after = memory_of()["rss"]
    worker_memory = []
    if batches:
        sampler = DistributedBatchSampler(len(dataset), batch_size, seed=SEED)
        with BatchLoader(dataset, sampler, 112, num_workers=workers, seed=SEED) as loader:
            for step, (images, labels) in enumerate(loader.epoch(0)):
                if step + 1 == batches:
                    break
            processes = list((getattr(loader._executor, "_processes", None) or {}).values())
            worker_memory = [memory_of(p.pid) for p in processes]
    return {"records": len(dataset), "classes": dataset.num_classes, "build_s": round(build_s, 2),
            "build_cpu_s": round(build_cpu_s, 2), "rss_before": before, "rss_after_build": after,
            "peak_rss": peak, "peak_bytes_per_record": round((peak - before) / len(dataset), 1),
            "held_bytes_per_record": round((after - before) / len(dataset), 1), "workers": worker_memory}
