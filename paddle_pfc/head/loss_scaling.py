"""Dynamic loss scaling for float16 training, covering the class centers like every other gradient.

One step, as :func:`paddle_pfc.minimize` appends it when loss scaling is on:

    scaled_loss = loss * scale                       (scale: persistable float32 [1])
    grads       = d scaled_loss / d (backbone, kept center blocks)
    grads      /= scale, found_inf = any(!isfinite(grads))   (``check_finite_and_unscale``)
    found_inf   = max over ranks of found_inf        (center gradients differ per rank)
    if not found_inf: every update (backbone and centers)   (a ``cond``: a skipped step
                                                              changes no parameter and no state)
    scale       = scale * decr_ratio after ``decr_every_n_nan_or_inf`` consecutive bad steps,
                  scale * incr_ratio after ``incr_every_n_steps`` consecutive good steps

PLSC's static AMP leaves the class centers out of the finite check, so an overflow there updates
the centers with garbage; Paddle's static AMP zeroes the gradients of a bad step instead of
skipping it, so momentum and weight decay still move every parameter. Here a bad step is a no-op.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import paddle

from paddle_pfc.utils import paddle_compat

if TYPE_CHECKING:
    from paddle_pfc.kernels.blockwise import PaddleBlockOps


@dataclass(frozen=True)
class LossScaling:
    """Settings of dynamic loss scaling (defaults: ``paddle.amp.GradScaler``'s)."""

    init_loss_scaling: float = 2.0**16
    incr_ratio: float = 2.0
    decr_ratio: float = 0.5
    incr_every_n_steps: int = 2000
    decr_every_n_nan_or_inf: int = 1

    def __post_init__(self) -> None:
        checks = (("init_loss_scaling", self.init_loss_scaling > 0), ("incr_ratio", self.incr_ratio >= 1.0),
                  ("decr_ratio", 0.0 < self.decr_ratio <= 1.0))
        for name, ok in checks:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not ok:
                raise ValueError(f"loss scaling {name}: out of range, got {value!r}")
        for name in ("incr_every_n_steps", "decr_every_n_nan_or_inf"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"loss scaling {name}: must be an int >= 1, got {value!r}")


def persistable_scalar(name: str, value, dtype: str) -> paddle.pir.Value:
    """A [1] ``dtype`` persistable of the current programs starting at ``value``, not trained
    (state a program updates itself, saved in checkpoints)."""
    var = paddle.static.create_parameter(
        shape=[1], dtype=dtype, name=name, default_initializer=paddle.nn.initializer.Constant(value))
    var.stop_gradient = True
    var.trainable = False
    return var


class DynamicLossScaler:
    """The loss-scaling state of one program (persistable, saved in checkpoints) and its ops.

    ``scale``: float32 [1]; ``good_steps`` / ``bad_steps``: int32 [1] consecutive counters.
    """

    def __init__(self, settings: LossScaling, name: str = "loss_scaling") -> None:
        self.settings = settings
        self.scale = persistable_scalar(f"{name}@scale", settings.init_loss_scaling, "float32")
        self.good_steps = persistable_scalar(f"{name}@good_steps", 0, "int32")
        self.bad_steps = persistable_scalar(f"{name}@bad_steps", 0, "int32")

    def scaled(self, loss: paddle.pir.Value) -> paddle.pir.Value:
        """``loss * scale`` (float32 scalar)."""
        return loss * paddle.reshape(self.scale, [])

    def unscale_and_check(self, grads: list) -> tuple[list, paddle.pir.Value]:
        """Divide ``grads`` (any float dtypes and shapes) by the scale; return them and ``found_inf``:
        a bool [1], True when any of them (on this rank) is inf or NaN."""
        # One check per dtype (a pure-float16 backbone has float16 gradients; the kernel takes one).
        unscaled, flags = list(grads), []
        for dtype in dict.fromkeys(g.dtype for g in grads):
            positions = [i for i, g in enumerate(grads) if g.dtype == dtype]
            outs, found = paddle_compat.check_finite_and_unscale_([grads[i] for i in positions], self.scale)
            for i, out in zip(positions, outs):
                unscaled[i] = out
            flags.append(found)
        if not flags:
            return unscaled, paddle.full([1], False, "bool")
        found_inf = flags[0]
        for flag in flags[1:]:
            found_inf = paddle.logical_or(found_inf, flag)
        return unscaled, found_inf

    def append_update(self, found_inf: paddle.pir.Value, apply: paddle.pir.Value | None = None) -> None:
        """Grow or shrink the scale after this step (in place; runs after every reader of it).
        ``apply`` (bool [1]): only where it holds (the last micro-step of an accumulated step)."""
        s = self.settings
        good = paddle.where(found_inf, paddle.zeros_like(self.good_steps), self.good_steps + 1)
        bad = paddle.where(found_inf, self.bad_steps + 1, paddle.zeros_like(self.bad_steps))
        shrink = bad >= s.decr_every_n_nan_or_inf
        grow = good >= s.incr_every_n_steps
        new_scale = paddle.where(shrink, paddle.clip(self.scale * s.decr_ratio, min=1.0),
                                 paddle.where(grow, self.scale * s.incr_ratio, self.scale))
        # Keep a finite scale: growing past float32's range would make every step overflow.
        new_scale = paddle.where(paddle.isfinite(new_scale), new_scale, self.scale)
        for value, target, reset in ((bad, self.bad_steps, shrink), (good, self.good_steps, grow),
                                     (new_scale, self.scale, None)):
            value = value if reset is None else paddle.where(reset, paddle.zeros_like(value), value)
            paddle_compat.assign_into(value if apply is None else paddle.where(apply, value, target), target)


def nonfinite_flag(values: list, ops: PaddleBlockOps, limit_log2: int = 128) -> paddle.pir.Value:
    """bool [1]: True when any element of ``values`` (any float dtypes, shapes) is inf or NaN, or
    (``limit_log2`` < 128) of magnitude >= ``2**limit_log2``: the head's block operations ``ops``
    check them (:meth:`~paddle_pfc.kernels.blockwise.PaddleBlockOps.any_nonfinite`).

    Reads the values only (no in-place op), so the values used afterwards are exactly the
    ones computed before the check.
    """
    if not values:
        return paddle.full([1], False, "bool")
    return ops.any_nonfinite(values, limit_log2)
