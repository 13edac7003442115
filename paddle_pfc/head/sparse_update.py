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

On CPU, when the native kernels are built (:mod:`paddle_pfc.kernels.native_ops`), each block is one
``sparse_update_`` that applies the same rule straight to the shard's rows (no gather, no
scatter, no float32 copy of 2-byte rows).
"""
from __future__ import annotations

from dataclasses import dataclass

import paddle
from paddle import _C_ops

from paddle_pfc.kernels import native_ops


@dataclass(frozen=True)
class CenterUpdateRule:
    """Hyper-parameters of the optimizer, read from a Paddle SGD or Momentum instance."""

    momentum: float | None  # None: plain SGD
    nesterov: bool
    weight_decay: float
    rescale_grad: float

    @classmethod
    def from_optimizer(cls, optimizer: paddle.optimizer.Optimizer) -> "CenterUpdateRule":
        """Read the rule; other optimizers and L1 decay raise ValueError (naming them)."""
        if isinstance(optimizer, paddle.optimizer.Momentum):
            method = getattr(optimizer, "_regularization_method", "")
            coeff = float(getattr(optimizer, "_regularization_coeff", 0.0) or 0.0)
            if optimizer.regularization is not None:  # L1Decay is kept as a generic regularizer
                raise ValueError("optimizer weight_decay: class centers support L2 decay (a float or "
                                 f"paddle.regularizer.L2Decay), got {optimizer.regularization}")
            if method not in ("", "l2_decay", None):
                raise ValueError(f"optimizer weight_decay: unsupported regularization {method!r}")
            return cls(float(optimizer._momentum), bool(optimizer._use_nesterov), coeff,
                       float(optimizer._rescale_grad))
        if type(optimizer) is paddle.optimizer.SGD:
            reg = optimizer.regularization
            if reg is not None and not isinstance(reg, paddle.regularizer.L2Decay):
                raise ValueError("optimizer weight_decay: class centers support L2 decay (a float or "
                                 f"paddle.regularizer.L2Decay), got {reg}")
            return cls(None, False, float(reg._coeff) if reg is not None else 0.0, 1.0)
        raise ValueError("optimizer: paddle_pfc.minimize supports paddle.optimizer.SGD and "
                         f"paddle.optimizer.Momentum, got {type(optimizer).__name__}")

    def apply_(self, rows, grad, velocity_rows, lr):
        """Update float32 [S, D] ``rows`` (and ``velocity_rows``) in place with Paddle's fused
        ``momentum_`` / ``sgd_`` kernels; ``lr`` is a float32 scalar Value. ``grad`` may be
        overwritten (SGD with weight decay adds the decay term into it). Returns the updated
        (rows, velocity_rows) Values (same memory; later readers must use these)."""
        if self.momentum is None:
            if self.rescale_grad != 1.0:
                grad = _C_ops.scale_(grad, self.rescale_grad, 0.0, True)
            if self.weight_decay:
                grad = _C_ops.add_(grad, rows * self.weight_decay)
            return _C_ops.sgd_(rows, lr, grad, None, False)[0], None
        new_rows, new_velocity, _ = _C_ops.momentum_(
            rows, grad, velocity_rows, lr, None, self.momentum, self.nesterov,
            "l2_decay" if self.weight_decay else "", self.weight_decay, False, self.rescale_grad)
        return new_rows, new_velocity


def create_velocity(weight) -> paddle.pir.Value | None:
    """A zero-initialised persistable momentum buffer shaped like ``weight``, in its dtype (sharded
    too)."""
    velocity = paddle.static.create_parameter(
        shape=list(weight.shape), dtype=weight.dtype, name=weight.name + "_velocity",
        default_initializer=paddle.nn.initializer.Constant(0.0))
    velocity.stop_gradient = True
    velocity.is_distributed = True
    velocity.trainable = False
    return velocity


def _float32(x: paddle.pir.Value) -> paddle.pir.Value:
    return x if x.dtype == paddle.float32 else paddle.cast(x, "float32")


def _write_rows_(target: paddle.pir.Value, index: paddle.pir.Value, rows32: paddle.pir.Value) -> None:
    """target[index] = rows32 (rounded to target's dtype), in place."""
    if target.dtype == paddle.float32:
        _C_ops.scatter_(target, index, rows32, True)
    else:  # the CPU scatter kernel has no 2-byte float types; index_put has
        _C_ops.index_put_(target, [index], paddle.cast(rows32, target.dtype), False)


def append_center_update(weight, velocity, chunks, grads, lr, rule: CenterUpdateRule,
                         native: bool = False) -> None:
    """Append the in-place update of the kept rows of ``weight`` (and ``velocity``).

    ``chunks``: the classifier's :class:`~paddle_pfc.head.classifier.CenterChunk` blocks (rows
    ``chunk.index`` of the shard, value ``chunk.centers``); ``grads``: their gradients, each
    computed after every other read of its block (``margin_softmax_loss`` guarantees it), so a
    float32 block that is a copy of the shard's rows is updated in place. ``native``: one
    :func:`paddle_pfc.kernels.native_ops.sparse_update_` per block, straight on the shard's rows (CPU).
    """
    if native:
        for chunk, grad in zip(chunks, grads):
            native_ops.sparse_update_(weight, velocity if velocity is not None else weight, chunk.index,
                                      _float32(grad), lr, momentum=rule.momentum, nesterov=rule.nesterov,
                                      weight_decay=rule.weight_decay, rescale=rule.rescale_grad)
        return
    for chunk, grad in zip(chunks, grads):
        if chunk.centers.dtype == weight.dtype == paddle.float32:
            rows = chunk.centers  # the gathered float32 rows themselves, updated in place
        else:  # gather the stored rows again (the block is not kept alive) and widen them
            rows = _float32(paddle.gather(weight, chunk.index))
        velocity_rows = _float32(paddle.gather(velocity, chunk.index)) if rule.momentum is not None else None
        new_rows, new_velocity = rule.apply_(rows, _float32(grad), velocity_rows, lr)
        _write_rows_(weight, chunk.index, new_rows)
        if new_velocity is not None:
            _write_rows_(velocity, chunk.index, new_velocity)
