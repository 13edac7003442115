"""A block of kept centers (:class:`Block`); how many rows a block holds and where blocks start
are :mod:`paddle_pfc.head.geometry`'s rules (``block_rows``, ``block_bounds``).

The composite head cuts this shard's kept centers into consecutive blocks and finishes each one
(product, softmax, gradient, update) while it is hot in cache; the fused kernels use one block.
Imports no Paddle.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import paddle

__all__ = ["Block"]


@dataclass(frozen=True)
class Block:
    """One block of this shard's kept centers: kept columns ``[start, stop)`` (``stop`` None: the
    rest, the last block).

    ``index``: int64 [c], the block's rows of the shard (local indices). ``centers``: [c, D] in the
    head's operand dtype, differentiable (the value ``minimize`` takes the gradient of).
    ``table``: None, or the shard itself when the head's products read the block's rows from it
    by ``index`` (no gathered copy); ``centers`` is then the gradient's handle only, an
    uninitialised [c, D] value (in the blocks' dtype) whose contents nothing uses.
    """

    index: paddle.pir.Value
    centers: paddle.pir.Value
    start: int
    stop: int | None
    table: paddle.pir.Value | None = None
