"""Which road the Partial FC head takes, and the fused kernels behind one interface.

Two roads compute the same loss and the same update (see :mod:`paddle_pfc.head.margin_softmax`):

* ``composite``: the block-wise head of plain ops with a hand-written backward (on CPU with the
  native kernels of :mod:`paddle_pfc.kernels.native_ops` when they build; on GPU with Paddle's kernels only).
* ``fused``: one block and Paddle's two fused GPU kernels, ``class_center_sample`` and
  ``margin_cross_entropy`` (:mod:`paddle_pfc.kernels.fused`). On a machine without a GPU the same
  Python path runs with *emulations* of those kernels (:mod:`paddle_pfc.kernels.emulated`),
  which reproduce their contracts from plain Paddle ops and the head's ordered collectives.

``PADDLE_PFC_KERNELS`` (or ``LargeScaleClassifier(kernels=...)``, or ``classifier.kernels`` in a
config) picks it: ``auto`` (default) = fused on GPU, composite on CPU; ``fused``; ``composite``.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass

ENV = "PADDLE_PFC_KERNELS"
CHOICES = ("auto", "fused", "composite")

_log = logging.getLogger("paddle_pfc")


@dataclass(frozen=True)
class Road:
    """The road a head takes: ``kernels`` is ``"fused"`` or ``"composite"``; ``emulated`` is True
    when the fused kernels are the CPU emulations."""

    kernels: str
    emulated: bool


def requested(kernels: str | None) -> tuple[str, str]:
    """``(choice, source)``: the ``kernels`` argument when given, else ``$PADDLE_PFC_KERNELS``
    (default ``auto``). ValueError naming the argument or the variable for anything else."""
    if kernels is not None:
        if kernels not in CHOICES:
            raise ValueError(f"kernels must be one of {', '.join(CHOICES)}, got {kernels!r}")
        return kernels, "kernels"
    value = os.environ.get(ENV, "") or "auto"
    if value not in CHOICES:
        raise ValueError(f"{ENV} must be one of {', '.join(CHOICES)}, got {value!r}")
    return value, ENV


def choose_road(kernels: str | None, gpu: bool) -> Road:
    """The road for a head on this device (``gpu``: the program runs on a CUDA GPU)."""
    choice, source = requested(kernels)
    if choice == "auto":
        choice = "fused" if gpu else "composite"
    emulated = choice == "fused" and not gpu
    if emulated:
        _log.warning("paddle_pfc: %s=fused on a machine without a GPU: the fused GPU path runs with "
                     "emulated class_center_sample / margin_cross_entropy (paddle_pfc.kernels.emulated)",
                     source)
    return Road(choice, emulated)


def fused_kernels(emulated: bool):
    """The implementation of the fused kernels: Paddle's (``emulated=False``) or the emulations."""
    if emulated:
        from paddle_pfc.kernels.emulated import EmulatedFusedKernels

        return EmulatedFusedKernels()
    from paddle_pfc.kernels.fused import PaddleFusedKernels

    return PaddleFusedKernels()
