"""Blocks of kept centers: how many rows a block holds, where blocks start, and what one is.

The composite head cuts this shard's kept centers into consecutive blocks and finishes each one
(product, softmax, gradient, update) while it is hot in cache; the fused road uses one block.
Imports no Paddle (the planner uses :func:`block_rows`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import paddle

#: Bytes of one block of kept centers (and of its [N, R] logits) in the CPU head: under glibc's
#: 32 MiB mmap threshold, so per-block temporaries reuse heap memory step after step. 8 MiB
#: (4096 rows at D = 512) against 4 MiB: the 1M-class, ratio-0.1 step 2-4 % faster on 1 and
#: 2 ranks, in 7 of 7 alternating pairs (2026-11-25, AMD EPYC [AVX2 AVX-512F AVX512_BF16]).
CHUNK_BYTES = 8 * 2**20
#: Blocks grow beyond CHUNK_BYTES rather than the program beyond this many: Paddle's executor
#: analyses op dependencies with memory quadratic in the op count (measured: ~0.14 MiB x blocks^2,
#: 0.5 GiB at 62 blocks, 2.3 GiB at 123).
MAX_CHUNKS = 32


def block_rows(embedding_size: int, global_batch: int | None, num_kept: int) -> int:
    """Rows per block of kept centers: [R, D] and [N, R] float32 within ``CHUNK_BYTES``, at least
    256 rows, and at most ``MAX_CHUNKS`` blocks."""
    width = max(embedding_size, global_batch or 0)
    rows = max(256, CHUNK_BYTES // (4 * width))
    return max(rows, -(-num_kept // MAX_CHUNKS))


def block_bounds(num_kept: int, rows: int) -> list[tuple[int, int | None]]:
    """``(start, stop)`` of consecutive blocks of ``rows`` kept centers; the last block's ``stop``
    is None (it takes the rest, whose length may be dynamic)."""
    starts = list(range(0, num_kept, rows))
    return [(start, starts[k + 1] if k + 1 < len(starts) else None) for k, start in enumerate(starts)]


@dataclass(frozen=True)
class Block:
    """One block of this shard's kept centers: kept columns ``[start, stop)`` (``stop`` None: the
    rest, the last block).

    ``index``: int64 [c], the block's rows of the shard (local indices). ``centers``: [c, D] in the
    head's operand dtype, differentiable (the value ``minimize`` takes the gradient of).
    ``table``: None, or the shard itself when the head's products read the block's rows from it
    by ``index`` (no gathered copy); ``centers`` is then the gradient's handle only, an
    uninitialised [c, D] float32 value whose contents nothing uses.
    """

    index: paddle.pir.Value
    centers: paddle.pir.Value
    start: int
    stop: int | None
    table: paddle.pir.Value | None = None
