"""Gradient accumulation: K micro-batches, one optimizer step (``minimize(..., accumulate_steps=K)``).

The contract, for a program whose heads sample (``sample_ratio < 1``): one set of kept centers per
optimizer step, drawn from the labels of all K micro-batches of every rank (each head's
``sample_label``, fed the same at every micro-step) with the random draws the same at every
micro-step (the caller seeds Paddle's generator alike before each: ``paddle.seed``); a
micro-step whose kept set differs from the first's stops the step on every rank. Every
micro-step's logits use that set. Each micro-step backpropagates ``loss / K`` and adds its
gradients into persistable float32 buffers: the data-parallel parameters' (their shapes, summed
over ranks at each micro-step) and each head's kept rows' (``[rows, D]``, ``rows`` =
:func:`~paddle_pfc.head.spec.accumulation_rows`: the most centers a step keeps; never a dense
``[num_local, D]`` one with sampling). The first micro-step overwrites the buffers instead of adding,
so a skipped step leaves nothing behind. The finite check reads the buffers (an inf/NaN of any
micro-step stays in them), and the updates run at the K-th micro-step only: then one accumulated
step is one step of the ``K * batch`` batch for the head, whose loss is the mean over its
samples. Batch norm (and AdaFace's norm statistics) see micro-batches.

The program takes one more feed, :attr:`Accumulation.feed_name` (int64 [1]: the micro-step, 0 ..
K-1); :func:`accumulation_of` gives it and the step's loss. The buffers are named with
:data:`BUFFER_SUFFIX` (or are :data:`LOSS_BUFFER`): their contents between optimizer steps mean
nothing, and checkpoints leave them out.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import paddle

from paddle_pfc.head import checks
from paddle_pfc.head.spec import accumulation_rows
from paddle_pfc.kernels.blockwise import write_rows_
from paddle_pfc.utils import paddle_compat

__all__ = ["Accumulation", "accumulation_of", "BUFFER_SUFFIX", "LOSS_BUFFER", "FEED_NAME", "is_buffer"]

#: The suffix of every gradient buffer's name (the variable's name + it).
BUFFER_SUFFIX = "@accumulated"
#: The buffer of the step's loss (the sum of the micro-steps' ``loss / K``).
LOSS_BUFFER = "accumulate@loss"
#: The micro-step's feed: int64 [1], 0 .. K-1.
FEED_NAME = "accumulate_micro_step"

_OF: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def is_buffer(name: str) -> bool:
    """Whether the variable ``name`` is an accumulation buffer (nothing a checkpoint keeps)."""
    return name.endswith(BUFFER_SUFFIX) or name == LOSS_BUFFER


@dataclass(eq=False)
class Accumulation:
    """What ``minimize(..., accumulate_steps=steps)`` added to a program: the micro-step feed
    ``feed_name``, ``first`` / ``last`` (bool [1]: the micro-step is the first / the K-th, where the
    updates run) and ``loss`` (float32 [1]: the mean loss over the micro-steps so far; at the K-th,
    the step's loss, the mean over its ``K * batch`` samples of every rank)."""

    steps: int
    feed_name: str
    first: paddle.pir.Value
    last: paddle.pir.Value
    loss: paddle.pir.Value | None = None


def accumulation_of(program: paddle.static.Program) -> Accumulation | None:
    """The :class:`Accumulation` of ``program`` (None: ``minimize`` accumulates nothing there)."""
    return _OF.get(program)


def check_accumulation(heads: list, steps) -> None:
    """ValueError naming what ``accumulate_steps=steps`` cannot train: not an int >= 1, or a
    sampled head without ``sample_label``."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"accumulate_steps must be an int >= 1, got {steps!r}")
    if steps == 1:
        return
    for head in heads:
        if head.sampled and head.sample_label is None:
            raise ValueError(f"accumulate_steps={steps}: {head.name} samples its centers, so one set of kept "
                             "centers must serve the K micro-batches: build it with sample_label= the labels of "
                             "all K micro-batches (this rank's), fed the same at every micro-step")


def start(program: paddle.static.Program, steps: int) -> Accumulation:
    """The micro-step feed of ``program`` and its flags; recorded for :func:`accumulation_of`."""
    micro = paddle.static.data(FEED_NAME, [1], "int64")
    micro.stop_gradient = True
    acc = Accumulation(steps, FEED_NAME, micro == 0, micro == steps - 1)
    _OF[program] = acc
    return acc


def _buffer(name: str, shape: list[int], dtype, distributed: bool = False) -> paddle.pir.Value:
    """A zero-initialised persistable buffer (no gradient, not trained)."""
    value = paddle.static.create_parameter(shape=shape, dtype=dtype, name=name,
                                           default_initializer=paddle.nn.initializer.Constant(0.0))
    value.stop_gradient = True
    value.trainable = False
    value.is_distributed = distributed
    return value


def add_into(acc: Accumulation, buffer: paddle.pir.Value, value: paddle.pir.Value) -> paddle.pir.Value:
    """``value`` (first micro-step) or ``buffer + value``, written into ``buffer``; the sum."""
    total = paddle.where(acc.first, value, buffer + value)
    paddle_compat.assign_into(total, buffer)
    return total


def accumulate_loss(acc: Accumulation, loss: paddle.pir.Value) -> paddle.pir.Value:
    """The step's loss so far (float32 [1]): the micro-steps' ``loss`` (already divided by K) summed."""
    acc.loss = add_into(acc, _buffer(LOSS_BUFFER, [1], "float32"), paddle.reshape(loss, [1]))
    return acc.loss


def accumulate_pairs(acc: Accumulation, pairs: list) -> list:
    """``[(parameter, accumulated gradient)]`` of ``pairs``, each gradient summed in a buffer of
    the parameter's shape."""
    out = []
    for param, grad in pairs:
        buffer = _buffer(param.name + BUFFER_SUFFIX, list(param.shape), grad.dtype)
        out.append((param, add_into(acc, buffer, grad)))
    return out


def accumulate_blocks(acc: Accumulation, head, grads: list) -> list:
    """The accumulated gradients of ``head``'s blocks (``grads``: this micro-step's, one a block),
    summed in float32 rows of one ``[rows, D]`` buffer (rows ``[start, start + len)`` of block k's
    kept columns) and returned in each block gradient's dtype."""
    rows = accumulation_rows(head.spec, acc.steps)
    buffer = _buffer(head.name + BUFFER_SUFFIX, [rows, head.embedding_size], "float32", distributed=True)
    out = []
    grads = [_same_kept_set(acc, head, grads[0]), *grads[1:]]
    for block, grad in zip(head.blocks, grads):
        wide = grad if grad.dtype == paddle.float32 else paddle.cast(grad, "float32")
        index = paddle.arange(paddle.shape(wide)[0], dtype="int64") + block.start
        index.stop_gradient = True
        total = paddle.where(acc.first, wide, paddle.gather(buffer, index) + wide)
        write_rows_(buffer, index, total)
        out.append(total if grad.dtype == paddle.float32 else paddle.cast(total, grad.dtype))
    return out


def _same_kept_set(acc: Accumulation, head, grad: paddle.pir.Value) -> paddle.pir.Value:
    """``grad`` once ``head`` keeps the centers it kept at the step's first micro-step (their count
    and two sums of their indices, kept in a buffer, compared on every rank); otherwise the step
    stops on every rank (the micro-steps were not fed the same ``sample_label`` or not seeded alike),
    the rank that differs printing its fingerprints (count, sum, sum of squares: then, first)."""
    index = head.sampled_index
    if index is None:
        return grad
    count = paddle.cast(paddle.shape(index)[0:1], "int64")
    mark = paddle.concat([count, paddle.sum(index, keepdim=True), paddle.sum(index * index, keepdim=True)])
    first = _buffer(head.name + "@kept" + BUFFER_SUFFIX, [3], "int64", distributed=True)
    kept = paddle.where(acc.first, mark, first)
    paddle_compat.assign_into(kept, first)
    bad = paddle.reshape(paddle.cast(paddle.any(kept != mark), "float32"), [1])
    if head.world_size > 1:  # every rank stops together
        bad = head.chain.all_reduce_max(bad)
    return checks.passed(grad, paddle.reshape(bad == 0, []), lambda: [mark, kept], 3, head.chain)


def accumulate_gradients(acc: Accumulation, heads: list, grads, loss: paddle.pir.Value) -> paddle.pir.Value:
    """``grads`` (:class:`paddle_pfc.head.optimizer.Gradients`) replaced by their sums over the
    micro-steps so far, the feature gradients dropped (the finite check reads the accumulated
    center gradients themselves); returns the step's loss so far (:func:`accumulate_loss`)."""
    grads.pairs = accumulate_pairs(acc, grads.pairs)
    blocks, start = [], 0
    for head in heads:
        blocks += accumulate_blocks(acc, head, grads.blocks[start:start + len(head.blocks)])
        start += len(head.blocks)
    grads.blocks, grads.features = blocks, {}
    return accumulate_loss(acc, loss)
