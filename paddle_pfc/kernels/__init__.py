"""Every kernel of the Partial FC head, and the backend a head runs on (chosen once per head).

Two backends compute the same loss and the same update (see :mod:`paddle_pfc.head.margin_softmax`):

* ``composite``: the block-wise head of plain ops with a hand-written backward (on CPU with the
  native kernels of :mod:`paddle_pfc.kernels.native_ops` when they build; on GPU with Paddle's kernels only).
* ``fused``: one block and Paddle's two fused GPU kernels, ``class_center_sample`` and
  ``margin_cross_entropy`` (:mod:`paddle_pfc.kernels.fused`). On a machine without a GPU the same
  Python path runs with *emulations* of those kernels (:mod:`paddle_pfc.kernels.emulated`),
  which reproduce their contracts from plain Paddle ops and the head's ordered collectives.

``PADDLE_PFC_KERNELS`` (or ``LargeScaleClassifier(kernels=...)``, or ``classifier.kernels`` in a
config) picks it: ``auto`` (default) = fused on GPU (for a margin the fused kernel runs), composite
otherwise; ``fused``; ``composite``.
:func:`choose_backend` returns it with its kernels (:class:`Backend`): the block operations of
:mod:`paddle_pfc.kernels.blockwise` (Paddle's ops, or the native CPU kernels of
:mod:`paddle_pfc.kernels.native_ops`, ``PADDLE_PFC_NATIVE``) and, on the fused backend, the fused kernels.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the package imports no Paddle until a head is built
    from paddle_pfc.kernels.blockwise import PaddleBlockOps
    from paddle_pfc.kernels.fused import FusedKernels

ENV = "PADDLE_PFC_KERNELS"
CHOICES = ("auto", "fused", "composite")

_log = logging.getLogger("paddle_pfc")


@dataclass(frozen=True)
class Backend:
    """The kernels of one head, chosen once (:func:`choose_backend`).

    ``kind``: ``"fused"`` or ``"composite"``. ``emulated``: the fused kernels are the CPU
    emulations. ``blocks``: the operations (:mod:`paddle_pfc.kernels.blockwise`) of the composite
    loss, its class-center sampling, every backend's sparse update and the step's finite check; native
    CPU kernels (``native``) only on the composite backend on CPU when they build. ``fused``: the fused
    backend's kernels (sampling and loss), else None. The head asks these for every kernel it runs.
    """

    kind: str
    emulated: bool
    blocks: PaddleBlockOps
    fused: FusedKernels | None

    @property
    def native(self) -> bool:
        return self.blocks.native


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


_WARNED_EMULATED: set[str] = set()


def expect_emulation() -> None:
    """For a caller that runs the emulated fused kernels on purpose and says so itself
    (paddle-pfc-selfcheck's ``fused-emulated`` rows): ``kernels=fused`` without a GPU is not warned
    in this process (``$PADDLE_PFC_KERNELS=fused`` still is)."""
    _WARNED_EMULATED.add("kernels")


def choose_backend(kernels: str | None, gpu: bool, fused_margin: bool = True) -> Backend:
    """The backend of a head on this device (``gpu``: the program runs on a CUDA GPU).
    ``fused_margin``: the fused kernels can run the head's margin (``auto`` takes the composite
    backend for one they cannot)."""
    from paddle_pfc.kernels import native_ops
    from paddle_pfc.kernels.blockwise import NativeBlockOps, PaddleBlockOps

    choice, source = requested(kernels)
    if choice == "auto":
        choice = "fused" if gpu and fused_margin else "composite"
    emulated = choice == "fused" and not gpu
    if emulated and source not in _WARNED_EMULATED:  # once a process: a command may build several heads
        _WARNED_EMULATED.add(source)
        _log.warning("paddle_pfc: %s=fused on a machine without a GPU: the fused GPU path runs with "
                     "emulated class_center_sample / margin_cross_entropy (paddle_pfc.kernels.emulated)",
                     source)
    if choice == "fused":
        return Backend(choice, emulated, PaddleBlockOps(), fused_kernels(emulated))
    native = not gpu and native_ops.kernels() is not None  # PADDLE_PFC_NATIVE; builds on first use
    return Backend(choice, False, NativeBlockOps() if native else PaddleBlockOps(), None)


def fused_kernels(emulated: bool) -> FusedKernels:
    """The implementation of the fused kernels: Paddle's (``emulated=False``) or the emulations."""
    if emulated:
        from paddle_pfc.kernels.emulated import EmulatedFusedKernels

        return EmulatedFusedKernels()
    from paddle_pfc.kernels.fused import PaddleFusedKernels

    return PaddleFusedKernels()
