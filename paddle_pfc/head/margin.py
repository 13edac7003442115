"""The margin of the loss: the rule that turns the target cosine into the target logit.

:class:`Margin` is the contract the head calls; :class:`CombinedMargin` (ArcFace / CosFace /
combined, ``cos(m1 * acos(c) + m2) - m3``) is the margin of the four scalars, and
:func:`margin_of` builds it from ``LargeScaleClassifier``'s ``margin1``..``margin3`` / ``scale``.
A new margin is one module with one class that satisfies :class:`Margin` (e.g.
:mod:`paddle_pfc.head.adaface`).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np
import paddle


@runtime_checkable
class Margin(Protocol):
    """The target logit's rule. Every logit is ``s`` times a cosine; the target column's cosine
    ``c`` becomes ``target(c)``; the other columns keep theirs.

    ``name``: what errors call it (``"combined"``, ``"adaface"``). ``s``: the scale of every logit.
    ``uses_norms``: :meth:`target` reads the features' norms. ``runs_fused``: the fused backend's
    ``margin_cross_entropy`` can run it (then it also has the kernel's ``m1, m2, m3``); the fused
    backend refuses any other margin by name.
    """

    name: str
    s: float
    uses_norms: bool
    runs_fused: bool

    def create_states(self, prefix: str) -> list[paddle.pir.Value]:
        """Create its persistable state in the current main and startup programs (names starting
        with ``prefix``) and return it; ``[]`` when it has none. Called once per head."""

    def target(self, cos_target: paddle.pir.Value, norms: paddle.pir.Value | None,
               states: list[paddle.pir.Value]) -> tuple[paddle.pir.Value, paddle.pir.Value]:
        """``(target cosine, slope)``, float32 [N, 1] each: the target column's cosine after the
        margin and its derivative with respect to ``cos_target`` (float32 [N, 1], in [-1, 1]).
        ``norms``: float32 [N, 1], the norms of the global batch's features (no gradient), when
        ``uses_norms`` (else None); ``states``: what :meth:`create_states` returned. It may update
        its states in place (once per step, in the forward)."""


def finite_number(value, name: str) -> float:
    """``value`` as a float; ValueError naming ``name`` unless it is a finite real number (not a bool)."""
    if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class CombinedMargin:
    """ArcFace / CosFace / combined margin and scale. ``m1`` > 0 (multiplies the angle), ``m2``
    (adds to the angle), ``m3`` (subtracts from the cosine), ``s`` > 0 (scales every logit);
    all finite. Stored as floats; ValueError naming ``margin1`` / ``margin2`` / ``margin3`` /
    ``scale`` otherwise."""

    name: ClassVar[str] = "combined"
    uses_norms: ClassVar[bool] = False
    runs_fused: ClassVar[bool] = True

    m1: float
    m2: float
    m3: float
    s: float

    def __post_init__(self) -> None:
        for name, attr in (("margin1", "m1"), ("margin2", "m2"), ("margin3", "m3"), ("scale", "s")):
            object.__setattr__(self, attr, finite_number(getattr(self, attr), name))
        if self.m1 <= 0:
            raise ValueError(f"margin1 must be > 0, got {self.m1!r}")
        if self.s <= 0:
            raise ValueError(f"scale must be > 0, got {self.s!r}")

    @property
    def angular(self) -> bool:
        """False when ``m1 == 1`` and ``m2 == 0``: the margin is a plain shift of the cosine."""
        return not (self.m1 == 1.0 and self.m2 == 0.0)

    def create_states(self, prefix: str) -> list[paddle.pir.Value]:
        return []

    def target(self, cos_target: paddle.pir.Value, norms: paddle.pir.Value | None,
               states: list[paddle.pir.Value]) -> tuple[paddle.pir.Value, paddle.pir.Value]:
        return self.target_cosine(cos_target), self.target_slope(cos_target)

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


#: ``LargeScaleClassifier``'s default scalars: ArcFace (m2 = 0.5), scale 64.
DEFAULT_SCALARS = (1.0, 0.5, 0.0, 64.0)


def margin_of(margin: Margin | None, margin1=None, margin2=None, margin3=None, scale=None) -> Margin:
    """The head's margin: ``margin`` when given (then no scalar may be), else the
    :class:`CombinedMargin` of the scalars (each left out takes :data:`DEFAULT_SCALARS`'s)."""
    scalars = (margin1, margin2, margin3, scale)
    if margin is None:
        return CombinedMargin(*(d if v is None else v for v, d in zip(scalars, DEFAULT_SCALARS)))
    if not isinstance(margin, Margin):
        raise ValueError(f"margin must be a paddle_pfc.head.margin.Margin (e.g. CombinedMargin, AdaFace), "
                         f"got {type(margin).__name__}")
    if any(v is not None for v in scalars):
        raise ValueError("give margin= or margin1/margin2/margin3/scale, not both")
    return margin
