"""The blocks a head cuts its kept centers into, from its :class:`~paddle_pfc.head.spec.HeadSpec`
alone: :func:`block_layout`. The classifier builds its blocks from it, the planner and the training
pre-flight plan their memory from it, the benchmarks time the same blocks. Imports no Paddle."""
from __future__ import annotations

from dataclasses import dataclass

from paddle_pfc.head import geometry
from paddle_pfc.head.spec import HeadSpec

__all__ = ["BlockLayout", "block_layout", "INDEXED_DTYPES"]

#: Center and operand dtypes whose kept rows the native products read by index (float32 products
#: of float32 or bfloat16 values; native bfloat16 products gather each block for themselves).
INDEXED_DTYPES = ("float32", "bfloat16")


@dataclass(frozen=True)
class BlockLayout:
    """The kept centers of one rank's shard and their blocks.

    ``num_local`` / ``num_sample``: the shard and the centers it keeps a step (``sampled`` when
    fewer); ``num_kept``: the kept columns the blocks cover. ``rows``: rows per block (the last
    takes the rest); ``bounds``: each block's ``(start, stop)``, ``stop`` None for the last.
    ``products_round``: the products round their operands to bfloat16 themselves (native bfloat16
    products). ``reads_rows_by_index``: the products read the kept rows from the shard by index (no
    gathered copy of a block). ``block_dtype``: the dtype blocks (and their gradients) are held in.
    ``updates_in_place``: float32 blocks of a float32 shard, held to the backward and updated there.
    """

    class_start: int
    num_local: int
    num_sample: int
    num_kept: int
    rows: int
    bounds: tuple[tuple[int, int | None], ...]
    products_round: bool
    reads_rows_by_index: bool
    block_dtype: str
    updates_in_place: bool

    @property
    def sampled(self) -> bool:
        return self.num_sample < self.num_local

    @property
    def num_blocks(self) -> int:
        return len(self.bounds)


def block_layout(spec: HeadSpec) -> BlockLayout:
    """The block layout of ``spec``'s shard (its ``rank``): on the fused backend one block of every
    kept center; on the composite backend blocks of ``spec.chunk_rows`` rows, else of
    :func:`paddle_pfc.head.geometry.block_rows` for the gathered batch (``embedding_size`` alone when
    the batch is dynamic)."""
    class_start, num_local = geometry.class_split(spec.num_classes, spec.world_size, spec.rank)
    num_sample = geometry.num_sample(num_local, spec.sample_ratio)
    sampled = num_sample < num_local
    num_kept = num_sample if sampled else num_local
    composite = spec.kernels == "composite"
    native = composite and spec.native
    if composite:
        rows = min(num_kept, spec.chunk_rows or geometry.block_rows(spec.embedding_size, spec.global_batch,
                                                                    num_kept))
    else:
        rows = num_kept
    products_round = native and spec.bfloat16_products and spec.compute_dtype == "bfloat16"
    indexed = {spec.center_dtype, spec.compute_dtype} <= set(INDEXED_DTYPES)
    by_index = sampled and native and indexed and (products_round or spec.indexed_products)
    block_dtype = "float32" if spec.center_dtype == "float32" and products_round else spec.compute_dtype
    return BlockLayout(
        class_start=class_start, num_local=num_local, num_sample=num_sample, num_kept=num_kept, rows=rows,
        bounds=tuple(geometry.block_bounds(num_kept, rows)), products_round=products_round,
        reads_rows_by_index=by_index, block_dtype=block_dtype,
        updates_in_place=block_dtype == spec.center_dtype == "float32")
