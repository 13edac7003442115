"""The update rule of class centers: Paddle's SGD / Momentum applied to the kept rows only.

For the kept rows ``w`` (and their momentum ``v``) with gradient ``g``, learning rate ``lr``,
momentum ``mu`` and L2 weight decay ``wd`` (Paddle's ``weight_decay``):

    g' = rescale * g + wd * w
    SGD:       w <- w - lr * g'
    Momentum:  v <- mu * v + g' ;  w <- w - lr * v          (Nesterov: w <- w - lr * (g' + mu * v))

exactly the dense rule of ``paddle.optimizer.SGD`` / ``Momentum`` restricted to those rows. Rows
that were not kept, and their momentum, are not touched (bit-identical). The kept rows are updated
block by block (the classifier's blocks): Paddle's fused in-place ``momentum_`` / ``sgd_`` kernel
on float32 rows, written back into the shard in place (``scatter_``, or ``index_put_`` for 2-byte
storage), so no dense [num_local, D] gradient or update exists and every temporary is one block.

With a 2-byte ``center_dtype`` (bfloat16 / float16 storage of the centers and their momentum) the
rows, momentum and gradient of a block are widened to float32, updated in float32 and rounded to
the storage dtype once, on write-back.

The block update is the head's block operation ``update_rows_`` (:mod:`paddle_pfc.kernels.blockwise`):
Paddle's kernels as above, or on CPU, when the native kernels are built, one native
``sparse_update_`` per block that applies the same rule straight to the shard's rows (no gather,
no scatter, no float32 copy of 2-byte rows).
"""
from __future__ import annotations

from dataclasses import dataclass

import paddle

from paddle_pfc.head.blocks import Block
from paddle_pfc.kernels.blockwise import PaddleBlockOps
from paddle_pfc.utils import paddle_compat


@dataclass(frozen=True)
class CenterUpdateRule:
    """Hyper-parameters of the optimizer, read from a Paddle SGD or Momentum instance."""

    momentum: float | None  # None: plain SGD
    nesterov: bool
    weight_decay: float
    rescale_grad: float

    @classmethod
    def from_optimizer(cls, optimizer: paddle.optimizer.Optimizer) -> CenterUpdateRule:
        """Read the rule; other optimizers and L1 decay raise ValueError (naming them)."""
        if isinstance(optimizer, paddle.optimizer.Momentum):
            momentum, nesterov, rescale_grad, method, coeff = paddle_compat.momentum_settings(optimizer)
            if optimizer.regularization is not None:  # L1Decay is kept as a generic regularizer
                raise ValueError("optimizer weight_decay: class centers support L2 decay (a float or "
                                 f"paddle.regularizer.L2Decay), got {optimizer.regularization}")
            if method not in ("", "l2_decay", None):
                raise ValueError(f"optimizer weight_decay: unsupported regularization {method!r}")
            return cls(momentum, nesterov, coeff, rescale_grad)
        if type(optimizer) is paddle.optimizer.SGD:
            reg = optimizer.regularization
            if reg is not None and not isinstance(reg, paddle.regularizer.L2Decay):
                raise ValueError("optimizer weight_decay: class centers support L2 decay (a float or "
                                 f"paddle.regularizer.L2Decay), got {reg}")
            return cls(None, False, paddle_compat.l2_decay_coeff(reg) if reg is not None else 0.0, 1.0)
        raise ValueError("optimizer: paddle_pfc.minimize supports paddle.optimizer.SGD and "
                         f"paddle.optimizer.Momentum, got {type(optimizer).__name__}")


def create_velocity(weight: paddle.pir.Value) -> paddle.pir.Value:
    """A zero-initialised persistable momentum buffer shaped like ``weight``, in its dtype (sharded
    too)."""
    velocity = paddle.static.create_parameter(
        shape=list(weight.shape), dtype=weight.dtype, name=weight.name + "_velocity",
        default_initializer=paddle.nn.initializer.Constant(0.0))
    velocity.stop_gradient = True
    velocity.is_distributed = True
    velocity.trainable = False
    return velocity


def append_center_update(weight: paddle.pir.Value, velocity: paddle.pir.Value | None, blocks: list[Block],
                         grads: list, lr: paddle.pir.Value, rule: CenterUpdateRule, ops: PaddleBlockOps) -> None:
    """Append the in-place update of the kept rows of ``weight`` (and ``velocity``), block by block.

    ``blocks``: the classifier's :class:`~paddle_pfc.head.blocks.Block` s (rows ``block.index`` of
    the shard, value ``block.centers``); ``grads``: their gradients, each computed after every
    other read of its block (``margin_softmax_loss`` guarantees it), so a float32 block that is a
    copy of the shard's rows is updated in place. ``ops``: the head's block operations.
    """
    for block, grad in zip(blocks, grads):
        ops.update_rows_(weight, velocity, block.index, block.centers, grad, lr, rule)
