"""The one place outside :mod:`paddle_pfc.kernels` that touches Paddle's private APIs.

Paddle 3.3 offers no public way to do what these functions do; each names what it reaches for, so
a Paddle upgrade that moves one breaks here and nowhere else. Paddle is imported when a function
runs, not when this module is imported.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import paddle


# --- device ---------------------------------------------------------------------------------
def on_gpu() -> bool:
    """True when the current device is a CUDA GPU (public API; here so that the layers below the
    engine ask one place)."""
    import paddle

    return paddle.device.get_device().startswith("gpu")


def global_tcp_store():
    """The job's TCP key-value store that ``paddle.distributed.init_parallel_env`` created
    (``paddle.base.core.create_or_get_global_tcp_store``)."""
    from paddle.base import core

    return core.create_or_get_global_tcp_store()


# --- static (PIR) programs --------------------------------------------------------------------
def assign_into(value, target) -> None:
    """Write ``value`` into the existing Value ``target`` in place (``_C_ops.assign_out_``)."""
    from paddle import _C_ops

    _C_ops.assign_out_(value, target)


def check_finite_and_unscale_(grads: list, scale) -> tuple[list, paddle.pir.Value]:
    """Paddle's fused ``check_finite_and_unscale_`` (``_C_ops``): ``grads / scale`` in place and a
    bool [1] flag of any inf/NaN among them."""
    from paddle import _C_ops

    return _C_ops.check_finite_and_unscale_(grads, scale)


def pir_parameter(name: str):
    """A ``builtin.parameter`` op reading parameter ``name`` in the current program (``_pir_ops``)."""
    import paddle

    return paddle._pir_ops.parameter(name)


def pir_grad(outputs, inputs, allow_unused: bool = False) -> list:
    """Gradients of ``outputs`` w.r.t. ``inputs`` in a PIR program (``paddle.autograd.ir_backward``)."""
    from paddle.autograd.ir_backward import grad

    return grad(outputs, inputs, allow_unused=allow_unused)


# --- layers -------------------------------------------------------------------------------------
def own_parameters(layer) -> dict:
    """The layer's own parameter slots (``Layer._parameters``: name -> parameter, BatchNorm running
    statistics included), the mapping itself, so that a slot can be rebound."""
    return layer._parameters


def batch_norm_types() -> tuple[type, ...]:
    """Every BatchNorm layer class (``nn.layer.norm._BatchNormBase`` and ``nn.BatchNorm``)."""
    from paddle import nn

    return nn.layer.norm._BatchNormBase, nn.BatchNorm


def batch_norm_state(norm) -> tuple:
    """``(running mean, running variance, momentum, epsilon)`` of a BatchNorm layer (``_mean``,
    ``_variance``, ``_momentum``, ``_epsilon``)."""
    return norm._mean, norm._variance, norm._momentum, norm._epsilon


def check_batch_norm_input(norm, x) -> None:
    """The BatchNorm layer's own check of its input's rank (``_check_input_dim``)."""
    norm._check_input_dim(x)


def prelu_weight(prelu):
    """The slopes of a PReLU layer (``_weight``)."""
    return prelu._weight


# --- optimizers ---------------------------------------------------------------------------------
def learning_rate_value(optimizer) -> paddle.pir.Value:
    """The optimizer's learning-rate Value in the current main program (created if needed).

    Works around Paddle 3.3.1 failing to create it for an ``LRScheduler`` in PIR mode (it passes
    the default dtype as a string); the executor refreshes it from the scheduler on every run.
    """
    import paddle

    if optimizer._dtype is None:
        optimizer._dtype = paddle.float32
    optimizer._create_global_learning_rate()
    return optimizer._global_learning_rate()


def parameter_list(optimizer) -> list:
    """The parameters the optimizer was given (``_parameter_list``; empty when none were)."""
    return list(optimizer._parameter_list or [])


def grad_clip(optimizer):
    """The optimizer's gradient clip (``_grad_clip``), or None."""
    return getattr(optimizer, "_grad_clip", None)


def momentum_settings(optimizer) -> tuple[float, bool, float, str | None, float]:
    """``(momentum, use_nesterov, rescale_grad, regularization method, regularization coeff)`` of a
    ``paddle.optimizer.Momentum`` (its ``_momentum``, ``_use_nesterov``, ``_rescale_grad``,
    ``_regularization_method``, ``_regularization_coeff``)."""
    return (float(optimizer._momentum), bool(optimizer._use_nesterov), float(optimizer._rescale_grad),
            getattr(optimizer, "_regularization_method", ""),
            float(getattr(optimizer, "_regularization_coeff", 0.0) or 0.0))


def adamw_settings(optimizer) -> tuple[object, object, object, float, bool, bool]:
    """``(beta1, beta2, epsilon, weight decay coefficient, amsgrad, has lr_ratio)`` of a
    ``paddle.optimizer.AdamW`` (its ``_beta1``, ``_beta2``, ``_epsilon``, ``_weight_decay``,
    ``_amsgrad``, ``_lr_ratio``); the betas and epsilon as given (floats or Tensors)."""
    return (optimizer._beta1, optimizer._beta2, optimizer._epsilon, float(optimizer._weight_decay),
            bool(getattr(optimizer, "_amsgrad", False)), getattr(optimizer, "_lr_ratio", None) is not None)


def l2_decay_coeff(regularizer) -> float:
    """The coefficient of a ``paddle.regularizer.L2Decay`` (``_coeff``)."""
    return float(regularizer._coeff)


def tensor_is_initialized(tensor) -> bool:
    """Whether a scope variable's ``DenseTensor`` holds memory (``_is_initialized``)."""
    return bool(tensor._is_initialized())


def optimizer_accumulator(optimizer, kind: str, parameter_name: str):
    """The accumulator ``kind`` (e.g. ``"velocity"``) the optimizer created for a parameter
    (``_accumulators``)."""
    return optimizer._accumulators[kind][parameter_name]


# --- tensors --------------------------------------------------------------------------------
#: numpy dtype of each Paddle dtype a host view can take (bfloat16: its uint16 bit patterns)
_VIEW_DTYPES = {"paddle.float32": "float32", "paddle.float64": "float64", "paddle.float16": "float16",
                "paddle.bfloat16": "uint16", "paddle.int8": "int8", "paddle.uint8": "uint8",
                "paddle.int32": "int32", "paddle.int64": "int64", "paddle.bool": "bool"}


def host_tensor_view(tensor):
    """A numpy array sharing the memory of ``tensor``, an initialised CPU ``DenseTensor`` of a scope
    (its ``_ptr``, ``_numel``, ``_dtype``, ``_place``): bfloat16 as uint16 bit patterns, writable,
    no copy. None for a tensor on another device or of a dtype numpy cannot hold. The view is valid
    while the tensor keeps its allocation: nothing may run a program on it or ``set`` it meanwhile."""
    import ctypes

    import numpy as np

    if not tensor._is_initialized() or not tensor._place().is_cpu_place():
        return None
    name = _VIEW_DTYPES.get(str(tensor._dtype()))
    if name is None:
        return None
    dtype, shape, count = np.dtype(name), tuple(tensor.shape()), int(tensor._numel())
    if count == 0:
        return np.empty(shape, dtype)
    memory = (ctypes.c_char * (count * dtype.itemsize)).from_address(tensor._ptr())
    return np.frombuffer(memory, dtype=dtype).reshape(shape)


# --- memory ---------------------------------------------------------------------------------
def host_allocated_bytes(peak: bool = True) -> int | None:
    """Paddle's host allocator statistic "Allocated" of device 0 (its peak, or its current value), in
    bytes (``paddle.base.core.host_memory_stat_*``); None where the build has no such statistic."""
    from paddle.base import core

    try:
        read = core.host_memory_stat_peak_value if peak else core.host_memory_stat_current_value
        return int(read("Allocated", 0))
    except (AttributeError, RuntimeError, ValueError):  # another build
        return None


def reset_host_allocated_peak() -> None:
    """Set the peak of the "Allocated" statistic to its current value (nothing where there is none)."""
    from paddle.base import core

    try:
        core.host_memory_stat_reset_peak_value("Allocated", 0)
    except (AttributeError, RuntimeError, ValueError):  # another build
        pass
