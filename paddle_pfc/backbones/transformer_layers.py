"""A transformer block's layers that build native ops in CPU training programs.

:class:`LayerNorm`, :class:`Linear` (optionally with its ReLU6), :func:`linear_residual`,
:func:`patch_tokens`, :func:`gather_tokens`, :func:`scaled_softmax` and :func:`attention` compute
what Paddle's ``LayerNorm``, ``Linear`` (+ ``relu6``), ``x + keep * Linear(h)``, a patch
convolution's tokens plus a position embedding, ``take_along_axis``, ``softmax(x * scale)`` and
multi-head attention composed of Paddle's ops compute. In a
static training program on CPU with the native kernels built (:func:`native_layers.native_program`)
they build :mod:`paddle_pfc.kernels.transformer_ops`' ops instead of Paddle's (the same values up
to float32 summation order); elsewhere (dygraph, eval, GPU, ``PADDLE_PFC_NATIVE=off``, a
non-float32 input) Paddle's. Parameters and their names are ``nn.LayerNorm``'s and ``nn.Linear``'s.
"""
from __future__ import annotations

import paddle
import paddle.nn.functional as F
from paddle import nn

from paddle_pfc.backbones.native_layers import native_layers_active
from paddle_pfc.kernels import native_ops, transformer_ops

__all__ = ["LayerNorm", "Linear", "linear_residual", "patch_tokens", "gather_tokens", "scaled_softmax", "attention"]


def _native(layer: nn.Layer, x) -> bool:
    return native_layers_active(layer, x, transformer_ops.kernels)


class LayerNorm(nn.LayerNorm):
    """``nn.LayerNorm(D, epsilon)`` over the last axis, with scale and bias."""

    def forward(self, x):
        if (_native(self, x) and self.weight is not None and self.bias is not None
                and len(self._normalized_shape) == 1):
            return transformer_ops.layer_norm(x, self.weight, self.bias, self._epsilon)
        return super().forward(x)


class Linear(nn.Linear):
    """``nn.Linear`` followed, with ``relu6``, by ReLU6 (one native op with the bias add). With
    :attr:`bfloat16_products` set (:func:`paddle_pfc.backbones.native_layers.use_bfloat16_convolutions`,
    ``train.amp=bf16``) its product and the product's two gradients multiply in bfloat16 where it
    builds native ops (:func:`paddle_pfc.kernels.transformer_ops.bfloat16_matmul`); weights,
    gradients and activations stay float32."""

    bfloat16_products = False

    def __init__(self, in_features: int, out_features: int, weight_attr=None, bias_attr=None,
                 relu6: bool = False) -> None:
        super().__init__(in_features, out_features, weight_attr=weight_attr, bias_attr=bias_attr)
        self.relu6 = bool(relu6)

    def product(self, x):
        """``x @ weight`` as :meth:`forward` multiplies where it builds native ops (bfloat16 products
        with :attr:`bfloat16_products`)."""
        if self.bfloat16_products:
            return transformer_ops.bfloat16_matmul(x, self.weight)
        return paddle.matmul(x, self.weight)

    def forward(self, x):
        native = _native(self, x)
        if native and self.bfloat16_products:
            product = self.product(x)
            return product if self.bias is None else transformer_ops.bias_act(product, self.bias, self.relu6)
        if self.bias is not None and native:
            return transformer_ops.bias_act(paddle.matmul(x, self.weight), self.bias, self.relu6)
        out = F.linear(x, self.weight, self.bias)
        return F.relu6(out) if self.relu6 else out


def linear_residual(linear: Linear, x, branch, keep=None):
    """``x + keep * linear(branch)``: a residual branch's end, ``keep`` each sample's drop-path factor
    [N] (None: 1). One native op after the product (:func:`transformer_ops.bias_residual`) where
    ``linear`` builds native ops and has a bias and no ReLU6; Paddle's ops otherwise."""
    if linear.bias is not None and not linear.relu6 and _native(linear, branch):
        factors = paddle.ones_like(branch[:, 0, 0]) if keep is None else keep
        return transformer_ops.bias_residual(x, linear.product(branch), linear.bias, factors)
    out = linear(branch)
    if keep is not None:
        out = out * keep.reshape([-1] + [1] * (len(out.shape) - 1))
    return x + out


def patch_tokens(layer: nn.Layer, conv: nn.Conv2D, pos_embed, x):
    """``conv(x)``'s cells as tokens [N, L, D] (row-major) plus ``pos_embed`` [1, L, D]. Where ``layer``
    builds native ops, the convolution without its bias, then its bias and the position embedding
    added in one native op (:func:`transformer_ops.bias_act` over the flattened tokens: the
    gradient a column sum, not Paddle's broadcast reduction)."""
    if conv.bias is None or not _native(layer, x):
        return conv(x).flatten(start_axis=2).transpose([0, 2, 1]) + pos_embed
    tokens = F.conv2d(x, conv.weight, None, conv._stride, conv._padding, conv._dilation, conv._groups,
                      conv._data_format).flatten(start_axis=2).transpose([0, 2, 1])
    length, dim = pos_embed.shape[1], pos_embed.shape[2]
    bias = (pos_embed.reshape([length, dim]) + conv.bias).reshape([length * dim])
    return transformer_ops.bias_act(tokens.reshape([-1, length * dim]), bias).reshape([-1, length, dim])


def gather_tokens(layer: nn.Layer, x, index):
    """``x[n, index[n, k]]`` of ``x`` [N, L, D] and int64 ``index`` [N, K], [N, K, D]: one native op
    when ``layer`` builds native ops, Paddle's ``take_along_axis`` (the index tiled over D) otherwise."""
    if _native(layer, x):
        return transformer_ops.gather_tokens(x, index)
    tiled = index.unsqueeze(-1).tile([1, 1, x.shape[-1]])
    return paddle.take_along_axis(x, tiled, axis=1, broadcast=False)


def scaled_softmax(layer: nn.Layer, x, scale: float):
    """``softmax(x * scale)`` over the last axis; native when ``layer`` builds native ops."""
    if _native(layer, x):
        return transformer_ops.scaled_softmax(x, scale)
    return F.softmax(x * scale, axis=-1)


def attention(layer: nn.Layer, qkv, heads: int, scale: float):
    """Multi-head self-attention from ``qkv`` [N, T, 3D] (q, k, v side by side, ``heads`` heads of
    ``D / heads`` columns each): ``softmax(scale * q k^T) v`` per head, the heads side by side [N,
    T, D]; one native op (:func:`paddle_pfc.kernels.transformer_ops.attention`) when ``layer``
    builds native ops and Paddle's MKL is there, else Paddle's reshape, transpose, matmul and softmax."""
    if _native(layer, qkv) and native_ops.blas_library() is not None:
        return transformer_ops.attention(qkv, heads, scale)
    dim = qkv.shape[-1] // 3
    q, k, v = paddle.unbind(qkv.reshape([0, 0, 3, heads, dim // heads]).transpose([2, 0, 3, 1, 4]), axis=0)
    attn = scaled_softmax(layer, paddle.matmul(q, k, transpose_y=True), scale)
    return paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([0, 0, dim])
