"""Emulations of Paddle's fused GPU kernels from plain Paddle ops, on any device and rank count.

They reproduce the contracts stated in :mod:`paddle_pfc.kernels.fused` (read from Paddle's CUDA
sources): output shapes and dtypes, the remapped label, the kept centers' order (positives
ascending, then random negatives), the cross-rank softmax normaliser, the per-sample loss, the
softmax, and the exact backward of ``margin_cross_entropy_grad`` (attached with
``static_pylayer``), including the unclipped ``acos`` and the division by ``sqrt(1 - x^2)``.
Their collectives are the head's ordered ones (:class:`~paddle_pfc.kernels.collectives.CollectiveChain`),
the same reductions the kernels issue on their communicator.

Not reproduced: the random stream (curand vs Paddle's CPU generator: which negatives are drawn
differs, their distribution does not), float16/bfloat16 reductions (computed in float32 and
rounded where the kernel stores a 2-byte value), and device-side asserts (an out-of-range label
aborts the GPU kernel; the head checks labels before either kernel runs).
"""
from __future__ import annotations

import paddle

from paddle_pfc.kernels.collectives import CollectiveChain, zero_depending_on
from paddle_pfc.kernels.fused import FusedKernels

_TINY = 1e-8  # the kernels' test for "margin1 == 1", "margin2 == 0", "margin3 == 0", "scale == 1"


def _class_interval(width, rank: int, chain: CollectiveChain) -> paddle.pir.Value:
    """int64 [nranks + 1] (``nranks``: the chain's world size): 0 and the running sum of every
    rank's ``width`` (a Python int or an int scalar Value), rank order — the kernels' one
    all-reduce SUM of the shard sizes."""
    nranks = chain.world_size
    slot = paddle.arange(nranks + 1, dtype="int64") == rank + 1
    width = paddle.cast(width, "int64") if isinstance(width, paddle.pir.Value) else \
        paddle.full([], width, dtype="int64")
    sizes = paddle.where(slot, paddle.expand(width, [nranks + 1]), paddle.zeros([nranks + 1], "int64"))
    return paddle.cumsum(chain.all_reduce_sum(sizes), axis=0)


def _distinct_sorted(values: paddle.pir.Value) -> paddle.pir.Value:
    """The distinct values of int64 [N] ``values``, ascending (``paddle.unique`` declares a wrong
    output dtype in PIR here, which a later kernel then trips on)."""
    ordered = paddle.sort(values)
    first = paddle.concat([paddle.ones([1], "bool"), ordered[1:] != ordered[:-1]])
    return paddle.masked_select(ordered, first)


def _stop(*values):
    for value in values:
        value.stop_gradient = True
    return values if len(values) > 1 else values[0]


class _Precision:
    """The kernel's arithmetic for logits of ``dtype``: float64 stays, the rest computes in float32;
    float16 / bfloat16 values are rounded back to the logits' dtype wherever the kernel stores them."""

    def __init__(self, dtype) -> None:
        self.dtype = dtype
        self.compute = "float64" if dtype == paddle.float64 else "float32"
        self.two_byte = dtype in (paddle.float16, paddle.bfloat16)

    def stored(self, v):
        """``v`` as the kernel writes it back into a tensor of the logits' dtype."""
        return paddle.cast(paddle.cast(v, self.dtype), self.compute) if self.two_byte else v

    def output(self, v):
        """``v`` in the logits' dtype, without gradient."""
        return _stop(paddle.cast(v, self.dtype) if self.two_byte else v)


def _target_column(logits, label, rank: int, chain: CollectiveChain):
    """``(column, here)``, both [N,1]: each label's column in this rank's shard (0 where it lies in
    another shard) and whether it lies in this shard."""
    interval = _class_interval(paddle.shape(logits)[1], rank, chain)
    column = paddle.reshape(paddle.cast(label, "int64"), [-1, 1]) - interval[rank]
    here = paddle.logical_and(column >= 0, column < paddle.shape(logits)[1])
    return paddle.where(here, column, paddle.zeros_like(column)), here


def _angular(margin) -> bool:
    """Whether the margin acts on the angle (m1 != 1 or m2 != 0)."""
    return abs(margin.m1 - 1.0) > _TINY or abs(margin.m2) > _TINY


def _scaled_margin_logits(x, x_target, column, here, margin, precision: _Precision):
    """``scale * logits`` with each target (in this shard) replaced by ``cos(m1 * theta + m2) - m3``."""
    target = x_target
    if _angular(margin):
        theta = paddle.acos(x_target)  # not clipped: |x| > 1 gives NaN, as on the GPU
        if abs(margin.m1 - 1.0) > _TINY:
            theta = theta * margin.m1
        if abs(margin.m2) > _TINY:
            theta = theta + margin.m2
        target = precision.stored(paddle.cos(theta))
    if abs(margin.m3) > _TINY:
        target = precision.stored(target - margin.m3)
    z = paddle.put_along_axis(x, column, paddle.where(here, target, x_target), 1, "assign")
    return precision.stored(z * margin.s)


def _sharded_log_softmax(z, chain: CollectiveChain, precision: _Precision):
    """Log-softmax of each row of ``z`` over the classes of every rank's shard."""
    row_max = chain.all_reduce_max(paddle.max(z, axis=1, keepdim=True))
    shifted = precision.stored(z - row_max)
    sum_exp = chain.all_reduce_sum(paddle.sum(paddle.exp(shifted), axis=1, keepdim=True))
    return precision.stored(shifted - paddle.log(precision.stored(sum_exp)))


def _margin_backward(softmax, x_target, column, here, margin, precision: _Precision):
    """The gradient of the loss for the logits (margin_cross_entropy_grad): softmax * g off the
    target, (softmax - 1) * g times the margin's slope at it, everything times the scale. No
    collective on the values."""
    def backward(grad_loss):
        g = paddle.cast(grad_loss, precision.compute)
        grad = softmax * g
        p_target = paddle.take_along_axis(softmax, column, axis=1, broadcast=False)
        grad_target = precision.stored((p_target - 1.0) * g)
        if _angular(margin):
            slope = margin.m1 * paddle.sin(margin.m1 * paddle.acos(x_target) + margin.m2) \
                / paddle.sqrt(1.0 - x_target * x_target)
            grad_target = grad_target * slope
        at_column = paddle.take_along_axis(grad, column, axis=1, broadcast=False)
        grad = paddle.put_along_axis(grad, column, paddle.where(here, grad_target, at_column), 1, "assign")
        if abs(margin.s - 1.0) > _TINY:
            grad = precision.stored(grad) * margin.s
        return paddle.cast(grad, precision.dtype), None
    return backward


class EmulatedFusedKernels(FusedKernels):
    """``class_center_sample`` and ``margin_cross_entropy`` from Paddle ops (see the module doc)."""

    # ------------------------------------------------------------------------------------------
    def class_center_sample(self, label, num_classes, num_samples, rank, chain, seed=None):
        nranks = chain.world_size
        if not 0 < num_samples <= num_classes:
            raise ValueError(f"class_center_sample: num_samples must be in [1, num_classes={num_classes}], "
                             f"got {num_samples}")
        labels = paddle.cast(paddle.reshape(label, [-1]), "int64")
        interval = _class_interval(num_classes, rank, chain)                             # [W+1]
        # Kept centers: positives get the key (index - num_classes) < 0, the others a random key in
        # [0, num_classes); a stable ascending sort puts the positives first, in index order.
        local = labels - interval[rank]
        in_shard = paddle.logical_and(local >= 0, local < num_classes)
        slot = paddle.where(in_shard, local, paddle.full_like(local, num_classes))
        marks = paddle.scatter(paddle.zeros([num_classes + 1], "int64"), slot, paddle.ones_like(slot),
                               overwrite=True)[:num_classes]
        random = paddle.uniform([num_classes], "float32", min=0.0, max=float(num_classes),
                                seed=(seed + rank) if seed is not None else 0)
        keys = paddle.clip(paddle.cast(paddle.floor(random), "int64"), 0, num_classes - 1)
        index = paddle.arange(num_classes, dtype="int64")
        keys = paddle.where(marks > 0, index - num_classes, keys)
        order = paddle.argsort(keys, stable=True)
        # Every rank keeps max(num_samples, its distinct positives) — counted here with this
        # rank's num_samples for every rank, as the kernel does.
        distinct = _distinct_sorted(labels)
        owner = paddle.searchsorted(interval[1:], distinct, right=True)
        positives = paddle.cast(paddle.sum(paddle.nn.functional.one_hot(owner, nranks), axis=0), "int64")
        kept = paddle.maximum(positives, paddle.full_like(positives, num_samples))         # [W]
        kept_before = paddle.cumsum(kept, axis=0) - kept
        distinct_before = paddle.cumsum(positives, axis=0) - positives
        rank_in_owner = paddle.arange(paddle.shape(distinct)[0], dtype="int64") - paddle.gather(distinct_before, owner)
        remapped_distinct = paddle.gather(kept_before, owner) + rank_in_owner
        remapped = paddle.gather(remapped_distinct, paddle.searchsorted(distinct, labels))
        sampled = paddle.slice(order, [0], [0], [kept[rank]])
        if label.dtype != paddle.int64:
            remapped, sampled = paddle.cast(remapped, label.dtype), paddle.cast(sampled, label.dtype)
        remapped = paddle.reshape(remapped, label.shape if -1 not in label.shape and None not in label.shape
                                  else paddle.shape(label))
        chain.after(sampled)
        return _stop(remapped, sampled)

    # ------------------------------------------------------------------------------------------
    def margin_cross_entropy(self, logits, label, rank, margin, chain, return_softmax=False):
        precision = _Precision(logits.dtype)
        column, here = _target_column(logits, label, rank, chain)                               # [N,1]
        x = logits.detach()
        x.stop_gradient = True
        x = x if logits.dtype == getattr(paddle, precision.compute) else paddle.cast(x, precision.compute)
        x_target = paddle.take_along_axis(x, column, axis=1, broadcast=False)                   # [N,1]
        z = _scaled_margin_logits(x, x_target, column, here, margin, precision)
        log_softmax = _sharded_log_softmax(z, chain, precision)
        at_target = paddle.take_along_axis(log_softmax, column, axis=1, broadcast=False)
        loss = chain.all_reduce_sum(paddle.where(here, -at_target, paddle.zeros_like(at_target)))  # [N,1]
        softmax = precision.stored(paddle.exp(log_softmax))

        def forward(logits_in, loss_in):
            # The value is computed above from detached inputs; one element of the logits ties them
            # to it so that they get a gradient slot.
            return loss_in + zero_depending_on(logits_in, loss_in.dtype)

        backward = _margin_backward(softmax, x_target, column, here, margin, precision)
        loss_out = paddle.static.nn.static_pylayer(forward, [logits, precision.output(loss)], backward)
        softmax_out = precision.output(softmax)
        chain.after(loss_out)
        return softmax_out, loss_out
