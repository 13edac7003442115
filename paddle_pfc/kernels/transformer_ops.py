"""Native CPU kernels of a transformer block (``csrc/transformer_ops.cc``, built with the other native
kernels by :mod:`paddle_pfc.kernels.native_ops`): custom ops with their backward, float32, for
static training programs on CPU. Paddle 3.3's CPU kernels for them run far below memory speed on a
ViT's [tokens, D] activations (its ``layer_norm_grad``, the ``add_grad`` of a Linear's bias, its
``softmax``; figures in docs/benchmarks.md).

Each function computes what the Paddle ops it replaces compute, up to float32 summation order
(and the softmax's exponential, within 2 ulp); sums over rows (the parameters' gradients) add
float32 partial sums of 64 rows in float64.
"""
from __future__ import annotations

import paddle

from paddle_pfc.kernels import native_ops, onednn_ops

__all__ = ["kernels", "layer_norm", "bias_act", "bias_residual", "gather_tokens", "scaled_softmax", "attention",
           "bfloat16_matmul"]


def kernels():
    """The built extension, or None (``PADDLE_PFC_NATIVE=off``, or ``auto`` and the build failed)."""
    return native_ops.kernels("transformer_ops")


def _check_last_axis(op: str, x, length: int) -> None:
    if x.dtype != paddle.float32:
        raise ValueError(f"{op}: x must be float32, got {x.dtype}")
    if x.shape[-1] != length:
        raise ValueError(f"{op}: x's last axis is {x.shape[-1]} long, the parameters {length}")


def layer_norm(x, scale, bias, epsilon: float):
    """Layer norm of float32 ``x`` [..., D] over its last axis with float32 ``scale`` and ``bias``
    [D]: ``(x - mean) / sqrt(var + epsilon) * scale + bias``, the biased variance (Paddle's
    ``layer_norm`` with ``begin_norm_axis`` the last, torch's ``LayerNorm``). Differentiable in all three."""
    _check_last_axis("layer_norm", x, scale.shape[0])
    return kernels().pfc_layer_norm(x, scale, bias, float(epsilon))[0]


def bias_act(x, bias, relu6: bool = False):
    """``x + bias`` over the last axis of float32 ``x`` [..., C] (``bias`` [C]), with ``relu6`` then
    clipped to [0, 6] (ReLU6; its gradient passes where 0 < output < 6, as Paddle's and torch's).
    Differentiable in ``x`` and ``bias``; ``d bias`` is the column sum of ``d x``."""
    _check_last_axis("bias_act", x, bias.shape[0])
    return kernels().pfc_bias_act(x, bias, bool(relu6))


def bias_residual(x, h, bias, keep):
    """``x + keep[n] * (h + bias)``, one pass: the end of a residual branch whose Linear's product
    ``h`` gets its ``bias`` [C] and each sample's drop-path factor ``keep`` [N] (0 or ``1 / (1 - p)``;
    ones without drop path) before the residual ``x``; float32 ``x`` and ``h`` [N, ..., C].
    Differentiable in ``x``, ``h`` and ``bias`` (``d h = keep * d out``, ``d bias`` its column sums);
    ``keep`` takes no gradient."""
    for name, value in (("x", x), ("h", h), ("keep", keep)):
        if value.dtype != paddle.float32:
            raise ValueError(f"bias_residual: {name} must be float32, got {value.dtype}")
    _check_last_axis("bias_residual", h, bias.shape[0])
    return kernels().pfc_bias_residual(x, h, bias, keep)


def gather_tokens(x, index):
    """``out[n, k] = x[n, index[n, k]]``: float32 ``x`` [N, L, D], int64 ``index`` [N, K] (each in
    ``[0, L)``, else an error naming the sample), float32 [N, K, D] (``take_along_axis`` on axis 1
    without the index tiled to [N, K, D]). Differentiable in ``x``: ``d x`` adds each row of ``d out``
    at its place, zeros elsewhere."""
    if x.dtype != paddle.float32 or len(x.shape) != 3:
        raise ValueError(f"gather_tokens: x must be float32 [N, L, D], got {x.dtype} {x.shape}")
    return kernels().pfc_gather_tokens(x, index)


def scaled_softmax(x, scale: float):
    """``softmax(x * scale)`` over the last axis of float32 ``x`` (each row's maximum taken out
    first). Differentiable in ``x``: ``d x = scale * out * (d out - sum(d out * out))``."""
    if x.dtype != paddle.float32:
        raise ValueError(f"scaled_softmax: x must be float32, got {x.dtype}")
    return kernels().pfc_scaled_softmax(x, float(scale))


def attention(qkv, heads: int, scale: float):
    """Multi-head self-attention of float32 ``qkv`` [N, T, 3D] (a bias-free qkv projection's output:
    q, k and v side by side, head ``h`` in columns ``[h*d, (h+1)*d)`` of each, ``d = D / heads``):
    per sample and head ``softmax(scale * q k^T) v``, the heads side by side, float32 [N, T, D]
    (arcface_torch's ``Attention`` between its ``qkv`` and ``proj``). Products by MKL's float32
    ``cblas_sgemm`` (what Paddle's matmul calls) on each head's columns, packed into a small
    contiguous buffer: no transposed tensors; the products of the backward write d q, d k and d v
    into their columns of d qkv. The softmax rows run on AVX-512 registers where the CPU has
    AVX-512F (the build targets the CPU it runs on). Keeps the probabilities for the backward,
    [N, heads, T, T rounded up to 16] (rows padded with zeros). Differentiable in ``qkv``. Needs
    :func:`native_ops.blas_library`."""
    if qkv.dtype != paddle.float32 or len(qkv.shape) != 3 or qkv.shape[-1] % (3 * heads):
        raise ValueError(f"attention: qkv must be float32 [N, T, 3D] with D a multiple of heads {heads}, got "
                         f"{qkv.dtype} {qkv.shape}")
    library = native_ops.blas_library()
    if library is None:
        raise RuntimeError("attention needs Paddle's MKL (paddle/libs/libmklml_intel.so), which this wheel lacks")
    return kernels().pfc_attention(qkv, int(heads), float(scale), library)[0]


def bfloat16_matmul(x, weight):
    """``x @ weight`` of float32 ``x`` [..., K] and ``weight`` [K, N] with bfloat16 products
    (operands rounded to bfloat16, nearest even; sums in float32; oneDNN's matmul,
    :func:`paddle_pfc.kernels.onednn_ops.matmul`), float32 [..., N]. Differentiable in both, the
    two gradient products in bfloat16 too (``d x = d out @ weight^T``, ``d weight = x^T @ d out``,
    float32 results). Needs :func:`onednn_ops.bfloat16_unsupported` None."""
    if x.dtype != paddle.float32 or weight.dtype != paddle.float32:
        raise ValueError(f"bfloat16_matmul takes float32 x and weight, got {x.dtype} and {weight.dtype}")
    def forward(x_in, weight_in):
        return onednn_ops.matmul(x_in, weight_in, bf16=True)

    def backward(grad_out):
        return (onednn_ops.matmul(grad_out, weight, transpose_b=True, bf16=True),
                onednn_ops.matmul(x, grad_out, transpose_a=True, bf16=True))

    return paddle.static.nn.static_pylayer(forward, [x, weight], backward)
