"""The fused kernels' interface (what the head calls) and Paddle's real implementation (GPU).

Contracts, from Paddle's GPU kernels (``paddle/phi/kernels/gpu/class_center_sample_kernel.cu``,
``margin_cross_entropy_kernel.cu``, ``margin_cross_entropy_grad_kernel.cu``), for ``nranks``
ranks, each holding a shard of ``num_classes`` (local) class centers, shards in rank order:

``class_center_sample(label, num_classes, num_samples, rank, chain, seed=None)``
  ``label``: int64/int32 [N], global class ids of the whole (gathered) batch, the same on every
  rank. Returns ``(remapped_label [N], sampled_local_class_center [S_rank])``, both of ``label``'s
  dtype. This rank keeps ``S_rank = max(num_samples, P_rank)`` centers, ``P_rank`` the number of
  distinct labels in its shard: first its positives as local indices in ascending order, then
  random negatives (centers sorted by a random key in ``[0, num_classes)``, ties by index).
  ``remapped_label[i]`` indexes the concatenation of every rank's kept centers in rank order:
  ``sum_{k < owner} max(num_samples, P_k) + (rank of label i among the distinct labels of its
  owner's shard)`` — every rank counts the others' kept centers with *its own* ``num_samples``.
  One all-reduce (SUM of the shard sizes). ``seed`` (an int): the random keys come from
  ``seed + rank``; None: from the random generator.

``margin_cross_entropy(logits, label, rank, margin, chain, return_softmax=False)``
  ``logits``: [N, D_rank] cosines of the whole batch against this rank's (kept) centers;
  ``label``: int [N] or [N, 1], indices into the concatenation of every rank's columns. The target
  logit (on the rank that holds it) becomes ``cos(m1 * acos(x) + m2) - m3`` (the acos/cos part only
  when ``|m1 - 1| > 1e-8`` or ``|m2| > 1e-8``; acos is not clipped; ``margin``'s ``m1, m2, m3,
  s``, e.g. :class:`paddle_pfc.head.margin.CombinedMargin`), every logit is scaled by
  ``s``, the row maximum is all-reduced (MAX), the row sum of ``exp`` all-reduced (SUM).
  Returns ``(softmax [N, D_rank], loss [N, 1])`` in ``logits``' dtype: this shard's columns of the
  global softmax, and each sample's loss ``-log softmax[target]``, all-reduced (SUM), so the same
  on every rank. Four all-reduces in the forward (shard widths, max, sum, loss), one in the
  backward (shard widths).
  Backward (gradient of ``loss`` only; ``softmax``'s gradient is ignored): with ``g = dL/dloss``
  [N, 1], ``dL/dlogits = s * softmax * g`` off the target, and at the target ``s * (softmax - 1)
  * g * m1 * sin(m1 * acos(x) + m2) / sqrt(1 - x^2)`` (the factor only with a non-trivial m1/m2;
  at x = ±1 it divides by zero: inf/NaN) — the local shard's part of the gradient, nothing summed.

``nranks`` is the chain's world size: the head passes its
:class:`~paddle_pfc.kernels.collectives.CollectiveChain`, whose communicator (the global one) the
kernels use; the implementations order their collectives after the chain's last one and record
their outputs as the new last one.
"""
from __future__ import annotations

from typing import Protocol

from paddle import _C_ops

from paddle_pfc.kernels.collectives import RING, CollectiveChain


class MarginLike(Protocol):
    """The combined margin ``cos(m1 * theta + m2) - m3`` and the scale ``s``."""

    m1: float
    m2: float
    m3: float
    s: float


class FusedKernels:
    """Interface of the two fused kernels (see the module docstring for the contracts)."""

    def class_center_sample(self, label, num_classes: int, num_samples: int, rank: int, chain: CollectiveChain,
                            seed: int | None = None):
        """``(remapped_label, sampled_local_class_center)`` of this rank's shard of ``num_classes``."""
        raise NotImplementedError

    def margin_cross_entropy(self, logits, label, rank: int, margin: MarginLike, chain: CollectiveChain,
                             return_softmax: bool = False):
        """``(softmax, loss)`` (the softmax may be returned even when not asked for)."""
        raise NotImplementedError


class PaddleFusedKernels(FusedKernels):
    """Paddle's GPU kernels (``_C_ops``), on the global communicator. Their collectives are inside
    the kernels: the inputs are tied after the chain's last collective and the outputs become it."""

    def class_center_sample(self, label, num_classes, num_samples, rank, chain, seed=None):
        remapped, sampled = _C_ops.class_center_sample(chain.tied(label), num_classes, num_samples, RING, rank,
                                                       chain.world_size, seed is not None, seed or 0)
        chain.after(sampled)
        return remapped, sampled

    def margin_cross_entropy(self, logits, label, rank, margin, chain, return_softmax=False):
        softmax, loss = _C_ops.margin_cross_entropy(chain.tied(logits), label, return_softmax, RING, rank,
                                                    chain.world_size, margin.m1, margin.m2, margin.m3, margin.s)
        chain.after(loss)
        return softmax, loss
