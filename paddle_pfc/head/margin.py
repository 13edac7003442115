"""The margin of the loss: ``cos(m1 * acos(c) + m2) - m3`` at the target cosine, all logits times s."""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import paddle


@dataclass(frozen=True)
class Margin:
    """ArcFace / CosFace / combined margin and scale. ``m1`` > 0 (multiplies the angle), ``m2``
    (adds to the angle), ``m3`` (subtracts from the cosine), ``s`` > 0 (scales every logit);
    all finite. Stored as floats; ValueError naming ``margin1`` / ``margin2`` / ``margin3`` /
    ``scale`` otherwise."""

    m1: float
    m2: float
    m3: float
    s: float

    def __post_init__(self) -> None:
        for name, attr in (("margin1", "m1"), ("margin2", "m2"), ("margin3", "m3"), ("scale", "s")):
            value = getattr(self, attr)
            if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
        if self.m1 <= 0:
            raise ValueError(f"margin1 must be > 0, got {self.m1!r}")
        if self.s <= 0:
            raise ValueError(f"scale must be > 0, got {self.s!r}")
        for attr in ("m1", "m2", "m3", "s"):
            object.__setattr__(self, attr, float(getattr(self, attr)))

    @property
    def angular(self) -> bool:
        """False when ``m1 == 1`` and ``m2 == 0``: the margin is a plain shift of the cosine."""
        return not (self.m1 == 1.0 and self.m2 == 0.0)

    def target_cosine(self, cos_target: paddle.pir.Value) -> paddle.pir.Value:
        """``cos(m1 * acos(c) + m2) - m3`` for c in [-1, 1] (any float tensor)."""
        if not self.angular:
            return cos_target - self.m3
        theta = paddle.acos(paddle.clip(cos_target, -1.0, 1.0))
        return paddle.cos(self.m1 * theta + self.m2) - self.m3

    def target_slope(self, cos_target: paddle.pir.Value) -> paddle.pir.Value:
        """d c'/d c = m1 * sin(m1*θ + m2) / sin θ with θ = acos(c); 1 when not angular."""
        if not self.angular:
            return paddle.ones_like(cos_target)
        clipped = paddle.clip(cos_target, -1.0, 1.0)
        theta = paddle.acos(clipped)
        sin_theta = paddle.sqrt(paddle.clip(1.0 - clipped * clipped, min=1e-12))
        return self.m1 * paddle.sin(self.m1 * theta + self.m2) / sin_theta
