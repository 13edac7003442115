"""The classifier math: margin softmax cross-entropy over class centers sharded across ranks.

For the global batch of N gathered samples and the kept centers of all shards:

    c_ij  = <x_i/|x_i|, w_j/|w_j|>                   (cosine, computed per shard)
    c'_iy = cos(m1 * acos(c_iy) + m2) - m3            (target column only)
    loss  = mean_i [ log sum_j exp(s * c~_ij) - s * c'_iy ],   c~ = c with c'_iy at the target

Every rank ends with the same scalar. The softmax normalizer is assembled with one all-reduce MAX
(of the local row log-sum-exps) and one all-reduce SUM (the rescaled local sums and the target
logit), in that order.

Two implementations with one contract:
* :func:`margin_softmax_loss` (CPU and any device): plain ops for the forward, and a hand-written
  backward attached through ``static_pylayer``. The kept centers come in blocks of a few thousand
  rows; each block is finished (product, scaling, margin, softmax; in the backward the two
  gradient products and the tangent projection) while it is hot in cache, and every temporary is
  one block in size. The normalisation of x and w is folded into the products, the inputs are
  aliased rather than copied, and the backward reuses the forward's softmax in place, so a step
  costs the three [N, D] x [D, S] products plus O(S*D + N*S) passes over cached blocks. With
  ``native`` the per-block passes after each product are single native CPU kernels
  (:mod:`paddle_pfc.kernels.native_ops`), the same arithmetic as the Paddle ops they replace.
* :func:`margin_softmax_loss_fused` (the fused road, GPU by default): the fused
  ``margin_cross_entropy`` kernel with the communicator (Paddle's, or its emulation on a machine
  without a GPU, :mod:`paddle_pfc.kernels`), the rest differentiated by Paddle.

Both take the products' operand dtype (float32, bfloat16; float16 on GPU): the logits, softmax,
margin and loss are float32 whatever it is.
"""
from __future__ import annotations

import math

import paddle
from paddle import _C_ops

from paddle_pfc.kernels import native_ops
from paddle_pfc.head.collectives import CollectiveChain, zero_depending_on
from paddle_pfc.engine.distributed import on_gpu

_NORM_EPS = 1e-12


def target_margin(cos_target: paddle.pir.Value, m1: float, m2: float, m3: float) -> paddle.pir.Value:
    """``cos(m1 * acos(c) + m2) - m3`` for c in [-1, 1] (any float tensor)."""
    if m1 == 1.0 and m2 == 0.0:
        return cos_target - m3
    theta = paddle.acos(paddle.clip(cos_target, -1.0, 1.0))
    return paddle.cos(m1 * theta + m2) - m3


def target_margin_derivative(cos_target: paddle.pir.Value, m1: float, m2: float) -> paddle.pir.Value:
    """d c'/d c = m1 * sin(m1*θ + m2) / sin θ with θ = acos(c); 1 when m1 = 1 and m2 = 0."""
    if m1 == 1.0 and m2 == 0.0:
        return paddle.ones_like(cos_target)
    clipped = paddle.clip(cos_target, -1.0, 1.0)
    theta = paddle.acos(clipped)
    sin_theta = paddle.sqrt(paddle.clip(1.0 - clipped * clipped, min=1e-12))
    return m1 * paddle.sin(m1 * theta + m2) / sin_theta


def check_margins(m1: float, m2: float, m3: float, scale: float) -> None:
    """Raise ValueError naming the argument for a non-finite margin or a non-positive scale."""
    for name, value in (("margin1", m1), ("margin2", m2), ("margin3", m3), ("scale", scale)):
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    if m1 <= 0:
        raise ValueError(f"margin1 must be > 0, got {m1!r}")
    if scale <= 0:
        raise ValueError(f"scale must be > 0, got {scale!r}")


def _detached(x: paddle.pir.Value) -> paddle.pir.Value:
    """``x`` without gradient, sharing its memory (no copy). An op that later writes ``x`` in
    place must be ordered after every reader of the alias (see ``margin_softmax_loss``)."""
    out = x.detach()
    out.stop_gradient = True
    return out


def _detached_operand(x: paddle.pir.Value, dtype: str) -> paddle.pir.Value:
    """:func:`as_float32_operand` of ``x`` without gradient. A float32 ``x`` is aliased (no copy);
    a 2-byte ``x`` is widened by a cast (Paddle's CPU ``share_data_`` has no bfloat16 kernel)."""
    if x.dtype == paddle.float32:
        return as_float32_operand(_detached(x), dtype)
    out = paddle.cast(x, "float32")
    out.stop_gradient = True
    return out


def as_float32_operand(x: paddle.pir.Value, dtype: str) -> paddle.pir.Value:
    """``x`` as a float32 matmul operand with the values of a ``dtype`` operand.

    The CPU build of Paddle has no bfloat16 matmul that runs without AVX512-BF16 (oneDNN raises)
    and no float16 matmul at all, so a reduced-precision product is computed in float32 from
    operands rounded to ``dtype``: the exact products of the rounded values, accumulated in float32,
    which is what a bfloat16 GEMM with float32 accumulation computes. ``x`` already in ``dtype``
    is only widened.
    """
    if x.dtype != paddle.float32:
        return paddle.cast(x, "float32")
    if dtype == "float32":
        return x
    return paddle.cast(paddle.cast(x, dtype), "float32")


def _inverse_row_norm(rows: paddle.pir.Value, native: bool) -> paddle.pir.Value:
    """1 / max(|row|, eps) of a float32 [R, D] tensor, shape [R]: the native kernel, or Paddle's
    frobenius_norm (one fused pass)."""
    if native:
        return native_ops.inverse_row_norm(rows, _NORM_EPS)
    return 1.0 / paddle.clip(_C_ops.frobenius_norm(rows, [1], False, False), min=_NORM_EPS)


def margin_softmax_loss(feature: paddle.pir.Value, center_chunks: list, chunk_starts: list[int],
                        target_centers: paddle.pir.Value, local_target: paddle.pir.Value,
                        chain: CollectiveChain, m1: float, m2: float, m3: float, scale: float,
                        dtype: str = "float32", reload_chunk=None, native: bool = False) -> paddle.pir.Value:
    """Mean margin-softmax loss of the global batch against sharded centers (CPU implementation).

    feature: float32 [N, D], the all-gathered features (N = global batch), differentiable.
    center_chunks: this shard's kept centers (unnormalised) as consecutive blocks ``[c_k, D]`` in
      ``dtype``, differentiable; block k holds the kept columns ``[chunk_starts[k],
      chunk_starts[k+1])``, the last one the rest (its length may be dynamic).
    target_centers: [N, D] (no gradient), for each sample whose class is on this shard its center
      (the kept row at its column); other rows are ignored. Used for the margin's target cosine.
    local_target: int64 [N], column of each sample's class among the kept centers or -1.
    dtype: the operand dtype of the products (``float32`` or ``bfloat16``; see
      :func:`as_float32_operand`). Norms, logits, softmax, margin and loss are float32.
    reload_chunk: optional ``k -> [c_k, D]`` value equal to block k, built in the backward (e.g. a
      fresh gather from the shard), so that the forward's block need not stay alive until then.
    native: use :mod:`paddle_pfc.kernels.native_ops` (CPU kernels) for the row norms, the per-block
      softmax, its gradient and the tangent projection; the same values up to float32 rounding
      order.

    Returns a float32 scalar equal on every rank. Its gradient w.r.t. ``feature`` is this shard's
    contribution (the caller sums it over ranks, see ``all_gather_with_grad``); w.r.t. each block
    it is complete ([c_k, D] in ``dtype``, nothing to sum). Every read of a block by the gradient
    computation precedes the output of that block's gradient, so the caller may update the block
    in place once it has that gradient.

    Memory: per block one [N, c_k] float32 softmax is kept from the forward to the backward (and
    the block itself unless ``reload_chunk`` is given); every other temporary is one block in
    size, so blocks under glibc's mmap threshold can reuse heap memory step after step instead of
    faulting fresh pages in (``PADDLE_PFC_MALLOC=speed``, see ``paddle_pfc.engine.runtime``).
    """
    x = _detached(feature)
    inv_x_norm = paddle.unsqueeze(_inverse_row_norm(x, native), 1)                           # [N,1]
    x_unit = x * inv_x_norm
    x_operand = as_float32_operand(x_unit, dtype)
    # The target cosine from the target rows directly (an [N, D] product): every block can then be
    # finished while it is hot in cache, without waiting for the others.
    target_rows = _detached_operand(target_centers, dtype)
    cos_target = paddle.clip(paddle.sum(x_operand * target_rows, axis=1, keepdim=True)
                             * paddle.unsqueeze(_inverse_row_norm(target_rows, native), 1), -1.0, 1.0)
    target_logit = scale * target_margin(cos_target, m1, m2, m3)
    local_target = paddle.unsqueeze(local_target, 1)                                          # [N,1]

    blocks = []
    for k, chunk in enumerate(center_chunks):
        start = chunk_starts[k]
        stop = chunk_starts[k + 1] if k + 1 < len(center_chunks) else None
        w_operand = _detached_operand(chunk, dtype)
        inv_w_norm = _inverse_row_norm(w_operand, native)                                    # [c]
        product = paddle.matmul(x_operand, w_operand, transpose_y=True)                      # [N,c]
        in_block = local_target >= start
        if stop is not None:
            in_block = paddle.logical_and(in_block, local_target < stop)
        if native:  # scaling, target, softmax and log-sum-exp in one pass; column -1: not here
            column = paddle.where(in_block, local_target - start, paddle.full_like(local_target, -1))
            softmax, block_lse = native_ops.block_softmax_(product, inv_w_norm * scale, column, target_logit)
        else:
            logits = _C_ops.multiply_(product, inv_w_norm * scale)
            column = paddle.where(in_block, local_target - start, paddle.zeros_like(local_target))
            at_column = paddle.take_along_axis(logits, column, axis=1, broadcast=False)
            logits = _C_ops.put_along_axis_(logits, column, paddle.where(in_block, target_logit, at_column),
                                            1, "assign", True)
            # In-place softmax; its value at the row maximum M is 1/sum, so the block's
            # log-sum-exp is M - log(max softmax) (no extra exp pass).
            block_max = paddle.max(logits, axis=1, keepdim=True)
            softmax = _C_ops.softmax_(logits, 1)
            block_lse = block_max - paddle.log(paddle.max(softmax, axis=1, keepdim=True))   # [N,1]
        blocks.append((chunk if reload_chunk is None else None, inv_w_norm, in_block, column, softmax,
                       block_lse))

    block_lses = paddle.concat([b[-1] for b in blocks], axis=1) if len(blocks) > 1 else blocks[0][-1]
    local_lse = paddle.logsumexp(block_lses, axis=1, keepdim=True) if len(blocks) > 1 else block_lses
    row_max = chain.all_reduce_max(local_lse)                                                  # [N,1]
    has_target = local_target >= 0
    local_stats = paddle.concat(
        [paddle.exp(local_lse - row_max),
         paddle.where(has_target, target_logit, paddle.zeros_like(target_logit))], axis=1)     # [N,2]
    stats = chain.all_reduce_sum(local_stats)
    denominator, global_target_logit = stats[:, 0:1], stats[:, 1:2]
    lse = paddle.log(denominator) + row_max                                                   # [N,1]
    loss_value = paddle.mean(lse - global_target_logit)
    margin_slope = target_margin_derivative(cos_target, m1, m2)                                # [N,1]
    num_rows = paddle.cast(paddle.shape(x)[0], "float32")

    def forward(feature_in, *rest):
        # The value was computed above from detached inputs and enters as the last input (PIR
        # mishandles a forward region that reads outer values); reading one element of each
        # differentiable input ties them to the output so that they get gradient slots.
        *chunks_in, loss_in = rest
        out = loss_in + zero_depending_on(feature_in)
        for chunk_in in chunks_in:
            out = out + zero_depending_on(chunk_in)
        return out

    def backward(grad_loss):
        # dL/dcos = s/N * (global softmax - onehot), the target entry times dc'/dc, then folded
        # with 1/|w_j| (grad_scaled); all in place in each block's softmax buffer.
        coef = grad_loss * scale / num_rows
        grad_x_parts, grad_chunks = [], []
        for k, (chunk, inv_w_norm, in_block, column, softmax, block_lse) in enumerate(blocks):
            to_global = paddle.exp(block_lse - lse)                     # block softmax -> global
            if native:
                grad_scaled = native_ops.softmax_grad_(softmax, to_global, column, margin_slope, coef,
                                                       inv_w_norm)
            else:
                p_target = paddle.take_along_axis(softmax, column, axis=1, broadcast=False) * to_global
                grad_target = paddle.where(in_block, (p_target - 1.0) * margin_slope, p_target) * coef
                grad_cos = _C_ops.multiply_(softmax, to_global * coef)
                grad_cos = _C_ops.put_along_axis_(grad_cos, column, grad_target, 1, "assign", True)
                grad_scaled = _C_ops.multiply_(grad_cos, inv_w_norm)                         # [N,c]
            source = chunk if reload_chunk is None else reload_chunk(k)
            w_operand = _detached_operand(source, dtype)  # again: a widened copy is not kept alive
            # Feature part of this block: grad_scaled @ w ([N, D]), summed over blocks below.
            grad_x_block = paddle.matmul(grad_scaled, w_operand)
            grad_x_parts.append(grad_x_block)
            # Centers: h = grad_scaled^T x is |w|^-1 dL/dw_unit; the tangent projection removes
            # (h_j . w_j) w_j / |w_j|^2. The last reader of ``w`` (grad_x_block) precedes it.
            h = paddle.matmul(grad_scaled, x_operand, transpose_x=True)                       # [c,D]
            if native:  # one pass; the tie orders it after grad_x_block
                grad_w = native_ops.tangent_project_(h, w_operand, inv_w_norm + zero_depending_on(grad_x_block))
            else:
                along = paddle.sum(h * w_operand, axis=1)                                    # [c]
                radial = paddle.unsqueeze(along * inv_w_norm * inv_w_norm, 1) + zero_depending_on(grad_x_block)
                grad_w = _C_ops.subtract_(h, w_operand * radial)
            grad_chunks.append(grad_w if dtype == "float32" else paddle.cast(grad_w, dtype))
        grad_x_unit = paddle.add_n(grad_x_parts) if len(grad_x_parts) > 1 else grad_x_parts[0]
        # Feature: project dL/dx_unit onto the tangent space of the unit sphere, divide by |x|.
        radial_x = paddle.sum(grad_x_unit * x_unit, axis=1, keepdim=True)
        grad_feature = (grad_x_unit - radial_x * x_unit) * inv_x_norm
        return (grad_feature, *grad_chunks, None)

    return paddle.static.nn.static_pylayer(forward, [feature, *center_chunks, loss_value], backward)


def _fused_product(x_unit: paddle.pir.Value, w_unit: paddle.pir.Value, dtype) -> paddle.pir.Value:
    """float32 [N, S] cosines ``x_unit @ w_unit^T`` of float32 unit rows, with ``dtype`` operands.

    On GPU a ``dtype`` GEMM (its output rounded to ``dtype``). Paddle's CPU build has no float16 /
    bfloat16 matmul kernel, so there the same values are computed as a float32 product of operands
    rounded to ``dtype``, rounded to ``dtype`` once (what the GEMM returns, up to summation order).
    """
    if dtype == paddle.float32:
        return paddle.matmul(x_unit, w_unit, transpose_y=True)
    name = "bfloat16" if dtype == paddle.bfloat16 else "float16"
    if on_gpu():
        product = paddle.matmul(paddle.cast(x_unit, name), paddle.cast(w_unit, name), transpose_y=True)
    else:
        product = paddle.cast(paddle.matmul(as_float32_operand(x_unit, name), as_float32_operand(w_unit, name),
                                            transpose_y=True), name)
    return paddle.cast(product, "float32")


def margin_softmax_loss_fused(feature: paddle.pir.Value, centers: paddle.pir.Value,
                              global_target: paddle.pir.Value, chain: CollectiveChain,
                              rank: int, world_size: int,
                              m1: float, m2: float, m3: float, scale: float, kernels) -> paddle.pir.Value:
    """Same contract as :func:`margin_softmax_loss` with the fused ``margin_cross_entropy`` kernel
    (Paddle's on GPU, or its emulation: :mod:`paddle_pfc.kernels`), one block.

    ``feature``: float32 [N, D], the gathered features (differentiable). ``centers``: [S, D] this
    shard's kept centers in the operand dtype (float32, float16 or bfloat16), differentiable. The
    norms and unit vectors are float32 (as on the composite road); the product takes ``dtype``
    operands (:func:`_fused_product`); the cosines enter the kernel as float32. ``global_target``:
    int64 [N], each label's column in the concatenation of all ranks' kept centers (rank order),
    or the raw label when nothing is sampled. The kernel all-reduces its normaliser and the
    per-sample loss; ``kernels`` orders its collectives in ``chain``.

    Returns the float32 mean loss, equal on every rank; the gradient w.r.t. ``feature`` is this
    shard's part (summed over ranks by ``all_gather_with_grad``), w.r.t. ``centers`` complete.
    """
    x = chain.tied(feature)
    x_unit = paddle.nn.functional.normalize(x, axis=1)
    w = centers if centers.dtype == paddle.float32 else paddle.cast(centers, "float32")
    w_unit = paddle.nn.functional.normalize(w, axis=1)
    cos = _fused_product(x_unit, w_unit, centers.dtype)
    _, per_sample = kernels.margin_cross_entropy(
        cos, paddle.unsqueeze(global_target, 1), False, 0, rank, world_size, m1, m2, m3, scale, chain)
    loss = paddle.mean(per_sample)
    chain.after(loss)
    return loss
