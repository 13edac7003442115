"""The update rule of class centers: Paddle's SGD / Momentum applied to the kept rows only.

For the kept rows ``w`` (and their momentum ``v``) with gradient ``g``, learning rate ``lr``,
momentum ``mu`` and L2 weight decay ``wd`` (Paddle's ``weight_decay``):

    g' = rescale * g + wd * w
    SGD:       w <- w - lr * g'
    Momentum:  v <- mu * v + g' ;  w <- w - lr * v          (Nesterov: w <- w - lr * (g' + mu * v))

exactly the dense rule of ``paddle.optimizer.SGD`` / ``Momentum`` restricted to those rows. Rows
that were not kept, and their momentum, are not touched (bit-identical). The new rows are written
into the shard in place (``scatter_``), so no dense [num_local, D] gradient or update exists. The
rule runs as Paddle's fused in-place ``momentum_`` / ``sgd_`` kernel on the gathered rows (or on
the whole shard when every row is kept): no [S, D] temporaries.
"""
from __future__ import annotations

from dataclasses import dataclass

import paddle
from paddle import _C_ops


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
    """A zero-initialised persistable float32 momentum buffer shaped like ``weight`` (sharded too)."""
    velocity = paddle.static.create_parameter(
        shape=list(weight.shape), dtype="float32", name=weight.name + "_velocity",
        default_initializer=paddle.nn.initializer.Constant(0.0))
    velocity.stop_gradient = True
    velocity.is_distributed = True
    velocity.trainable = False
    return velocity


def append_center_update(weight, velocity, sampled_index, rows, grad, lr,
                         rule: CenterUpdateRule) -> None:
    """Append the in-place update of ``weight`` (and ``velocity``) to the current program.

    ``sampled_index``: int64 [S] local rows, or None when every row is kept (then ``rows`` is the
    whole shard). ``rows``: the kept rows [S, D], updated in place (the gather of the kept rows,
    or ``weight`` itself); ``grad``: their gradient [S, D], which must be computed after every
    other read of ``rows`` (``margin_softmax_loss`` guarantees it).
    """
    if sampled_index is None:
        rule.apply_(weight, grad, velocity, lr)
        return
    velocity_rows = paddle.gather(velocity, sampled_index) if rule.momentum is not None else None
    new_rows, new_velocity = rule.apply_(rows, grad, velocity_rows, lr)
    _C_ops.scatter_(weight, sampled_index, new_rows, True)
    if new_velocity is not None:
        _C_ops.scatter_(velocity, sampled_index, new_velocity, True)
