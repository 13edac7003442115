"""Partial FC class-center sampling: which of this shard's centers take part in a step.

Contract (identical on CPU and GPU): every center that is the label of some sample of the global
batch is kept (a *positive*); the shard is filled up to ``num_sample`` centers with negatives drawn
uniformly at random without replacement; when the positives alone exceed ``num_sample`` all of them
are kept and no negative is drawn. The cost is O(num_local) integer work per step (random keys
and one selection, or with the native CPU kernels one selection-sampling pass), no
[num_local, D] traffic (docs/performance.md: its cost per step).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import paddle

from paddle_pfc.head import checks

if TYPE_CHECKING:
    from paddle_pfc.kernels.blockwise import PaddleBlockOps
    from paddle_pfc.kernels.collectives import CollectiveChain
    from paddle_pfc.kernels.fused import FusedKernels


@dataclass
class ShardSample:
    """Result of sampling one shard.

    ``sampled_index``: int64 [S], the kept centers as indices local to the shard (S ≥ num_sample
    only when positives exceed it). ``local_target``: int64 [N], for each gathered sample the column
    of its class among the kept centers of this shard, or -1 if its class lives on another shard.
    ``global_target``: int64 [N] or None, the label remapped into the concatenation of every
    rank's kept centers (produced by the GPU kernel, consumed by the fused GPU loss).
    """

    sampled_index: paddle.pir.Value
    local_target: paddle.pir.Value
    global_target: paddle.pir.Value | None = None


def local_labels(global_label: paddle.pir.Value, class_start: int, num_local: int) -> paddle.pir.Value:
    """int64 [N]: ``label - class_start`` for labels of this shard, -1 for the others."""
    shifted = global_label - class_start
    in_shard = paddle.logical_and(shifted >= 0, shifted < num_local)
    return paddle.where(in_shard, shifted, paddle.full_like(shifted, -1))


def sample_shard_composite(local_label: paddle.pir.Value, num_local: int, num_sample: int,
                           ops: PaddleBlockOps, target_label: paddle.pir.Value | None = None) -> ShardSample:
    """Sample a shard on the composite backend: the head's block operations ``ops`` draw the kept
    centers (:meth:`~paddle_pfc.kernels.blockwise.PaddleBlockOps.sample_shard`: plain ops, or one
    native selection-sampling pass); ``sampled_index`` is sorted.

    ``local_label``: int64 [N] as returned by :func:`local_labels`, the positives kept;
    ``num_sample`` < ``num_local``. ``target_label``: the local labels whose columns
    ``local_target`` holds (default ``local_label``), each of them among ``local_label``'s
    (gradient accumulation: the labels of one micro-batch, sampled with those of all of them).
    """
    sampled_index = ops.sample_shard(local_label, num_local, num_sample)
    return _with_targets(sampled_index, local_label if target_label is None else target_label)


def _with_targets(sampled_index: paddle.pir.Value, local_label: paddle.pir.Value) -> ShardSample:
    """The sample of the sorted kept centers ``sampled_index``: each label's column among them."""
    column = paddle.searchsorted(sampled_index, paddle.clip(local_label, min=0))
    local_target = paddle.where(local_label >= 0, column, paddle.full_like(column, -1))
    sampled_index.stop_gradient = True
    local_target.stop_gradient = True
    return ShardSample(sampled_index, local_target)


def sample_shard_fused(global_label: paddle.pir.Value, class_start: int, num_local: int, num_sample: int,
                       rank: int, world_size: int, kernels: FusedKernels, chain: CollectiveChain,
                       target_label: paddle.pir.Value | None = None) -> ShardSample:
    """Sample a shard with the fused ``class_center_sample`` kernel (Paddle's on GPU, or its
    emulation: :mod:`paddle_pfc.kernels`).

    ``sampled_index`` is the kernel's (this shard's positives ascending, then random negatives);
    ``local_target`` has the same meaning as on CPU. ``global_target`` (each label's column in the
    concatenation of every rank's kept centers, rank order) is derived here from every rank's
    ``sampled_index``, with one all-gather of ``[kept count, local_target]`` [N + 1]: the kernel's
    own remapped label counts every other rank's kept centers with the *calling* rank's
    ``num_samples``, which is wrong when the balanced split gives ranks different ``num_sample``
    (uneven shards), and it relies on a scan whose kept counts this package cannot check without a
    GPU. A run-time check stops the step on every rank, before the loss reads the targets, if a
    rank did not keep one of its positive centers (it prints the largest such label).
    ``target_label``: the gathered labels whose targets are made (default ``global_label``), each
    among ``global_label`` (gradient accumulation: one micro-batch's, sampled with all of them).
    """
    _, sampled_index = kernels.class_center_sample(global_label, num_local, num_sample, rank, chain)
    global_label = global_label if target_label is None else target_label
    local = local_labels(global_label, class_start, num_local)
    # Position of each positive among this shard's kept centers (kernel order is not sorted).
    kept = paddle.shape(sampled_index)[0:1]
    position = paddle.full([num_local + 1], -1, dtype="int64")
    position = paddle.scatter(position, sampled_index, paddle.arange(kept[0], dtype="int64"), overwrite=True)
    slot = paddle.where(local >= 0, local, paddle.full_like(local, num_local))
    local_target = paddle.gather(position, slot)
    # Every rank's kept count and local columns -> the global column of each label.
    row = paddle.concat([paddle.cast(kept, "int64"), local_target])                          # [N+1]
    table = paddle.reshape(chain.all_gather(row), [world_size, -1])                          # [W,N+1]
    counts = table[:, 0:1]
    offsets = paddle.cumsum(counts, axis=0) - counts
    # Each label is one rank's positive, so exactly one rank has a column for it: checked on the
    # gathered table, every rank stops together when some rank dropped a positive.
    columns = table[:, 1:]
    holders = paddle.sum(paddle.cast(columns >= 0, "int64"), axis=0)                         # [N]
    columns = checks.passed(columns, paddle.all(holders == 1),
                            lambda: [paddle.max(paddle.where(holders == 1, paddle.full_like(global_label, -1),
                                                             global_label))], 1, chain)
    global_target = paddle.sum(paddle.where(columns >= 0, columns + offsets, paddle.zeros_like(columns)), axis=0)
    for value in (global_target, sampled_index, local_target):
        value.stop_gradient = True
    return ShardSample(sampled_index, local_target, global_target)
