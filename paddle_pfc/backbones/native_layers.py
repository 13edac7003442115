"""Backbone layers whose training forward/backward run in native CPU kernels.

:class:`PReLU`, :class:`BatchNorm2D`, :class:`GroupedConv2D`, :class:`DepthwiseConv2D` and
:class:`Conv2D` are Paddle's ``nn.PReLU``, ``nn.BatchNorm2D`` and ``nn.Conv2D`` (same
parameters, initialisation and state-dict names, so checkpoints and exported models are
unchanged), except that in a static *training* program on CPU (and in an eval program built
within :func:`native_inference`) they call
:func:`paddle_pfc.kernels.native_ops.prelu` / :func:`~paddle_pfc.kernels.native_ops.batch_norm` /
:func:`~paddle_pfc.kernels.native_ops.grouped_conv2d` /
:func:`paddle_pfc.kernels.onednn_ops.conv2d` (oneDNN) when the native kernels are available
(``PADDLE_PFC_NATIVE``; depthwise convolutions go to oneDNN too when it is available, the native
kernel otherwise; grouped ones with few channels a group to the native kernel, oneDNN having
no direct kernel for them; on channels-last tensors grouped ones and the depthwise ones oneDNN
runs on generic code, strided or global, to :func:`~paddle_pfc.kernels.native_ops.depthwise_conv2d`;
norms in eval mode to :func:`~paddle_pfc.kernels.native_ops.batch_norm_inference`).
:func:`batch_norm_prelu` runs a batch norm and the PReLU after it as
one native op; with bfloat16 convolutions (:func:`use_bfloat16_convolutions`), the tensors
between a convolution that multiplies in bfloat16 and a norm that only it feeds or reads (:func:`conv_batch_norm`,
``bfloat16_output``) are bfloat16, as under torch's autocast. Paddle 3.3's CPU PReLU and
depthwise kernels took half of mobilefacenet's training step, its im2col + GEMM convolutions
most of the rest and ~97 % of iresnet50's, its batch norm with the PReLU ~17 % of the step once
those were native (``docs/paddle-notes.md``). Eval programs built outside :func:`native_inference`
(export), dynamic mode and GPU programs use Paddle's ops, so an exported model needs no custom-op
library.

Channels last: within :func:`channels_last` (opened by a model around the part of its training
program that runs on these layers, when :func:`channels_last_ready`), the layers take and return
NHWC tensors: oneDNN convolves them with no layout reorder and the native norm reads them along
rows; :func:`to_channels_last` / :func:`to_channels_first` convert at the edges. Parameters and
state-dict names are the same; only the training program's activations change layout.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

import paddle
from paddle import nn

from paddle_pfc.kernels import native_ops, onednn_ops
from paddle_pfc.utils import paddle_compat

_channels_last = [False]  # True while a model builds its channels-last part (channels_last())
_native_inference = [False]  # True while an eval program that runs only here is built (native_inference())
_bfloat16_serving = [False]  # True while a program for bfloat16 serving is built (bfloat16_serving())


@contextlib.contextmanager
def channels_last() -> Iterator[None]:
    """Within: the layers of this module build ops on NHWC tensors (see the module docstring); a
    layer that cannot raises RuntimeError. For a model's training program when
    :func:`channels_last_ready`."""
    previous = _channels_last[0]
    _channels_last[0] = True
    try:
        yield
    finally:
        _channels_last[0] = previous


@contextlib.contextmanager
def native_inference() -> Iterator[None]:
    """Within: layers of this module in eval mode build native forward ops too in a static CPU
    program, as in training (oneDNN's convolutions, the depthwise kernels, channels last) with the
    norms on their running statistics (:func:`paddle_pfc.kernels.native_ops.batch_norm_inference`)
    and float32 products. For eval programs that run in this process only (validation during
    training, ``tools/validate.py``), because they run faster than on Paddle's ops (figures:
    docs/performance.md). An exported model is built outside it and keeps Paddle's ops."""
    previous = _native_inference[0]
    _native_inference[0] = True
    try:
        yield
    finally:
        _native_inference[0] = previous


@contextlib.contextmanager
def bfloat16_serving() -> Iterator[None]:
    """Within: :class:`PReLU` builds ``alpha * x + (1 - alpha) * relu(x)`` (the same values in float32)
    instead of Paddle's ``prelu`` op, whose oneDNN bfloat16 kernel in Paddle 3.3.1 multiplies by
    wrong slopes (docs/paddle-notes.md). For programs that Paddle Inference runs
    with ``enable_onednn_bfloat16`` (:mod:`paddle_pfc.deploy.export`, ``precision="bfloat16"``)."""
    previous = _bfloat16_serving[0]
    _bfloat16_serving[0] = True
    try:
        yield
    finally:
        _bfloat16_serving[0] = previous


def in_channels_last() -> bool:
    """True within :func:`channels_last`."""
    return _channels_last[0]


def channels_last_ready(model: nn.Layer) -> bool:
    """True when ``model`` now builds a training program whose convolutions and norms of these
    layers all run natively (oneDNN and the native norm built), so it may run them channels last."""
    return (native_program(model, onednn_ops.kernels)
            and native_program(model, lambda: native_ops.kernels("batch_norm_ops")))


def to_channels_last(x):
    """NCHW ``x`` as NHWC (:func:`paddle_pfc.kernels.onednn_ops.to_channels_last`)."""
    return onednn_ops.to_channels_last(x)


def to_channels_first(x):
    """NHWC ``x`` as NCHW (:func:`paddle_pfc.kernels.onednn_ops.to_channels_first`)."""
    return onednn_ops.to_channels_first(x)


def _refuse_channels_last(layer: nn.Layer) -> None:
    """Called where ``layer`` falls back to Paddle's (NCHW) op: within :func:`channels_last` that
    raises."""
    if in_channels_last():
        raise RuntimeError(f"{type(layer).__name__}: channels_last() needs the layer's native op in a CPU "
                           "training program (see channels_last_ready)")


def native_program(layer: nn.Layer, extension) -> bool:
    """True when ``layer`` now builds native ops: training mode (or eval mode within
    :func:`native_inference`), a static program on CPU, and the op's ``extension()`` built."""
    return ((layer.training or _native_inference[0]) and not paddle.in_dynamic_mode()
            and not paddle.device.get_device().startswith("gpu") and extension() is not None)


def native_layers_active(layer: nn.Layer, x, extension=lambda: native_ops.kernels("backbone_ops")) -> bool:
    """True when ``layer`` called on float32 ``x`` now builds a native op (:func:`native_program`;
    default extension: the backbone ops)."""
    return x.dtype == paddle.float32 and native_program(layer, extension)


def _symmetric_padding(padding, layer: str) -> tuple[int, int]:
    """``padding`` (an int, or (ph, pw)) as (ph, pw); ValueError naming ``layer`` otherwise."""
    pad = (padding, padding) if isinstance(padding, int) else tuple(padding)
    if len(pad) != 2 or not all(isinstance(p, int) and p >= 0 for p in pad):
        raise ValueError(f"{layer} takes int or (ph, pw) padding, got {padding!r}")
    return pad


class PReLU(nn.PReLU):
    """``nn.PReLU(num_parameters=C)`` (channel mode, NCHW); see the module docstring."""

    def forward(self, x):
        if _bfloat16_serving[0]:
            weight = paddle_compat.prelu_weight(self)
            slope = paddle.reshape(weight, [1, -1, 1, 1]) if self._num_parameters > 1 else weight
            return slope * x + (1.0 - slope) * nn.functional.relu(x)
        if in_channels_last():
            return nn.functional.prelu(x, paddle_compat.prelu_weight(self), data_format="NHWC")
        if self._num_parameters > 1 and self._data_format == "NCHW" and native_layers_active(self, x):
            return native_ops.prelu(x, paddle_compat.prelu_weight(self))
        return super().forward(x)


class BatchNorm2D(nn.BatchNorm2D):
    """``nn.BatchNorm2D(C, momentum, epsilon)`` (NCHW, learned scale and bias, batch statistics
    in training); see the module docstring."""

    def native(self) -> bool:
        """True when this layer now builds a native op: in training the batch-statistics op (on a
        float32 or bfloat16 input), in eval mode (within :func:`native_inference`) the
        running-statistics one (float32)."""
        return (self._data_format == "NCHW" and not (self.training and self._use_global_stats)
                and self.weight is not None and self.bias is not None
                and native_program(self, lambda: native_ops.kernels("batch_norm_ops")))

    def forward(self, x):
        return batch_norm_prelu(self, None, x)


def _fused(norm: nn.BatchNorm2D, prelu: nn.PReLU | None) -> bool:
    """True when ``prelu(norm(.))`` now builds one native op."""
    fusable = prelu is None or (prelu._num_parameters == norm._num_features and prelu._data_format == "NCHW")
    return isinstance(norm, BatchNorm2D) and fusable and norm.native()


def takes_bfloat16(conv: nn.Layer) -> bool:
    """True when ``conv`` is a :class:`Conv2D` or :class:`DepthwiseConv2D` that now multiplies in
    bfloat16 natively: it reads a bfloat16 input as it is (the conversion it would make, saved)
    and can write bfloat16."""
    return isinstance(conv, (Conv2D, GroupedConv2D)) and conv.multiplies_bfloat16()


def batch_norm_prelu(norm: nn.BatchNorm2D, prelu: nn.PReLU | None, x, bfloat16_output: bool = False):
    """``prelu(norm(x))`` (``norm(x)`` without ``prelu``); one native op (the PReLU's input never
    stored) when ``norm`` is a :class:`BatchNorm2D` that runs natively and ``prelu`` has one slope
    per channel: then ``x`` may be bfloat16, and the output is bfloat16 with ``bfloat16_output``
    (for a convolution that :func:`takes_bfloat16`)."""
    if x.dtype == paddle.float32 and not norm.training and _fused(norm, prelu):
        paddle_compat.check_batch_norm_input(norm, x)
        mean, variance, _, epsilon = paddle_compat.batch_norm_state(norm)
        return native_ops.batch_norm_inference(x, norm.weight, norm.bias, mean, variance, epsilon,
                                               None if prelu is None else paddle_compat.prelu_weight(prelu),
                                               channels_last=in_channels_last())
    if x.dtype in (paddle.float32, paddle.bfloat16) and norm.training and _fused(norm, prelu):
        paddle_compat.check_batch_norm_input(norm, x)
        mean, variance, momentum, epsilon = paddle_compat.batch_norm_state(norm)
        return native_ops.batch_norm(x, norm.weight, norm.bias, mean, variance, momentum,
                                     epsilon, None if prelu is None else paddle_compat.prelu_weight(prelu),
                                     bfloat16_output, channels_last=in_channels_last())
    if prelu is not None and in_channels_last():  # a PReLU that cannot fuse (one slope) follows the norm
        return prelu(batch_norm_prelu(norm, None, x))
    _refuse_channels_last(norm)
    out = nn.BatchNorm2D.forward(norm, x)
    return out if prelu is None else prelu(out)


def conv_batch_norm(conv: nn.Layer, norm: nn.BatchNorm2D, prelu: nn.PReLU | None, x, bfloat16_output: bool = False):
    """``batch_norm_prelu(norm, prelu, conv(x), bfloat16_output)`` for a convolution whose output
    only the norm reads: a convolution that :func:`takes_bfloat16` writes it in bfloat16 when the
    norm runs natively (half the bytes written, read by the norm twice, and of its gradient)."""
    out = conv(x, bfloat16_output=True) if takes_bfloat16(conv) and _fused(norm, prelu) else conv(x)
    return batch_norm_prelu(norm, prelu, out, bfloat16_output)


class GroupedConv2D(nn.Conv2D):
    """``nn.Conv2D(in, out, kernel, stride, padding, groups=groups, bias_attr=False)`` with few
    channels a group (no dilation, symmetric integer padding), whose static training programs on
    CPU run a native kernel: on NCHW input the grouped kernel of ``csrc/backbone_ops.cc``; under
    :func:`channels_last`, when each group's outputs read as many inputs and that count divides 16
    (mobilefacenet's 64 groups of 2), the channels-last kernel of ``csrc/depthwise_ops.cc``, which
    also multiplies in bfloat16. Paddle's conv2d and oneDNN both take im2col + GEMM for
    mobilefacenet's 64 groups of 2 channels (its backward ~13 % of the float32 step,
    docs/paddle-notes.md)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride, padding, groups: int,
                 weight_attr=None) -> None:
        pad = _symmetric_padding(padding, type(self).__name__)
        super().__init__(in_channels, out_channels, kernel_size=kernel_size, stride=stride, padding=pad,
                         groups=groups, weight_attr=weight_attr, bias_attr=False)
        self._pad_hw = pad

    #: multiply in bfloat16 where that is fast (set by :func:`use_bfloat16_convolutions`; see
    #: :meth:`multiplies_bfloat16`)
    bfloat16_products = False

    def channels_last_kernel(self, x=None) -> bool:
        """True when this layer (on NHWC ``x``) now builds the channels-last kernel
        (``csrc/depthwise_ops.cc``)."""
        group = self._in_channels // self._groups
        return (self._data_format == "NCHW" and in_channels_last() and self._out_channels == self._in_channels
                and 16 % group == 0 and native_program(self, lambda: native_ops.kernels("depthwise_ops")))

    def multiplies_bfloat16(self) -> bool:
        """True when this layer now multiplies in bfloat16: :attr:`bfloat16_products` (training
        programs only) and the channels-last kernel."""
        return self.bfloat16_products and self.training and self.channels_last_kernel()

    def forward(self, x, bfloat16_output: bool = False):
        """``bfloat16_output``: write the output in bfloat16 when this layer :func:`takes_bfloat16`."""
        bf16 = self.multiplies_bfloat16()
        if (x.dtype == paddle.float32 or (x.dtype == paddle.bfloat16 and bf16)) and self.channels_last_kernel(x):
            return native_ops.depthwise_conv2d(x, self.weight, self._stride, self._pad_hw, bf16,
                                               bfloat16_output and bf16)
        if self._data_format == "NCHW" and native_layers_active(self, x):
            if in_channels_last():  # the NCHW kernel: converted around it
                out = native_ops.grouped_conv2d(to_channels_first(x), self.weight, self._stride, self._pad_hw,
                                                self._groups)
                return to_channels_last(out)
            return native_ops.grouped_conv2d(x, self.weight, self._stride, self._pad_hw, self._groups)
        _refuse_channels_last(self)
        return super().forward(x)


class DepthwiseConv2D(GroupedConv2D):
    """``nn.Conv2D(C, C, kernel, stride, padding, groups=C, bias_attr=False)`` on NCHW input with
    symmetric integer padding and no dilation; see the module docstring."""

    def __init__(self, channels: int, kernel_size, stride, padding, weight_attr=None) -> None:
        super().__init__(channels, channels, kernel_size, stride, padding, channels, weight_attr)

    def native(self) -> bool:
        """True when this layer can now build oneDNN's convolution (for a float32 input, and a
        bfloat16 one when it :meth:`multiplies_bfloat16`); :meth:`forward` takes it unless
        :meth:`channels_last_kernel`."""
        return self._data_format == "NCHW" and native_program(self, onednn_ops.kernels)

    def channels_last_kernel(self, x=None) -> bool:
        """True when this layer now builds the channels-last kernel of ``csrc/depthwise_ops.cc``
        (under :func:`channels_last`): strided, or global on NHWC ``x`` (the kernel covers the
        padded map: mobilefacenet's GDC), because oneDNN's bfloat16 backward of a strided
        depthwise layer and its d weight of the GDC (7x7 over a 7x7 map) are generic code, slower
        than this kernel; stride-1 layers stay on oneDNN, whose stride-1 3x3 kernels are faster
        than ours (figures: docs/performance.md)."""
        if not super().channels_last_kernel():
            return False
        if tuple(self._stride) != (1, 1):
            return True
        (kh, kw), (ph, pw) = self._kernel_size, self._pad_hw
        return x is not None and 0 < x.shape[1] + 2 * ph <= kh and 0 < x.shape[2] + 2 * pw <= kw

    def multiplies_bfloat16(self) -> bool:
        """True when this layer now multiplies in bfloat16: :attr:`bfloat16_products`, under
        :func:`channels_last`, on the channels-last kernel or oneDNN's stride-1 bfloat16
        depthwise kernels on NHWC, where bfloat16 is faster than float32 (on the blocked NCHW
        layout it is slower, so NCHW stays float32; figures: docs/performance.md)."""
        strided = tuple(self._stride) != (1, 1)
        return self.bfloat16_products and self.training and in_channels_last() and (
            GroupedConv2D.channels_last_kernel(self) or (self.native() and not strided))

    # oneDNN's depthwise kernels (channels-blocked) are faster than the NCHW native kernel, which
    # stays as the fallback without oneDNN (figures: docs/performance.md).
    def forward(self, x, bfloat16_output: bool = False):
        """``bfloat16_output``: write the output in bfloat16 when this layer :func:`takes_bfloat16`."""
        bf16 = self.multiplies_bfloat16()
        takes = x.dtype == paddle.float32 or (x.dtype == paddle.bfloat16 and bf16)
        if takes and self.native() and not self.channels_last_kernel(x):
            return onednn_ops.conv2d(x, self.weight, self._stride, self._pad_hw, bf16=bf16, groups=self._in_channels,
                                     bf16_output=bfloat16_output and bf16, channels_last=in_channels_last())
        return super().forward(x, bfloat16_output)  # the channels-last kernel, the NCHW one, else Paddle's


class Conv2D(nn.Conv2D):
    """``nn.Conv2D(in, out, kernel, stride, padding, bias_attr=False)`` (groups 1, no dilation,
    symmetric integer padding) whose static training programs on CPU run oneDNN's convolution
    (:func:`paddle_pfc.kernels.onednn_ops.conv2d`); see the module docstring."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 weight_attr=None) -> None:
        pad = _symmetric_padding(padding, "Conv2D")
        super().__init__(in_channels, out_channels, kernel_size=kernel_size, stride=stride, padding=pad,
                         weight_attr=weight_attr, bias_attr=False)
        self._pad_hw = pad

    # A stem on 3-channel images (fewer than MIN_NATIVE_CHANNELS inputs) stays on Paddle's conv2d:
    # oneDNN is no faster there, even with d input skipped for images (figures: docs/performance.md).
    MIN_NATIVE_CHANNELS = 8

    #: multiply in bfloat16 (set by :func:`use_bfloat16_convolutions`)
    bfloat16_products = False

    def native(self) -> bool:
        """True when this layer now builds oneDNN's convolution (for a float32 input, and a bfloat16
        one with :attr:`bfloat16_products`)."""
        return (self._data_format == "NCHW" and self._in_channels >= self.MIN_NATIVE_CHANNELS
                and native_program(self, onednn_ops.kernels))

    def multiplies_bfloat16(self) -> bool:
        """True when this layer now multiplies in bfloat16 (:attr:`bfloat16_products`, a training
        program, and native)."""
        return self.bfloat16_products and self.training and self.native()

    def forward(self, x, bfloat16_output: bool = False):
        """``bfloat16_output``: write the output in bfloat16 when this layer :func:`takes_bfloat16`
        (float32 otherwise)."""
        bf16 = self.multiplies_bfloat16()
        takes = x.dtype == paddle.float32 or (x.dtype == paddle.bfloat16 and bf16)
        if takes and self.native():
            return onednn_ops.conv2d(x, self.weight, self._stride, self._pad_hw, bf16=bf16,
                                     bf16_output=bfloat16_output and bf16,
                                     channels_last=in_channels_last())
        _refuse_channels_last(self)
        return super().forward(x)


def use_bfloat16_convolutions(model: nn.Layer) -> int:
    """Make the oneDNN convolutions of ``model`` (its :class:`Conv2D` layers that run natively) and
    its transformer Linears (:class:`paddle_pfc.backbones.transformer_layers.Linear`: a ViT's
    blocks) — every layer whose class declares ``bfloat16_products`` —
    multiply in bfloat16 in the training programs built after this call: bfloat16 operands,
    float32 accumulation; weights, their gradients, the optimizer and the residual stream stay
    float32, the activations between such a convolution and a native batch norm bfloat16 (their
    gradients too; bfloat16 has float32's range, so no loss scaling is needed).
    Returns how many layers it set; raises RuntimeError naming the
    reason when this CPU or build cannot (:func:`paddle_pfc.kernels.onednn_ops.bfloat16_unsupported`)."""
    reason = onednn_ops.bfloat16_unsupported()
    if reason is not None:
        raise RuntimeError(f"bfloat16 convolutions: {reason}")
    layers = [layer for layer in model.sublayers(include_self=True) if hasattr(type(layer), "bfloat16_products")]
    for layer in layers:
        layer.bfloat16_products = True
    return len(layers)
