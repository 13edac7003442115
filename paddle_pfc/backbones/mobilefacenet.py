"""MobileFaceNet backbone (arcface_torch ``mobilefacenet.py`` / ``get_mbf``) in Paddle.

Contract
--------
* Input: ``float32`` tensor ``[N, 3, H, W]`` (NCHW); ``(H, W)`` is the
  ``input_size`` given at construction (default 112x112), each a multiple of 16.
* Output: ``float32`` tensor ``[N, embedding_size]`` (not L2-normalised).
* Works in dygraph and in a Paddle 3 static PIR program; ``train()`` / ``eval()``
  select BatchNorm batch statistics (and dropout, if any) at call time. A static
  training program on CPU runs the layers after the stem channels last (NHWC,
  ``native_layers.channels_last``); the parameters are the same.

Architecture (arcface_torch ``get_mbf`` defaults: ``blocks=(1, 4, 6, 2)``,
``scale=2``): ConvBlock = conv-BN-PReLU, LinearBlock = conv-BN,
DepthWise = 1x1 ConvBlock -> grouped kxk ConvBlock(stride) -> 1x1 LinearBlock
(+ identity in the residual stacks).  Total stride 16 (stem and three
DepthWise downsamplers), so the last map is ``(H/16, W/16)``; the GDC head is a
depthwise LinearBlock whose kernel covers that whole map (7x7 at 112), then
flatten -> Linear(512 -> embedding, no bias) -> BatchNorm1d(embedding).
Unlike IResNet, insightface trains this BatchNorm1d's scale, so it is trainable
here too.  ``dropout`` (default 0, i.e. exactly insightface's head) is an
extension: a Dropout between flatten and the Linear.

``head="fc"`` (backbone ``mobilefacenet_fc``): the head of insightface's released
``w600k_mbf`` (the ``buffalo_s`` / ``buffalo_sc`` recognition model): ConvBlock(512 -> 64,
1x1) -> flatten (64 * H/16 * W/16, NCHW order) -> [Dropout] -> Linear(-> embedding, with
bias) -> BatchNorm1d(embedding).
BatchNorm: ``epsilon=1e-5``, ``momentum=0.9`` (torch defaults 1e-5 / 0.1).
"""

from __future__ import annotations

import math

import paddle
from paddle import nn

from paddle_pfc.backbones.common import BN_EPSILON, BN_MOMENTUM, check_head_args, check_spatial, normalize_input_size

from .native_layers import (
    BatchNorm2D,
    Conv2D,
    DepthwiseConv2D,
    GroupedConv2D,
    PReLU,
    channels_last,
    channels_last_ready,
    conv_batch_norm,
    takes_bfloat16,
    to_channels_first,
    to_channels_last,
)

__all__ = ["MobileFaceNet", "mobilefacenet", "HEADS"]

#: The heads: ``gdc`` (arcface_torch's ``get_mbf``), ``fc`` (insightface's ``w600k_mbf``).
HEADS = ("gdc", "fc")
FC_HEAD_CHANNELS = 64


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _conv(in_c, out_c, kernel, stride, padding, groups) -> nn.Conv2D:
    kernel = _pair(kernel)
    # insightface: kaiming_normal_(mode='fan_out', nonlinearity='relu');
    # torch's fan_out of a conv weight [out, in/groups, kh, kw] is out*kh*kw.
    std = math.sqrt(2.0 / (out_c * kernel[0] * kernel[1]))
    weight_attr = paddle.ParamAttr(initializer=nn.initializer.Normal(0.0, std))
    if groups > 1 and groups == in_c == out_c:  # depthwise: oneDNN, else the native kernel, when training on CPU
        return DepthwiseConv2D(out_c, kernel, _pair(stride), _pair(padding), weight_attr=weight_attr)
    if groups == 1:  # oneDNN's convolution when training on CPU
        return Conv2D(in_c, out_c, kernel, _pair(stride), _pair(padding), weight_attr=weight_attr)
    # a native kernel when training on CPU
    return GroupedConv2D(in_c, out_c, kernel, _pair(stride), _pair(padding), groups, weight_attr=weight_attr)


def _bn2d(c: int) -> BatchNorm2D:
    return BatchNorm2D(c, momentum=BN_MOMENTUM, epsilon=BN_EPSILON)


class ConvBlock(nn.Layer):
    """conv (no bias) -> BN -> PReLU."""

    def __init__(self, in_c, out_c, kernel=(1, 1), stride=(1, 1), padding=(0, 0), groups=1):
        super().__init__()
        self.layers = nn.Sequential(
            _conv(in_c, out_c, kernel, stride, padding, groups),
            _bn2d(out_c),
            PReLU(num_parameters=out_c, init=0.25),
        )

    def forward(self, x, bfloat16_output: bool = False):
        """``bfloat16_output``: for a convolution that takes bfloat16 (see native_layers)."""
        return conv_batch_norm(self.layers[0], self.layers[1], self.layers[2], x, bfloat16_output)


class LinearBlock(nn.Layer):
    """conv (no bias) -> BN."""

    def __init__(self, in_c, out_c, kernel=(1, 1), stride=(1, 1), padding=(0, 0), groups=1):
        super().__init__()
        self.layers = nn.Sequential(
            _conv(in_c, out_c, kernel, stride, padding, groups),
            _bn2d(out_c),
        )

    def forward(self, x):
        return conv_batch_norm(self.layers[0], self.layers[1], None, x)


class DepthWise(nn.Layer):
    """1x1 expand to ``groups`` channels -> grouped kxk -> 1x1 project (+ residual)."""

    def __init__(self, in_c, out_c, residual=False, kernel=(3, 3), stride=(2, 2),
                 padding=(1, 1), groups=1):
        super().__init__()
        self.residual = residual
        self.layers = nn.Sequential(
            ConvBlock(in_c, groups, kernel=(1, 1), stride=(1, 1), padding=(0, 0)),
            ConvBlock(groups, groups, kernel=kernel, stride=stride, padding=padding,
                      groups=groups),
            LinearBlock(groups, out_c, kernel=(1, 1), stride=(1, 1), padding=(0, 0)),
        )

    def forward(self, x):
        expand, grouped, project = self.layers
        # each block's output feeds only the next block's convolution: bfloat16 when that takes it
        out = expand(x, bfloat16_output=takes_bfloat16(grouped.layers[0]))
        out = project(grouped(out, bfloat16_output=takes_bfloat16(project.layers[0])))
        return x + out if self.residual else out

    def takes_bfloat16(self) -> bool:
        """True when this block's first convolution now reads bfloat16 (see native_layers)."""
        return takes_bfloat16(self.layers[0].layers[0])


class Residual(nn.Layer):
    """``num_block`` residual :class:`DepthWise` blocks at constant width."""

    def __init__(self, c, num_block, groups, kernel=(3, 3), stride=(1, 1), padding=(1, 1)):
        super().__init__()
        self.layers = nn.Sequential(*[
            DepthWise(c, c, True, kernel, stride, padding, groups) for _ in range(num_block)
        ])

    def forward(self, x):
        return self.layers(x)


class GDC(nn.Layer):
    """Global depthwise conv head: LinearBlock(512, k=map size, groups=512) ->
    flatten -> [Dropout] -> Linear(512 -> embedding, no bias) -> BatchNorm1d."""

    def __init__(self, embedding_size: int, feature_hw=(7, 7), dropout: float = 0.0):
        super().__init__()
        std = math.sqrt(2.0 / embedding_size)  # kaiming_normal_ fan_out of [out, in]
        self.layers = nn.Sequential(
            LinearBlock(512, 512, kernel=tuple(feature_hw), stride=(1, 1),
                        padding=(0, 0), groups=512),
            nn.Flatten(start_axis=1),
            nn.Linear(512, embedding_size,
                      weight_attr=paddle.ParamAttr(initializer=nn.initializer.Normal(0.0, std)),
                      bias_attr=False),
            nn.BatchNorm1D(embedding_size, momentum=BN_MOMENTUM, epsilon=BN_EPSILON),
        )
        # Kept outside ``layers`` so parameter names keep insightface's indices.
        self.dropout = nn.Dropout(p=float(dropout))

    def forward(self, x):
        return self.embed(self.layers[0](x))

    def embed(self, x):
        """The part after the depthwise LinearBlock: [N, 512, 1, 1] -> [N, embedding_size]."""
        x = self.layers[1](x)
        x = self.dropout(x)
        x = self.layers[2](x)
        return self.layers[3](x)


class FCHead(GDC):
    """insightface ``w600k_mbf``'s head: ConvBlock(512 -> 64, 1x1) -> flatten (NCHW order) ->
    [Dropout] -> Linear(64 * h * w -> embedding, with bias) -> BatchNorm1d; ``embed`` as GDC's."""

    def __init__(self, embedding_size: int, feature_hw=(7, 7), dropout: float = 0.0):
        nn.Layer.__init__(self)
        features = FC_HEAD_CHANNELS * int(feature_hw[0]) * int(feature_hw[1])
        std = math.sqrt(2.0 / embedding_size)
        self.layers = nn.Sequential(
            ConvBlock(512, FC_HEAD_CHANNELS, kernel=(1, 1), stride=(1, 1), padding=(0, 0)),
            nn.Flatten(start_axis=1),
            nn.Linear(features, embedding_size,
                      weight_attr=paddle.ParamAttr(initializer=nn.initializer.Normal(0.0, std))),
            nn.BatchNorm1D(embedding_size, momentum=BN_MOMENTUM, epsilon=BN_EPSILON),
        )
        self.dropout = nn.Dropout(p=float(dropout))


class MobileFaceNet(nn.Layer):
    """arcface_torch MobileFaceNet (``head="gdc"``) or insightface ``w600k_mbf``'s (``head="fc"``);
    see the module docstring."""

    def __init__(self, embedding_size: int = 512, input_size=112, dropout: float = 0.0,
                 blocks=(1, 4, 6, 2), scale: int = 2, head: str = "gdc"):
        super().__init__()
        check_head_args(embedding_size, dropout)
        if head not in HEADS:
            raise ValueError(f"head must be one of {', '.join(HEADS)}, got {head!r}")
        if len(blocks) != 4 or any(int(b) < 1 for b in blocks):
            raise ValueError(f"blocks must be 4 positive block counts, got {blocks!r}")
        self.input_size = normalize_input_size(input_size)
        self.embedding_size = int(embedding_size)
        self.scale = int(scale)
        s = self.scale

        modules = [ConvBlock(3, 64 * s, kernel=(3, 3), stride=(2, 2), padding=(1, 1))]
        if blocks[0] == 1:
            modules.append(ConvBlock(64 * s, 64 * s, kernel=(3, 3), stride=(1, 1),
                                     padding=(1, 1), groups=64))
        else:
            modules.append(Residual(64 * s, num_block=blocks[0], groups=128))
        modules += [
            DepthWise(64 * s, 64 * s, kernel=(3, 3), stride=(2, 2), padding=(1, 1), groups=128),
            Residual(64 * s, num_block=blocks[1], groups=128),
            DepthWise(64 * s, 128 * s, kernel=(3, 3), stride=(2, 2), padding=(1, 1), groups=256),
            Residual(128 * s, num_block=blocks[2], groups=256),
            DepthWise(128 * s, 128 * s, kernel=(3, 3), stride=(2, 2), padding=(1, 1), groups=512),
            Residual(128 * s, num_block=blocks[3], groups=256),
        ]
        self.layers = nn.Sequential(*modules)
        self.conv_sep = ConvBlock(128 * s, 512, kernel=(1, 1), stride=(1, 1), padding=(0, 0))
        h, w = self.input_size
        self.head = head
        self.features = (GDC if head == "gdc" else FCHead)(self.embedding_size, feature_hw=(h // 16, w // 16),
                                                         dropout=float(dropout))

    def forward(self, x):
        check_spatial(x, self.input_size)
        stem, first, *trunk = self.layers
        if not channels_last_ready(self):
            x = first(stem(x))
            for layer in trunk:
                x = layer(x)
            return self.features(self.conv_sep(x))
        # A CPU training program: all but the stem (Paddle's conv2d on the 3-channel images, NCHW)
        # runs channels last (NHWC) up to the head's convolution block (the GDC's depthwise conv, the
        # fc head's 1x1 conv); the flatten after it reads NCHW.
        with channels_last():
            first_takes_bfloat16 = isinstance(first, ConvBlock) and takes_bfloat16(first.layers[0])
        x = stem(x, bfloat16_output=first_takes_bfloat16)
        with channels_last():
            x = to_channels_last(x)
            if isinstance(first, ConvBlock) and isinstance(trunk[0], DepthWise):
                x = first(x, bfloat16_output=trunk[0].takes_bfloat16())
            else:
                x = first(x)
            for layer in trunk:
                x = layer(x)
            gdc = self.features.layers[0]
            x = gdc(self.conv_sep(x, bfloat16_output=takes_bfloat16(gdc.layers[0])))
            x = to_channels_first(x)
        return self.features.embed(x)


def mobilefacenet(embedding_size: int = 512, input_size=112,
                  dropout: float = 0.0, head: str = "gdc") -> MobileFaceNet:
    """arcface_torch ``get_mbf(fp16=False, num_features=embedding_size)`` (``head="gdc"``), or with
    insightface ``w600k_mbf``'s head (``head="fc"``)."""
    return MobileFaceNet(embedding_size=embedding_size, input_size=input_size,
                         dropout=dropout, head=head)
