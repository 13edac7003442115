"""The update rule of class centers: Paddle's SGD / Momentum (or AdamW) applied to the kept rows only.

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

With an ``int8`` momentum (``momentum_dtype``) each row's momentum is stored as int8 codes ``q``
with one float32 scale ``s`` a row (``v = q * s``). A kept row's momentum is widened to float32,
updated by the rule above, then quantized again from the updated row: ``s = max|v| / 127``,
``q = round(v / s)`` to nearest, ties to even (a zero row: ``s = 0``, ``q = 0``). The centers'
step uses the updated float32 momentum, before its quantization.

The block update is the head's block operation ``update_rows_`` (:mod:`paddle_pfc.kernels.blockwise`):
Paddle's kernels as above, or on CPU, when the native kernels are built, one native
``sparse_update_`` per block that applies the same rule straight to the shard's rows (no gather,
no scatter, no float32 copy of 2-byte rows).

``paddle.optimizer.AdamW`` gives the centers the sparse AdamW rule of
:mod:`paddle_pfc.head.sparse_adamw` (decoupled decay, float32 moments and a step count per row),
on Paddle's ops on every backend.
"""
from __future__ import annotations

from dataclasses import dataclass

import paddle

from paddle_pfc.head.blocks import Block
from paddle_pfc.head.sparse_adamw import AdamWSettings, AdamWStates, read_adamw, update_rows_adamw_
from paddle_pfc.kernels.blockwise import PaddleBlockOps
from paddle_pfc.utils import paddle_compat


@dataclass(frozen=True)
class CenterUpdateRule:
    """Hyper-parameters of the optimizer, read from a Paddle SGD, Momentum or AdamW instance.
    ``adamw``: AdamW's settings (``weight_decay`` then is its decoupled decay coefficient), else None."""

    momentum: float | None  # None: plain SGD (or AdamW)
    nesterov: bool
    weight_decay: float
    rescale_grad: float
    adamw: AdamWSettings | None = None

    @property
    def kind(self) -> str:
        """``"adamw"``, ``"momentum"`` or ``"sgd"``."""
        return "adamw" if self.adamw is not None else "sgd" if self.momentum is None else "momentum"

    @classmethod
    def from_optimizer(cls, optimizer: paddle.optimizer.Optimizer) -> CenterUpdateRule:
        """Read the rule; other optimizers and L1 decay raise ValueError (naming them)."""
        if isinstance(optimizer, paddle.optimizer.AdamW):
            settings, weight_decay = read_adamw(optimizer)
            return cls(None, False, weight_decay, 1.0, settings)
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
        raise ValueError("optimizer: paddle_pfc.minimize supports paddle.optimizer.SGD, paddle.optimizer.Momentum "
                         f"and paddle.optimizer.AdamW, got {type(optimizer).__name__}")


def _state(weight: paddle.pir.Value, shape: list[int], dtype, suffix: str) -> paddle.pir.Value:
    """A zero-initialised persistable, sharded optimizer state of ``weight`` named ``weight.name + suffix``."""
    state = paddle.static.create_parameter(
        shape=shape, dtype=dtype, name=weight.name + suffix,
        default_initializer=paddle.nn.initializer.Constant(0.0))
    state.stop_gradient = True
    state.is_distributed = True
    state.trainable = False
    return state


def create_velocity(weight: paddle.pir.Value, dtype: str | None = None) -> paddle.pir.Value:
    """A zero-initialised persistable momentum buffer shaped like ``weight``, in ``dtype`` (default:
    the weight's; ``int8``: codes, with the scales of :func:`create_velocity_scale`), sharded too."""
    return _state(weight, list(weight.shape), weight.dtype if dtype is None else dtype, "_velocity")


def create_velocity_scale(weight: paddle.pir.Value) -> paddle.pir.Value:
    """The float32 [L, 1] row scales of an int8 momentum of ``weight`` [L, D] (zero: a zero momentum)."""
    return _state(weight, [weight.shape[0], 1], "float32", "_velocity_scale")


def create_adamw_states(weight: paddle.pir.Value) -> AdamWStates:
    """Zero-initialised float32 AdamW states of ``weight`` [L, D], sharded: its two moments [L, D]
    (``_moment1``, ``_moment2``) and its rows' step counts [L, 1] (``_adam_steps``)."""
    rows, width = weight.shape
    return AdamWStates(_state(weight, [rows, width], "float32", "_moment1"),
                       _state(weight, [rows, width], "float32", "_moment2"),
                       _state(weight, [rows, 1], "float32", "_adam_steps"))


def append_center_update(weight: paddle.pir.Value, velocity: paddle.pir.Value | None, blocks: list[Block],
                         grads: list, lr: paddle.pir.Value, rule: CenterUpdateRule, ops: PaddleBlockOps,
                         velocity_scale: paddle.pir.Value | None = None,
                         adamw_states: AdamWStates | None = None) -> None:
    """Append the in-place update of the kept rows of ``weight`` (and ``velocity``), block by block.

    ``blocks``: the classifier's :class:`~paddle_pfc.head.blocks.Block` s (rows ``block.index`` of
    the shard, value ``block.centers``); ``grads``: their gradients, each computed after every
    other read of its block (``margin_softmax_loss`` guarantees it), so a float32 block that is a
    copy of the shard's rows is updated in place. ``ops``: the head's block operations.
    ``velocity_scale``: the row scales of an int8 ``velocity`` (None for a float momentum).
    ``adamw_states``: the shard's AdamW states, with an AdamW ``rule`` (:mod:`paddle_pfc.head.sparse_adamw`).
    """
    for block, grad in zip(blocks, grads):
        if rule.adamw is not None:
            update_rows_adamw_(weight, adamw_states, block.index, block.centers, grad, lr, rule.adamw,
                               rule.weight_decay, ops)
            continue
        ops.update_rows_(weight, velocity, block.index, block.centers, grad, lr, rule, velocity_scale)
