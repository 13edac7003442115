"""Native CPU kernels, built on first use: the per-block center work (``csrc/center_ops.cc``) and
backbone ops whose Paddle CPU kernels are slow (``csrc/backbone_ops.cc``, ``csrc/batch_norm_ops.cc``,
``csrc/depthwise_ops.cc``).

Paddle's CPU element-wise and reduction kernels run far below memory speed on [c, D] blocks
(docs/performance.md), and the head does several such passes per block.
One-pass kernels replace them (the head reaches them through
:class:`~paddle_pfc.kernels.blockwise.NativeBlockOps`):

* :func:`inverse_row_norm` — the centers' inverse norms (replaces a norm, a clip, a division);
  :func:`block_logits` — a block's float32 product with the norms taken on the way (replaces a
  ``matmul`` and :func:`inverse_row_norm`); :func:`indexed_logits` and :func:`indexed_backward` —
  a block's float32 products with its scattered kept rows read where they lie in the shard
  (replace the gather of the block, its forward product and its two gradient products; the
  feature-gradient product by oneDNN where it is the faster:
  :func:`~paddle_pfc.kernels.onednn_ops.feature_products_on_onednn`).
* :func:`block_softmax_` — a block's forward after its product: column scaling, the target's
  margin logit, the row softmax (up to a row factor) and its log-sum-exp (replaces a broadcast
  multiply, two row maxima, a softmax and the target's gather / scatter).
* :func:`softmax_grad_` — the block's dL/d(product) from its softmax (replaces two broadcast
  multiplies and the target's gather / scatter).
* :func:`gather_rows` — the kept rows of a shard, with the next rows prefetched (replaces a
  ``gather``); :func:`row_range` — consecutive rows of a shard without a copy (replaces a
  ``slice``).
* :func:`any_nonfinite` — the step's finite check of the gradients (replaces an ``isfinite``
  and an ``all`` per gradient), optionally with a magnitude limit.
* :func:`sparse_update_` — Paddle's SGD / Momentum rule on rows ``index`` of the shard and its
  momentum, in float32 arithmetic, written in place in the storage dtype (float32 or bfloat16,
  rounded to nearest even like Paddle's cast); replaces the gathers, the fused update kernel and
  the two write-back scatters. :func:`sparse_update_int8_`: the same with an int8 momentum and
  one float32 scale a row. With ``project`` it first takes the tangent projection of each
  gradient row at its center row (the head's backward then leaves it out: the update reads both
  rows anyway, which saves three passes over the block gradients).
* :func:`prelu`, :func:`grouped_conv2d` — the backbones' channel PReLU and grouped (depthwise,
  or few channels a group) convolution with their backward (custom ops with grad ops), for
  training programs on CPU (:mod:`paddle_pfc.backbones.native_layers`); Paddle's CPU kernels for
  them took over half of mobilefacenet's step.
* :func:`depthwise_conv2d` — depthwise, or grouped with up to 16 channels a group, convolution
  on channels-last (NHWC) tensors with its backward, float32 or bfloat16 (``csrc/depthwise_ops.cc``):
  mobilefacenet's first grouped layer, strided depthwise layers and GDC, where oneDNN has only
  generic code.
* :func:`batch_norm` — training-mode batch norm, alone or with the PReLU after it fused in,
  float32 or bfloat16 in and out (``csrc/batch_norm_ops.cc``): the tensors around bfloat16
  convolutions stay bfloat16; NCHW or (``channels_last``) NHWC.
* ``csrc/transformer_ops.cc``: a ViT block's layer norm, bias add (+ ReLU6) and scaled softmax,
  wrapped by :mod:`paddle_pfc.kernels.transformer_ops`.

``PADDLE_PFC_NATIVE`` chooses (:mod:`paddle_pfc.kernels.native_build` builds them): ``auto``
(default: build once per machine; if that fails, warn once and use Paddle's kernels), ``on`` (a
failed build is an error), ``off`` (Paddle's kernels only). The two paths compute the same values
up to float32 summation order. GPU programs never use these kernels.
"""
from __future__ import annotations

from pathlib import Path

import paddle

from paddle_pfc.kernels import onednn_ops
from paddle_pfc.kernels.native_build import build, is_built, load_or_fall_back

SOURCES = {name: Path(__file__).with_name("csrc") / f"{name}.cc"
           for name in ("center_ops", "backbone_ops", "batch_norm_ops", "depthwise_ops", "transformer_ops")}

#: -g0: no debug information (setuptools compiles with -g): less compile time, the same code
#: (docs/performance.md).
#: -fno-trapping-math: lets the compiler vectorize loops with float selects (the softmax's exp).
CXX_FLAGS = ["-O3", "-march=native", "-g0", "-fopenmp-simd", "-fno-trapping-math"]


def _build(name: str):
    return build(name, SOURCES[name], extra_cxx_cflags=CXX_FLAGS)


def built(name: str) -> bool:
    """True when extension ``name`` (a key of :data:`SOURCES`) is built for this CPU and Paddle."""
    return is_built(name, SOURCES[name], extra_cxx_cflags=CXX_FLAGS)


def kernels(name: str = "center_ops"):
    """The built extension ``name`` (a key of :data:`SOURCES`), or None when ``off``
    (or ``auto`` and the build failed)."""
    return load_or_fall_back(name, lambda: _build(name), SOURCES[name].name)


def inverse_row_norm(rows, eps: float, round_bfloat16: bool = False):
    """``1 / max(|rows[j]|, eps)`` of float32 or bfloat16 ``rows`` [c, D], float32 [c]; with
    ``round_bfloat16`` the norms of float32 rows' values rounded to bfloat16 (nearest, ties to even)."""
    return kernels().pfc_inverse_row_norm(rows, float(eps), bool(round_bfloat16))


def blas_library() -> str | None:
    """The MKL that Paddle's float32 matmul calls on CPU (``paddle/libs/libmklml_intel.so``), or
    None where the wheel ships none (then :func:`block_logits` is not available)."""
    library = Path(paddle.__file__).parent / "libs" / "libmklml_intel.so"
    return str(library) if library.exists() else None


def block_logits(features, rows, eps: float):
    """``(features @ rows^T [N, c], 1 / max(|rows[j]|, eps) [c])`` of float32 ``features`` [N, D]
    and ``rows`` [c, D], 512 rows at a time: each row's norm is taken just before the product
    (MKL's ``cblas_sgemm``, what Paddle's float32 matmul calls) reads it again from cache, which
    saves :func:`inverse_row_norm`'s pass over the rows. Needs :func:`blas_library`. No gradient."""
    return kernels().pfc_block_logits(features, rows, float(eps), _blas_or_raise("block_logits"))


def _blas_or_raise(what: str) -> str:
    library = blas_library()
    if library is None:
        raise RuntimeError(f"{what} needs Paddle's MKL (paddle/libs/libmklml_intel.so), which this wheel lacks")
    return library


def indexed_logits(features, table, index, eps: float, round_bfloat16: bool = False):
    """:func:`block_logits` of the rows ``table[index]`` without a gathered copy of them:
    ``(features @ rows^T [N, c], 1 / max(|rows[j]|, eps) [c])`` of float32 ``features`` [N, D],
    a float32 or bfloat16 ``table`` [L, D] and int64 ``index`` [c] (each in ``[0, L)``), where
    ``rows`` are ``table[index]`` as float32 (bfloat16 rows widened; with ``round_bfloat16``,
    float32 rows rounded to bfloat16 values first), 128 rows at a time through an L2-sized
    buffer. Float32 products and sums. Needs :func:`blas_library`. No gradient."""
    return kernels().pfc_indexed_logits(features, table, index, float(eps), bool(round_bfloat16),
                                        _blas_or_raise("indexed_logits"))


def indexed_backward(dlogits, features, table, index, round_bfloat16: bool = False, bfloat16_grad: bool = False,
                     feature_library: str | None = None):
    """The gradient products of a block whose rows are ``table[index]``: ``(dlogits @ rows
    [N, D], dlogits^T @ features [c, D])`` of float32 ``dlogits`` [N, c] and ``features`` [N, D],
    a float32 or bfloat16 ``table`` [L, D] and int64 ``index`` [c], ``rows`` as
    :func:`indexed_logits` reads them; float32 products and sums, the second rounded to bfloat16
    (as Paddle's cast) with ``bfloat16_grad``. Each row read once, 128 rows at a time through an
    L2-sized buffer (no gathered copy). Needs :func:`blas_library`. No gradient.

    ``feature_library``: the shared object whose ``dnnl_sgemm`` computes the first product
    (``""``: MKL's, as the second); None: :func:`~paddle_pfc.kernels.onednn_ops.feature_product_library`."""
    library = onednn_ops.feature_product_library() if feature_library is None else feature_library
    return kernels().pfc_indexed_backward(dlogits, features, table, index, bool(round_bfloat16), bool(bfloat16_grad),
                                          _blas_or_raise("indexed_backward"), library)


def gather_rows(table, index):
    """``table[index]``: rows ``index`` (int64 [c], each in ``[0, L)``) of a float32 or bfloat16
    ``table`` [L, D], as [c, D] in its dtype (Paddle's ``gather`` on axis 0, with the next rows
    prefetched: the index scatters the reads over the table). No gradient."""
    return kernels().pfc_gather_rows(table, index)


def sample_shard(local_label, seed, num_local: int, num_sample: int):
    """int64 [S]: a shard's kept centers, ascending: every positive (the labels of int64
    ``local_label`` [N] in ``[0, num_local)``; negative labels are other shards') and a uniformly
    random subset of the negatives filling up to ``num_sample`` (none when the positives are
    more: S = max(num_sample, positives)). One pass over the shard's ``num_local`` flags; the
    randomness comes from ``seed`` (int64 [2], drawn from Paddle's generator). No gradient."""
    return kernels().pfc_sample_shard(local_label, seed, int(num_local), int(num_sample))


def row_range(table, start: int, end: int):
    """Rows ``[start, end)`` of a CPU ``table`` [L, D] as [end - start, D], sharing the table's
    memory (no copy: a later in-place write of those rows changes it). No gradient."""
    return kernels().pfc_row_range(table, int(start), int(end))


def any_nonfinite(values: list, limit_log2: int = 128):
    """bool [1]: True when any element of the float32 or bfloat16 ``values`` is inf or NaN, or
    (``limit_log2`` < 128) of magnitude >= ``2**limit_log2`` (one read-only pass each; replaces an
    ``isfinite`` and an ``all`` per value)."""
    if not -127 < limit_log2 <= 128:
        raise ValueError(f"limit_log2 must be in (-127, 128], got {limit_log2}")
    return kernels().pfc_any_nonfinite(values, int(limit_log2))


def block_softmax_(logits, col_scale, column, target_logit):
    """One block of the forward, in place on float32 ``logits`` [N, c] (the raw products):
    ``z = logits * col_scale`` (``col_scale`` [c]), ``z[i, column[i]] = target_logit[i]`` where
    ``column[i] >= 0`` (int64 [N] or [N, 1]; -1: the row's class is not in this block), then
    ``exp(z - top)`` in place, ``top`` the row maximum: the row softmax times the row's sum of
    exponentials (no normalising pass). Returns (``exp(z - top)`` [N, c], the rows' log-sum-exp
    of ``z`` [N, 1], ``top`` [N, 1]); the softmax is ``exp(z - top) * exp(top - lse)``."""
    lse, top = paddle.empty_like(target_logit), paddle.empty_like(target_logit)
    return kernels().pfc_block_softmax(logits, col_scale, column, target_logit, lse, top)


def softmax_grad_(softmax, to_global, column, slope, coef, inv_norm, product_limit_log2: int = 128):
    """dL/d(product) of one block, in place on its float32 ``softmax`` [N, c]: ``softmax[i, j] *
    to_global[i] * coef * inv_norm[j]``, and at ``j = column[i] >= 0`` (the target)
    ``(softmax[i, j] * to_global[i] - 1) * slope[i] * coef * inv_norm[j]``. ``to_global`` and
    ``slope`` [N, 1] float32, ``coef`` a float32 scalar, ``inv_norm`` [c].

    With ``product_limit_log2`` < 128, every element of magnitude >= ``2**product_limit_log2 /
    2**ceil(log2(2 N))`` (and every inf) becomes NaN: where the result is finite, its products
    with [N, D] rows of elements in [-1, 1] stay below ``2**product_limit_log2``, and a NaN reaches
    every product that reads it (a step's check of those products' results finds it)."""
    if product_limit_log2 > 128:
        raise ValueError(f"product_limit_log2 must be <= 128, got {product_limit_log2}")
    return kernels().pfc_block_dlogits(softmax, to_global, column, slope, coef, inv_norm, int(product_limit_log2))


def sparse_update_(weight, velocity, index, grad, lr, *, momentum: float | None, nesterov: bool,
                   weight_decay: float, rescale: float, project_eps: float | None = None):
    """Update rows ``index`` (int64 [c], unique) of ``weight`` [L, D] and ``velocity`` (float32
    or bfloat16, alike) in place with ``grad`` [c, D] (float32 or bfloat16) and float32 ``lr`` [1],
    in float32 arithmetic (bfloat16 values widened; stored bfloat16 rounded to nearest even):
    ``g' = rescale * g + weight_decay * w``; SGD (``momentum`` None): ``w -= lr * g'``;
    Momentum: ``v = momentum * v + g'``, ``w -= lr * v`` (Nesterov: ``w -= lr * (g' + momentum * v)``).
    With SGD, ``velocity`` is any tensor of ``weight``'s dtype and is not touched.

    With ``project_eps``, ``g`` is first replaced by its tangent projection at the row's value
    before the update: ``g - (g . u) u`` with ``u = w / max(|w|, project_eps)`` (float32 values of
    the stored row). ``|g . u| <= |g|``, so gradient rows whose elements stay below ``2**64`` give
    finite projected rows (:data:`PROJECTED_GRAD_LIMIT_LOG2`).

    Returns the updated weight's Value (what an op that must read the new rows depends on)."""
    project = project_eps is not None
    return kernels().pfc_sparse_update(weight, velocity, index, grad, lr, float(momentum or 0.0),
                                 momentum is not None, bool(nesterov), float(weight_decay), float(rescale),
                                 project, float(project_eps) if project else 0.0)[0]


def sparse_update_int8_(weight, velocity, scale, index, grad, lr, *, momentum: float, nesterov: bool,
                        weight_decay: float, rescale: float, project_eps: float | None = None):
    """:func:`sparse_update_`'s Momentum rule with the momentum stored as int8 codes ``velocity``
    [L, D] and one float32 scale a row ``scale`` [L, 1] (the row's values ``codes * scale``).
    Each kept row's momentum is widened to float32, updated, then stored again: ``scale =
    max|v| / 127`` and ``codes = round(v / scale)`` (to nearest, ties to even; a zero row gets
    scale 0 and codes 0). Rows not in ``index`` are not touched. Returns the updated weight's Value."""
    project = project_eps is not None
    return kernels().pfc_sparse_update_int8(weight, velocity, scale, index, grad, lr, float(momentum),
                                            bool(nesterov), float(weight_decay), float(rescale), project,
                                            float(project_eps) if project else 0.0)[0]


#: Gradient rows that :func:`sparse_update_` projects are checked against ``2**64`` (any element
#: at or beyond it counts as non-finite): below it the projection cannot overflow.
PROJECTED_GRAD_LIMIT_LOG2 = 64


def prelu(x, alpha):
    """Channel PReLU of float32 ``x`` [N, C, ...] with ``alpha`` [C]: ``x`` where ``x > 0``, else
    ``alpha[c] * x`` (Paddle's ``prelu``, mode "channel", NCHW), differentiable in both inputs.
    The forward is bit-identical to Paddle's; ``d alpha`` sums per plane in float32, then over
    planes in float64."""
    return kernels("backbone_ops").pfc_prelu(x, alpha)


def grouped_conv2d(x, weight, stride: tuple[int, int], padding: tuple[int, int], groups: int):
    """Grouped convolution of float32 ``x`` [N, C, H, W] with ``weight`` [O, C / groups, kh, kw]
    (``groups`` divides C and O; no dilation, no bias, zero padding ``padding`` = (ph, pw) on both
    sides); output channel ``o`` of group ``q = o // (O / groups)`` reads input channels
    ``q * C/groups + b``:
    ``out[n, o, oh, ow] = sum_{b, i, j} weight[o, b, i, j] * x[n, q*C/groups + b, oh*sh - ph + i, ow*sw - pw + j]``.
    ``groups = C = O`` is a depthwise convolution. Differentiable in both inputs (``d weight``
    sums per plane in float32, over the batch in float64). Made for few channels a group
    (depthwise; mobilefacenet's 64 groups of 2): its cost grows with (C / groups) per output."""
    return kernels("backbone_ops").pfc_grouped_conv2d(x, weight, int(stride[0]), int(stride[1]),
                                                      int(padding[0]), int(padding[1]), int(groups))


def depthwise_conv2d(x, weight, stride: tuple[int, int], padding: tuple[int, int], bf16: bool = False,
                     bf16_output: bool = False):
    """Depthwise, or grouped with G = ``weight.shape[1]`` channels a group, convolution of
    channels-last ``x`` [N, H, W, C] (float32, or bfloat16 with ``bf16``) with float32 ``weight``
    [C, G, kh, kw] (G divides 16 and C; each group's G outputs read its G inputs; no dilation, no
    bias, zero padding ``padding`` = (ph, pw) on both sides):
    ``out[n, oh, ow, o] = sum_{q, i, j} weight[o, q, i, j] * x[n, oh*sh - ph + i, ow*sw - pw + j, (o // G) * G + q]``,
    [N, OH, OW, C], float32 or with ``bf16_output`` bfloat16 (rounded to nearest even). With
    ``bf16`` the products' operands (x, weight and in the backward d out) are rounded to bfloat16
    first, as oneDNN's bfloat16 convolutions do; sums are float32. Differentiable in both inputs:
    d x in x's dtype, d weight float32 (float32 sums per sample, float64 over the batch)
    (``csrc/depthwise_ops.cc``: oneDNN 3.6 has only generic code for the strided bfloat16 backward,
    for a kernel as large as its input, and im2col + GEMM for few channels a group). ValueError
    naming the input when a shape or dtype is off."""
    if len(x.shape) != 4 or x.dtype not in ((paddle.float32, paddle.bfloat16) if bf16 else (paddle.float32,)):
        kinds = "float32 or bfloat16" if bf16 else "float32"
        raise ValueError(f"depthwise_conv2d: x must be {kinds} [N, H, W, C], got {x.dtype} {list(x.shape)}")
    channels = x.shape[3]
    if (len(weight.shape) != 4 or weight.dtype != paddle.float32 or weight.shape[0] != channels
            or 16 % weight.shape[1] or channels % weight.shape[1]):
        raise ValueError(f"depthwise_conv2d: weight must be float32 [C, G, kh, kw] with G dividing 16 and C, for "
                         f"x [N, H, W, C] {list(x.shape)}, got {weight.dtype} {list(weight.shape)}")
    if bf16_output and not bf16:
        raise ValueError("depthwise_conv2d: a bfloat16 output needs bf16 products")
    return kernels("depthwise_ops").pfc_depthwise_conv2d(
        x, weight, int(stride[0]), int(stride[1]), int(padding[0]), int(padding[1]), channels // weight.shape[1],
        bool(bf16), bool(bf16_output))


def _check_norm_inputs(op: str, x, dtypes: tuple, channels_last: bool, **per_channel) -> None:
    """ValueError naming ``op`` and the input when ``x`` is not ``dtypes`` [N, C, ...] ([N, ..., C]
    with ``channels_last``) or a given ``per_channel`` tensor is not float32 [C]."""
    layout = "[N, ..., C]" if channels_last else "[N, C, ...]"
    if len(x.shape) < 2 or x.dtype not in dtypes:
        names = " or ".join(str(d).replace("paddle.", "") for d in dtypes)
        raise ValueError(f"{op}: x must be {names} {layout}, got {x.dtype} {list(x.shape)}")
    channels = x.shape[-1] if channels_last else x.shape[1]
    for name, value in per_channel.items():
        if value is not None and (list(value.shape) != [channels] or value.dtype != paddle.float32):
            raise ValueError(f"{op}: {name} must be float32 [C] = [{channels}] for x {layout} "
                             f"{list(x.shape)}, got {value.dtype} {list(value.shape)}")


def batch_norm(x, scale, bias, mean, variance, momentum: float, epsilon: float, alpha=None,
               bfloat16_output: bool = False, channels_last: bool = False):
    """Training-mode batch normalisation of ``x`` [N, C, ...] (with ``channels_last``: [N, ..., C],
    e.g. NHWC) over N and the positions,
    then, when ``alpha`` [C] is given, the channel PReLU of the result (one op, so the PReLU's
    input is never stored): ``y = scale * (x - m) / sqrt(v + epsilon) + bias`` with the batch's
    mean ``m`` and biased variance ``v``; ``y`` where ``y > 0``, else ``alpha * y``. Updates the
    float32 [C] running statistics in place as Paddle's ``batch_norm`` does:
    ``mean = momentum * mean + (1 - momentum) * m``, likewise ``variance`` with ``v``.
    Differentiable in ``x``, ``scale``, ``bias`` (and ``alpha``); per-channel sums in float32 per
    plane, float64 across planes, all arithmetic in float32. ``x`` is float32, or bfloat16 (from a
    bfloat16 convolution; d x is then bfloat16 too). Returns the output [N, C, ...]: float32, or
    with ``bfloat16_output`` bfloat16 (rounded to nearest even; its gradient then arrives in
    bfloat16 too), for a bfloat16 convolution after it. ValueError naming the input when
    a shape or dtype is off (the kernel's own checks reach Python as a bare ``std::exception``,
    their message printed to stderr)."""
    _check_norm_inputs("batch_norm", x, (paddle.float32, paddle.bfloat16), channels_last, scale=scale, bias=bias,
                       mean=mean, variance=variance, alpha=alpha)
    ops = kernels("batch_norm_ops")
    if alpha is None:
        outputs = ops.pfc_batch_norm(x, scale, bias, mean, variance, float(momentum), float(epsilon),
                                     bool(bfloat16_output), bool(channels_last))
    else:
        outputs = ops.pfc_batch_norm_prelu(x, scale, bias, alpha, mean, variance, float(momentum), float(epsilon),
                                           bool(bfloat16_output), bool(channels_last))
    return outputs[0]


def batch_norm_inference(x, scale, bias, mean, variance, epsilon: float, alpha=None, channels_last: bool = False):
    """Inference-mode batch normalisation of float32 ``x`` [N, C, ...] (with ``channels_last``:
    [N, ..., C]) with the float32 [C] running statistics, then, when ``alpha`` [C] is given, the
    channel PReLU (one op, one pass): ``y = x * g + (bias - mean * g)``, ``g = scale / sqrt(variance +
    epsilon)`` (per channel in float64, rounded to float32); ``y`` where ``y > 0``, else ``alpha * y``.
    Paddle's eval ``batch_norm`` up to float32 rounding. No gradient (eval programs). ValueError
    naming the input when a shape or dtype is off."""
    _check_norm_inputs("batch_norm_inference", x, (paddle.float32,), channels_last, scale=scale, bias=bias,
                       mean=mean, variance=variance, alpha=alpha)
    ops = kernels("batch_norm_ops")
    if alpha is None:
        return ops.pfc_batch_norm_inference(x, scale, bias, mean, variance, float(epsilon), bool(channels_last))
    return ops.pfc_batch_norm_prelu_inference(x, scale, bias, alpha, mean, variance, float(epsilon),
                                              bool(channels_last))
