"""AdaFace (Kim et al., CVPR 2022): a margin that adapts to each feature's norm, the norm standing
in for image quality. The rule of mk-minchul/AdaFace ``head.py`` (class ``AdaFace``), on the
target column, over the global batch (the gathered features: every rank sees the same batch):

    n_i        = clip(|x_i|, 0.001, 100)                                  (no gradient)
    mean, std  = EMA of the batch's mean(n) and unbiased std(n):  v <- t_alpha * batch_v + (1 - t_alpha) * v,
                 from 20 and 100, updated before use in the same step
    q_i        = clip(h * (n_i - mean) / (std + eps), -1, 1)
    θ_i        = clip(acos(clip(c_iy, -1 + eps, 1 - eps)) - m * q_i, eps, π - eps)
    c'_iy      = cos(θ_i) - (m + m * q_i),        every logit times s,   eps = 1e-3

The reference also clips the other columns' cosines to ±(1 - eps); here they stay as they are
(they differ only for cosines within 1e-3 of ±1). The moving averages are persistable (float32
[1] each, ``<head>@adaface@batch_mean`` / ``@batch_std``): saved and restored with the program's
other persistables, equal on every rank. A batch whose statistics are not finite leaves them as
they are. The fused backend cannot run this margin (per-sample margins).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import paddle

from paddle_pfc.head.loss_scaling import persistable_scalar
from paddle_pfc.head.margin import finite_number
from paddle_pfc.utils import paddle_compat

EPS = 1e-3
NORM_RANGE = (0.001, 100.0)
#: The moving averages' values before the first step.
INITIAL_MEAN, INITIAL_STD = 20.0, 100.0


@dataclass(frozen=True)
class AdaFace:
    """AdaFace's margin: ``m`` (the margin, >= 0), ``h`` (how far the norm moves it, > 0), ``s``
    (the scale, > 0), ``t_alpha`` (the moving averages' weight of a new batch, in (0, 1]).
    Stored as floats; ValueError naming the parameter otherwise."""

    name: ClassVar[str] = "adaface"
    uses_norms: ClassVar[bool] = True
    runs_fused: ClassVar[bool] = False

    m: float = 0.4
    h: float = 0.333
    s: float = 64.0
    t_alpha: float = 0.01

    def __post_init__(self) -> None:
        for attr in ("m", "h", "s", "t_alpha"):
            object.__setattr__(self, attr, finite_number(getattr(self, attr), f"AdaFace {attr}"))
        if self.m < 0:
            raise ValueError(f"AdaFace m must be >= 0, got {self.m!r}")
        for attr in ("h", "s"):
            if getattr(self, attr) <= 0:
                raise ValueError(f"AdaFace {attr} must be > 0, got {getattr(self, attr)!r}")
        if not 0 < self.t_alpha <= 1:
            raise ValueError(f"AdaFace t_alpha must be in (0, 1], got {self.t_alpha!r}")

    def create_states(self, prefix: str) -> list[paddle.pir.Value]:
        """``[batch_mean, batch_std]``: persistable float32 [1], starting at 20 and 100."""
        return [persistable_scalar(f"{prefix}@adaface@batch_mean", INITIAL_MEAN, "float32"),
                persistable_scalar(f"{prefix}@adaface@batch_std", INITIAL_STD, "float32")]

    def target(self, cos_target: paddle.pir.Value, norms: paddle.pir.Value | None,
               states: list[paddle.pir.Value]) -> tuple[paddle.pir.Value, paddle.pir.Value]:
        """The rule above; updates ``states`` (the moving averages) in place."""
        safe = paddle.clip(norms, *NORM_RANGE)
        safe.stop_gradient = True
        batch_mean, batch_std = self._updated(safe, states)
        scaler = paddle.clip((safe - batch_mean) / (batch_std + EPS) * self.h, -1.0, 1.0)        # [N,1]
        cos = paddle.clip(cos_target, -1.0 + EPS, 1.0 - EPS)
        unclipped = paddle.acos(cos) - self.m * scaler
        theta = paddle.clip(unclipped, EPS, math.pi - EPS)
        target = paddle.cos(theta) - (self.m + self.m * scaler)
        # d target / d c = sin(θ) / sin(acos(c)) where neither clip holds, else 0 (as autograd's clip).
        inside = paddle.logical_and(paddle.abs(cos_target) <= 1.0 - EPS,
                                    paddle.logical_and(unclipped >= EPS, unclipped <= math.pi - EPS))
        slope = paddle.sin(theta) / paddle.sqrt(1.0 - cos * cos)
        return target, paddle.where(inside, slope, paddle.zeros_like(slope))

    def _updated(self, safe: paddle.pir.Value, states: list[paddle.pir.Value]):
        """The moving averages after this batch (float32 [1] each), written into ``states``."""
        mean_var, std_var = states
        updated = []
        mean = paddle.mean(safe)
        count = paddle.cast(paddle.shape(safe)[0], "float32")
        std = paddle.sqrt(paddle.sum(paddle.square(safe - mean)) / (count - 1.0))  # unbiased, as torch's
        for var, value in ((mean_var, mean), (std_var, std)):
            new = value * self.t_alpha + (1.0 - self.t_alpha) * var
            new = paddle.where(paddle.isfinite(new), new, var)
            new.stop_gradient = True
            paddle_compat.assign_into(new, var)
            updated.append(new)
        return updated

