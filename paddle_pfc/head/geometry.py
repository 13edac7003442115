"""The head's geometry, without Paddle: how classes split over ranks, how many centers a shard
keeps a step, and how the kept centers are cut into blocks. The classifier builds its program from
these rules and the planner plans its memory from the same ones."""
from __future__ import annotations

from paddle_pfc.utils.numbers import is_finite_real

#: Bytes of one block of kept centers (and of its [N, R] logits) in the CPU head: under glibc's
#: 32 MiB mmap threshold, so per-block temporaries reuse heap memory step after step
#: (docs/performance.md: the choice of 8 MiB).
BLOCK_BYTES = 8 * 2**20
#: Blocks grow beyond BLOCK_BYTES rather than the program beyond this many: Paddle's executor
#: analyses op dependencies with memory quadratic in the op count (docs/performance.md).
MAX_BLOCKS = 32


def class_split(num_classes: int, world_size: int, rank: int) -> tuple[int, int]:
    """``(class_start, num_local)`` of ``rank`` in the balanced split of ``num_classes`` classes.

    Rank r holds ``C // W`` consecutive classes plus one for the first ``C % W`` ranks, starting at
    ``r * (C // W) + min(r, C % W)``; every rank holds at least one class when C >= W.
    """
    base, extra = divmod(num_classes, world_size)
    return rank * base + min(rank, extra), base + int(rank < extra)


def largest_shard(num_classes: int, world_size: int) -> int:
    """``num_local`` of the largest shard of the balanced split (rank 0's): ``ceil(C / W)``."""
    return -(-num_classes // world_size)


def check_sample_ratio(sample_ratio) -> None:
    """ValueError unless ``sample_ratio`` is a real number in (0, 1]."""
    if not is_finite_real(sample_ratio) or not 0.0 < sample_ratio <= 1.0:
        raise ValueError(f"sample_ratio must be in (0, 1], got {sample_ratio!r}")


def num_sample(num_local: int, sample_ratio: float) -> int:
    """Centers a shard of ``num_local`` keeps a step: ``min(num_local, max(1, int(r * num_local)))``
    (more only when the batch's positives on the shard are more)."""
    return min(num_local, max(1, int(float(sample_ratio) * num_local)))


def block_rows(embedding_size: int, global_batch: int | None, num_kept: int) -> int:
    """Rows per block of kept centers: [R, D] and [N, R] float32 within ``BLOCK_BYTES``, at least
    256 rows, and at most ``MAX_BLOCKS`` blocks."""
    width = max(embedding_size, global_batch or 0)
    rows = max(256, BLOCK_BYTES // (4 * width))
    return max(rows, -(-num_kept // MAX_BLOCKS))


def block_bounds(num_kept: int, rows: int) -> list[tuple[int, int | None]]:
    """``(start, stop)`` of consecutive blocks of ``rows`` kept centers; the last block's ``stop``
    is None (it takes the rest, whose length may be dynamic)."""
    starts = list(range(0, num_kept, rows))
    return [(start, starts[k + 1] if k + 1 < len(starts) else None) for k, start in enumerate(starts)]
