"""The sparse AdamW rule of class centers: AdamW applied to the kept rows only, each row with its own step count.

For a kept row ``w`` with gradient ``g``, its moments ``m``, ``v`` and its step count ``t`` (the
steps that kept it before this one), learning rate ``lr``, decoupled decay ``wd``, ``beta1``,
``beta2`` and ``eps``:

    t <- t + 1
    w <- w - lr * wd * w                                              (decoupled decay)
    m <- beta1 * m + (1 - beta1) * g ;  v <- beta2 * v + (1 - beta2) * g^2
    w <- w - lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)

torch.optim.AdamW's documented step, applied to the row. Rows that were not kept, their moments
and their step counts are not touched (bit-identical).

**Bias correction per row** (lazy Adam): ``t`` counts the steps that kept the row, not the
global steps. A row's moments have then seen exactly ``t`` gradients, so ``1 - beta^t`` removes
exactly their zero-start bias, and every row's sequence of updates is the one dense AdamW makes
on that row's own sequence of gradients. With the global step instead, a class first sampled at a
late step would take ``m / sqrt(v) = (1 - beta1) / sqrt(1 - beta2) * sign(g)``, about 3.2 times
Adam's first step at the default betas, and every rarely sampled class would keep stepping too far.
Without sampling every row is kept every step and the two coincide (dense AdamW). The counts are a
float32 ``[L, 1]`` state of the shard (``_adam_steps``): exact to 2**24 steps, where both
corrections are already 1 in float32.

Storage: ``m`` and ``v`` are float32 ``[L, D]`` (``_moment1``, ``_moment2``) whatever the centers'
dtype; 2-byte centers are widened to float32 for the step and rounded once on write-back, as the
momentum rule does. All three are persistable sharded states, checkpointed and resharded with the
centers.

The block update is Paddle's ops on the gathered rows of each block, on every backend: the
native kernels have no AdamW. Where the backend hands the update an unprojected center gradient
(:attr:`~paddle_pfc.kernels.blockwise.PaddleBlockOps.projects_in_update`), its tangent projection
at the stored row, ``g - (g . w) w / max(|w|, eps)^2``, is taken here first, as the native update does.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import paddle

from paddle_pfc.kernels.blockwise import NORM_EPS, PaddleBlockOps, float32, write_rows_
from paddle_pfc.utils import paddle_compat


@dataclass(frozen=True)
class AdamWSettings:
    """AdamW's hyper-parameters besides the learning rate and the decay coefficient."""

    beta1: float
    beta2: float
    epsilon: float


@dataclass(frozen=True)
class AdamWStates:
    """The sharded states of a center shard under AdamW: ``moment1``, ``moment2`` (float32 [L, D])
    and ``steps`` (float32 [L, 1]: the steps that kept each row)."""

    moment1: paddle.pir.Value
    moment2: paddle.pir.Value
    steps: paddle.pir.Value

    def values(self) -> list:
        return [self.moment1, self.moment2, self.steps]


def _number(value, what: str) -> float:
    if not isinstance(value, (int, float)):
        raise ValueError(f"optimizer {what}: class centers need a Python number, got {type(value).__name__}")
    return float(value)


def read_adamw(optimizer) -> tuple[AdamWSettings, float]:
    """``(settings, decoupled decay coefficient)`` of a ``paddle.optimizer.AdamW``; ValueError naming
    what the sparse rule cannot apply (AMSGrad, lr_ratio, Tensor betas or epsilon)."""
    beta1, beta2, epsilon, weight_decay, amsgrad, lr_ratio = paddle_compat.adamw_settings(optimizer)
    if amsgrad:
        raise ValueError("optimizer amsgrad: the class centers' AdamW has no AMSGrad; use amsgrad=False")
    if lr_ratio:
        raise ValueError("optimizer lr_ratio: the class centers' AdamW takes one learning rate; leave lr_ratio unset")
    settings = AdamWSettings(_number(beta1, "beta1"), _number(beta2, "beta2"), _number(epsilon, "epsilon"))
    return settings, weight_decay


def projected(grad: paddle.pir.Value, rows: paddle.pir.Value) -> paddle.pir.Value:
    """The tangent projection of float32 ``grad`` [c, D] at ``rows`` [c, D]:
    ``g - (g . w) w / max(|w|, eps)^2`` row by row."""
    inv_norm = 1.0 / paddle.clip(paddle.linalg.norm(rows, axis=1, keepdim=True), min=NORM_EPS)
    along = paddle.sum(grad * rows, axis=1, keepdim=True) * inv_norm * inv_norm
    return grad - rows * along


def bias_correction(steps: paddle.pir.Value, beta: float) -> paddle.pir.Value:
    """``1 - beta**steps`` of float32 ``steps``, as ``-expm1(steps * log(beta))``: a few float32
    ulps relative where ``1 - pow(beta, steps)`` would cancel (``beta`` near 1, few steps)."""
    if beta == 0.0:
        return paddle.ones_like(steps)
    return -paddle.expm1(steps * math.log(beta))


def update_rows_adamw_(weight: paddle.pir.Value, states: AdamWStates, index: paddle.pir.Value,
                       centers: paddle.pir.Value, grad: paddle.pir.Value, lr: paddle.pir.Value,
                       settings: AdamWSettings, weight_decay: float, ops: PaddleBlockOps) -> None:
    """Apply the rule (module doc) to rows ``index`` (int64 [c], unique) of ``weight`` [L, D] and of
    ``states``, in place, with ``grad`` [c, D] (what ``ops.center_grad_`` handed on) and the float32
    scalar ``lr``: float32 arithmetic, the centers written back in their storage dtype. ``centers``
    (the block's forward value) is read as the rows when it is a float32 copy of a float32 shard on
    Paddle's ops; otherwise the stored rows are gathered again."""
    if centers.dtype == weight.dtype == paddle.float32 and not ops.native:
        rows = centers
    else:
        rows = float32(paddle.gather(weight, index))
    grad = float32(grad)
    if ops.projects_in_update:
        grad = projected(grad, rows)
    beta1, beta2 = settings.beta1, settings.beta2
    steps = paddle.gather(states.steps, index) + 1.0                                    # [c, 1]
    moment1 = paddle.gather(states.moment1, index) * beta1 + grad * (1.0 - beta1)
    moment2 = paddle.gather(states.moment2, index) * beta2 + grad * grad * (1.0 - beta2)
    correction1, correction2 = bias_correction(steps, beta1), bias_correction(steps, beta2)
    step = (moment1 / correction1) / (paddle.sqrt(moment2 / correction2) + settings.epsilon)
    new_rows = rows * (1.0 - lr * weight_decay) - lr * step if weight_decay else rows - lr * step
    write_rows_(weight, index, new_rows)
    write_rows_(states.moment1, index, moment1)
    write_rows_(states.moment2, index, moment2)
    write_rows_(states.steps, index, steps)
