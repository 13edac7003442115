"""IResNet face-recognition backbones (arcface_torch ``iresnet.py`` in Paddle).

Contract
--------
* Input: ``float32`` tensor ``[N, 3, H, W]`` (NCHW); ``(H, W)`` is the
  ``input_size`` given at construction (default 112x112), each a multiple of 16.
* Output: ``float32`` tensor ``[N, embedding_size]`` (not L2-normalised).
* Works in dygraph and inside a Paddle 3 static PIR program (build and call the
  layer under ``paddle.static.program_guard``).  ``layer.train()`` /
  ``layer.eval()`` select BatchNorm batch statistics and dropout; in static mode
  the mode in force when the layer is *called* is baked into the program, so
  build the evaluation program separately with the layer in eval mode.

Architecture (as insightface's arcface_torch):
stem conv3x3(3->64, s1)-BN-PReLU; four stages of :class:`IBasicBlock`
(BN-conv3x3-BN-PReLU-conv3x3(stride)-BN + identity / conv1x1-BN downsample)
with widths 64/128/256/512, each stage stride 2; head BN2d -> flatten ->
Dropout -> Linear(512*(H/16)*(W/16) -> embedding) -> BatchNorm1d(embedding)
whose scale is fixed at 1 and never trained (``trainable=False``,
``stop_gradient=True``; still a parameter, so it is saved with the others).
All BatchNorm layers use ``epsilon=1e-5`` and ``momentum=0.9`` (torch's 0.1).

Stage depths: r18 [2,2,2,2], r34 [3,4,6,3], r50 [3,4,14,3], r100 [3,13,30,3],
r200 [6,26,60,6].
"""

from __future__ import annotations

import math

import paddle
import paddle.nn.functional as F
from paddle import nn

from paddle_pfc.backbones.common import BN_EPSILON, BN_MOMENTUM, check_head_args, check_spatial, normalize_input_size
from paddle_pfc.utils import paddle_compat

from .native_layers import (
    BatchNorm2D,
    Conv2D,
    PReLU,
    batch_norm_prelu,
    channels_last,
    channels_last_ready,
    conv_batch_norm,
    takes_bfloat16,
    to_channels_first,
    to_channels_last,
)

__all__ = [
    "FrozenScaleBatchNorm1D",
    "IBasicBlock",
    "IResNet",
    "IRESNET_LAYERS",
    "iresnet18",
    "iresnet34",
    "iresnet50",
    "iresnet100",
    "iresnet200",
]

IRESNET_LAYERS = {
    "iresnet18": (2, 2, 2, 2),
    "iresnet34": (3, 4, 6, 3),
    "iresnet50": (3, 4, 14, 3),
    "iresnet100": (3, 13, 30, 3),
    "iresnet200": (6, 26, 60, 6),
}


def _bn2d(channels: int) -> BatchNorm2D:
    # native_layers.BatchNorm2D: a native kernel in CPU training programs, nn.BatchNorm2D elsewhere
    return BatchNorm2D(channels, momentum=BN_MOMENTUM, epsilon=BN_EPSILON)


def _conv_attr() -> paddle.ParamAttr:
    # insightface: nn.init.normal_(conv.weight, 0, 0.1)
    return paddle.ParamAttr(initializer=nn.initializer.Normal(mean=0.0, std=0.1))


def _conv3x3(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2D:
    # native_layers.Conv2D: oneDNN's convolution in CPU training programs, nn.Conv2D elsewhere
    return Conv2D(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, weight_attr=_conv_attr())


def _conv1x1(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2D:
    return Conv2D(in_planes, out_planes, kernel_size=1, stride=stride, padding=0, weight_attr=_conv_attr())


class IBasicBlock(nn.Layer):
    """BN-conv3x3-BN-PReLU-conv3x3(stride)-BN, plus the (downsampled) input."""

    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1,
                 downsample: nn.Layer | None = None):
        super().__init__()
        self.bn1 = _bn2d(inplanes)
        self.conv1 = _conv3x3(inplanes, planes)
        self.bn2 = _bn2d(planes)
        self.prelu = PReLU(num_parameters=planes, init=0.25)
        self.conv2 = _conv3x3(planes, planes, stride)
        self.bn3 = _bn2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        # each norm feeds only the convolution after it and each convolution only the norm after it:
        # bfloat16 between them when the convolutions multiply in bfloat16 (see native_layers)
        out = batch_norm_prelu(self.bn1, None, x, bfloat16_output=takes_bfloat16(self.conv1))
        out = conv_batch_norm(self.conv1, self.bn2, self.prelu, out, bfloat16_output=takes_bfloat16(self.conv2))
        out = conv_batch_norm(self.conv2, self.bn3, None, out)
        if isinstance(self.downsample, nn.Sequential) and len(self.downsample) == 2:  # conv1x1-BN (_make_layer)
            identity = conv_batch_norm(self.downsample[0], self.downsample[1], None, x)
        elif self.downsample is not None:
            identity = self.downsample(x)
        return out + identity


class FrozenScaleBatchNorm1D(nn.BatchNorm1D):
    """BatchNorm1D whose scale (``weight``) is a frozen parameter (init 1,
    ``trainable=False``, ``stop_gradient=True``); the bias trains as usual.

    Same parameters and state-dict keys as ``nn.BatchNorm1D``.  The affine part
    is applied outside the batch_norm kernel because Paddle 3.3's CPU
    batch_norm backward computes the bias gradient only when the scale
    gradient is requested too: with a frozen scale a static PIR program fails
    at the optimizer step with "Tensor holds no memory".
    """

    def __init__(self, num_features: int):
        super().__init__(
            num_features, momentum=BN_MOMENTUM, epsilon=BN_EPSILON,
            weight_attr=paddle.ParamAttr(
                initializer=nn.initializer.Constant(1.0), trainable=False),
        )
        self.weight.stop_gradient = True

    def forward(self, x):
        paddle_compat.check_batch_norm_input(self, x)
        mean, variance, momentum, epsilon = paddle_compat.batch_norm_state(self)
        y = F.batch_norm(
            x, mean, variance, weight=None, bias=None,
            training=self.training, momentum=momentum, epsilon=epsilon,
            data_format=self._data_format, use_global_stats=self._use_global_stats,
        )
        if len(x.shape) == 3:  # [N, C, L]: broadcast the affine over L
            return y * self.weight.reshape([1, -1, 1]) + self.bias.reshape([1, -1, 1])
        return y * self.weight + self.bias


class IResNet(nn.Layer):
    """IResNet with the arcface_torch head; see the module docstring."""

    def __init__(self, layers, embedding_size: int = 512, input_size=112,
                 dropout: float = 0.0):
        super().__init__()
        if len(layers) != 4 or any(int(n) < 1 for n in layers):
            raise ValueError(f"layers must be 4 positive block counts, got {layers!r}")
        check_head_args(embedding_size, dropout)
        self.input_size = normalize_input_size(input_size)
        self.embedding_size = int(embedding_size)
        self.layer_counts = tuple(int(n) for n in layers)
        self.inplanes = 64

        self.conv1 = _conv3x3(3, self.inplanes)
        self.bn1 = _bn2d(self.inplanes)
        self.prelu = PReLU(num_parameters=self.inplanes, init=0.25)
        self.layer1 = self._make_layer(64, self.layer_counts[0], stride=2)
        self.layer2 = self._make_layer(128, self.layer_counts[1], stride=2)
        self.layer3 = self._make_layer(256, self.layer_counts[2], stride=2)
        self.layer4 = self._make_layer(512, self.layer_counts[3], stride=2)
        self.bn2 = _bn2d(512 * IBasicBlock.expansion)
        self.dropout = nn.Dropout(p=float(dropout))

        h, w = self.input_size
        fc_in = 512 * IBasicBlock.expansion * (h // 16) * (w // 16)
        # torch nn.Linear default init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for
        # weight and bias.  Paddle stores the weight as [in, out].
        bound = 1.0 / math.sqrt(fc_in)
        self.fc = nn.Linear(
            fc_in, self.embedding_size,
            weight_attr=paddle.ParamAttr(initializer=nn.initializer.Uniform(-bound, bound)),
            bias_attr=paddle.ParamAttr(initializer=nn.initializer.Uniform(-bound, bound)),
        )
        # insightface: features.weight = 1 and requires_grad = False.
        self.features = FrozenScaleBatchNorm1D(self.embedding_size)

    def _make_layer(self, planes: int, blocks: int, stride: int) -> nn.Sequential:
        downsample = None
        if stride != 1 or self.inplanes != planes * IBasicBlock.expansion:
            downsample = nn.Sequential(
                _conv1x1(self.inplanes, planes * IBasicBlock.expansion, stride),
                _bn2d(planes * IBasicBlock.expansion),
            )
        layers = [IBasicBlock(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * IBasicBlock.expansion
        for _ in range(1, blocks):
            layers.append(IBasicBlock(self.inplanes, planes))
        return nn.Sequential(*layers)

    def _blocks(self, x):
        """The residual stages and the norm after them."""
        return self.bn2(self.layer4(self.layer3(self.layer2(self.layer1(x)))))

    def forward(self, x):
        check_spatial(x, self.input_size)
        x = self.conv1(x)
        x = batch_norm_prelu(self.bn1, self.prelu, x)
        if channels_last_ready(self):  # a CPU training program: the blocks run channels last (NHWC)
            with channels_last():
                x = to_channels_first(self._blocks(to_channels_last(x)))
        else:
            x = self._blocks(x)
        x = paddle.flatten(x, start_axis=1)
        x = self.dropout(x)
        x = self.fc(x)
        x = self.features(x)
        return x


def _make(name: str, embedding_size: int, input_size, dropout: float) -> IResNet:
    return IResNet(IRESNET_LAYERS[name], embedding_size=embedding_size,
                   input_size=input_size, dropout=dropout)


def iresnet18(embedding_size: int = 512, input_size=112, dropout: float = 0.0) -> IResNet:
    return _make("iresnet18", embedding_size, input_size, dropout)


def iresnet34(embedding_size: int = 512, input_size=112, dropout: float = 0.0) -> IResNet:
    return _make("iresnet34", embedding_size, input_size, dropout)


def iresnet50(embedding_size: int = 512, input_size=112, dropout: float = 0.0) -> IResNet:
    return _make("iresnet50", embedding_size, input_size, dropout)


def iresnet100(embedding_size: int = 512, input_size=112, dropout: float = 0.0) -> IResNet:
    return _make("iresnet100", embedding_size, input_size, dropout)


def iresnet200(embedding_size: int = 512, input_size=112, dropout: float = 0.0) -> IResNet:
    return _make("iresnet200", embedding_size, input_size, dropout)
