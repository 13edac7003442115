"""The classifier math: margin softmax cross-entropy over class centers sharded across ranks.

For the global batch of N gathered samples and the kept centers of all shards:

    c_ij  = <x_i/|x_i|, w_j/|w_j|>                   (cosine, computed per shard)
    c'_iy = margin.target(c_iy)                       (target column only; e.g. cos(m1 * acos(c) + m2) - m3)
    loss  = mean_i [ log sum_j exp(s * c~_ij) - s * c'_iy ],   c~ = c with c'_iy at the target

Every rank ends with the same scalar. The softmax normaliser is assembled with one all-reduce MAX
(of the local row log-sum-exps) and one all-reduce SUM (the rescaled local sums and the target
logit), in that order.

Two implementations with one contract:
* :func:`margin_softmax_loss` (the composite backend, any device): plain ops for the forward, and a
  hand-written backward attached through ``static_pylayer``. The kept centers come in blocks of a
  few thousand rows (:mod:`paddle_pfc.head.blocks`); each block is finished (product, scaling,
  margin, softmax; in the backward the two gradient products and the tangent projection, which
  the native kernels leave to the update) while it is hot in cache, and every temporary is one
  block in size. The normalisation of x and w is
  folded into the products, the inputs are aliased rather than copied, and the backward reuses the
  forward's softmax in place, so a step costs the three [N, D] x [D, S] products plus O(S*D + N*S)
  passes over cached blocks. The per-block passes after each product are the head's block
  operations (:mod:`paddle_pfc.kernels.blockwise`: Paddle's ops or the native CPU kernels).
* :func:`~paddle_pfc.head.margin_softmax_fused.margin_softmax_loss_fused` (the fused backend, GPU by
  default): the fused ``margin_cross_entropy`` kernel with the communicator (Paddle's, or its
  emulation on a machine without a GPU, :mod:`paddle_pfc.kernels`), the rest differentiated by Paddle.

Both take the products' operand dtype (float32, bfloat16; float16 on GPU): the logits, softmax,
margin and loss are float32 whatever it is.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import paddle

from paddle_pfc.head.blocks import Block
from paddle_pfc.head.margin import Margin
from paddle_pfc.kernels.blockwise import PaddleBlockOps
from paddle_pfc.kernels.collectives import CollectiveChain, zero_depending_on


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


def _detached(x: paddle.pir.Value) -> paddle.pir.Value:
    """``x`` without gradient, sharing its memory (no copy). An op that later writes ``x`` in
    place must be ordered after every reader of the alias (see :func:`margin_softmax_loss`)."""
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


def _center_operand(centers: paddle.pir.Value, ops: PaddleBlockOps, dtype: str) -> tuple[paddle.pir.Value, bool]:
    """``(operand, unrounded)``: a block's centers (no gradient) as the products' float32
    operand. Where the products round float32 operands to ``dtype`` themselves
    (``ops.products_round``: native bfloat16 products), float32 centers go in as they are
    (``unrounded`` True: no cast passes; their inverse norms are then taken of the rounded values,
    and the tangent projection uses the float32 rows); else :func:`_detached_operand`."""
    if centers.dtype == paddle.float32 and ops.products_round(dtype):
        return _detached(centers), True
    return _detached_operand(centers, dtype), False


@dataclass(frozen=True)
class _Features:
    """The gathered features, float32 [N, D] (``x``, no gradient), their inverse norms [N, 1], unit
    rows, and unit rows as the products' operand."""

    x: paddle.pir.Value
    inv_norm: paddle.pir.Value
    unit: paddle.pir.Value
    operand: paddle.pir.Value


@dataclass(frozen=True)
class _BlockForward:
    """What the forward keeps of one block for the backward: its centers (None when the backward
    gathers them again or reads them by index from ``source.table``), inverse row norms [c],
    ``in_block`` (bool [N, 1]: the sample's class is in this block), the target's ``column``
    (int64 [N, 1]), the block softmax up to a row factor [N, c] (``softmax``, overwritten by the
    backward; the global softmax is ``softmax * exp(log_scale - lse)``), the block's row
    log-sum-exp [N, 1], ``log_scale`` [N, 1] and the :class:`Block` itself (``source``)."""

    centers: paddle.pir.Value | None
    inv_norm: paddle.pir.Value
    in_block: paddle.pir.Value
    column: paddle.pir.Value
    softmax: paddle.pir.Value
    lse: paddle.pir.Value
    log_scale: paddle.pir.Value
    source: Block


def _unit_features(feature: paddle.pir.Value, ops: PaddleBlockOps, dtype: str) -> _Features:
    x = _detached(feature)
    inv_norm = paddle.unsqueeze(ops.inverse_row_norm(x), 1)                                   # [N,1]
    unit = x * inv_norm
    return _Features(x, inv_norm, unit, as_float32_operand(unit, dtype))


def _target_cosine(features: _Features, target_centers: paddle.pir.Value, ops: PaddleBlockOps,
                   dtype: str) -> paddle.pir.Value:
    """[N, 1] cosine of each sample with its class's center, from the target rows directly (an
    [N, D] product): every block can then be finished while it is hot in cache."""
    rows = _detached_operand(target_centers, dtype)
    return paddle.clip(paddle.sum(features.operand * rows, axis=1, keepdim=True)
                       * paddle.unsqueeze(ops.inverse_row_norm(rows), 1), -1.0, 1.0)


def _block_forward(block: Block, features: _Features, target_logit, local_target, scale: float,
                   ops: PaddleBlockOps, dtype: str, keep_centers: bool) -> _BlockForward:
    """Product, scaling, target margin and softmax of one block (``local_target`` int64 [N, 1])."""
    if block.table is not None:  # rows read from the shard by index
        product, inv_norm = ops.indexed_logits(features.operand, block.table, block.index, dtype)  # [N,c], [c]
        keep_centers = False
    else:
        w_operand, unrounded = _center_operand(block.centers, ops, dtype)
        product, inv_norm = ops.logits_and_norms(features.operand, w_operand, dtype, unrounded)
    in_block = local_target >= block.start
    if block.stop is not None:
        in_block = paddle.logical_and(in_block, local_target < block.stop)
    softmax, lse, log_scale, column = ops.block_softmax_(product, inv_norm, scale, target_logit, local_target,
                                                         in_block, block.start)
    return _BlockForward(block.centers if keep_centers else None, inv_norm, in_block, column, softmax, lse,
                         log_scale, block)


def _normaliser(blocks: list[_BlockForward], local_target, target_logit, chain: CollectiveChain):
    """``(lse [N, 1], loss)``: each row's log-sum-exp over every rank's kept centers, and the mean
    loss (one all-reduce MAX, then one all-reduce SUM of ``[rescaled local sum, target logit]``)."""
    if len(blocks) > 1:
        local_lse = paddle.logsumexp(paddle.concat([b.lse for b in blocks], axis=1), axis=1, keepdim=True)
    else:
        local_lse = blocks[0].lse
    row_max = chain.all_reduce_max(local_lse)                                                  # [N,1]
    has_target = local_target >= 0
    local_stats = paddle.concat(
        [paddle.exp(local_lse - row_max),
         paddle.where(has_target, target_logit, paddle.zeros_like(target_logit))], axis=1)     # [N,2]
    stats = chain.all_reduce_sum(local_stats)
    denominator, global_target_logit = stats[:, 0:1], stats[:, 1:2]
    lse = paddle.log(denominator) + row_max                                                   # [N,1]
    return lse, paddle.mean(lse - global_target_logit)


def _backward(grad_loss, features: _Features, blocks: list[_BlockForward], block_dtypes: list, lse, margin_slope,
              num_rows, scale: float, ops: PaddleBlockOps, dtype: str, reload_block) -> tuple:
    """Gradients of the loss: ``(feature [N, D], each block [c_k, D] in its ``block_dtypes[k]``,
    None)``.

    dL/dcos = s/N * (global softmax - onehot), the target entry times dc'/dc, then folded with
    1/|w_j|; all in place in each block's softmax buffer.
    """
    coef = grad_loss * scale / num_rows
    grad_x_parts, grad_blocks = [], []
    for k, kept in enumerate(blocks):
        to_global = paddle.exp(kept.log_scale - lse)                   # block weights -> global softmax
        grad_scaled = ops.product_grad_(kept.softmax, to_global, kept.in_block, kept.column, margin_slope,
                                        coef, kept.inv_norm)                                 # [N,c]
        if kept.source.table is not None:
            # Both products read the rows from the shard by index, in one op; the update, which
            # writes those rows, takes its output h, so it follows these reads. h goes on unprojected
            # (the ops that read rows by index project in the update), in the block's dtype.
            grad_x_block, h = ops.indexed_backward(grad_scaled, features.operand, kept.source.table,
                                                   kept.source.index, dtype,
                                                   "float32" if block_dtypes[k] == paddle.float32 else "bfloat16")
            grad_x_parts.append(grad_x_block)
            grad_blocks.append(h)
            continue
        source = kept.centers if kept.centers is not None else reload_block(k)
        w_operand, _ = _center_operand(source, ops, dtype)  # again: a widened copy is not kept alive
        # Feature part of this block: grad_scaled @ w ([N, D]), summed over blocks below.
        grad_x_block = ops.product(grad_scaled, w_operand, False, False, dtype)
        grad_x_parts.append(grad_x_block)
        # Centers: h = grad_scaled^T x is |w|^-1 dL/dw_unit; the tangent projection removes
        # (h_j . w_j) w_j / |w_j|^2, after the last reader of ``w`` (grad_x_block), here or in
        # the update (``ops.projects_in_update``).
        h = ops.product(grad_scaled, features.operand, True, False, dtype)                    # [c,D]
        grad_w = ops.center_grad_(h, w_operand, kept.inv_norm, grad_x_block)
        grad_blocks.append(grad_w if block_dtypes[k] == paddle.float32 else paddle.cast(grad_w, block_dtypes[k]))
    grad_x_unit = paddle.add_n(grad_x_parts) if len(grad_x_parts) > 1 else grad_x_parts[0]
    # Feature: project dL/dx_unit onto the tangent space of the unit sphere, divide by |x|.
    radial_x = paddle.sum(grad_x_unit * features.unit, axis=1, keepdim=True)
    grad_feature = (grad_x_unit - radial_x * features.unit) * features.inv_norm
    return (grad_feature, *grad_blocks, None)


def margin_softmax_loss(feature: paddle.pir.Value, blocks: list[Block], target_centers: paddle.pir.Value,
                        local_target: paddle.pir.Value, chain: CollectiveChain, margin: Margin,
                        ops: PaddleBlockOps, dtype: str = "float32",
                        reload_block: Callable[[int], paddle.pir.Value] | None = None,
                        margin_states: list[paddle.pir.Value] = ()) -> paddle.pir.Value:
    """Mean margin-softmax loss of the global batch against sharded centers (composite backend).

    feature: float32 [N, D], the all-gathered features (N = global batch), differentiable.
    blocks: this shard's kept centers (unnormalised) as consecutive :class:`Block` s, ``centers``
      [c_k, D] in ``dtype`` (or float32 where ``ops.products_round(dtype)``), differentiable.
    target_centers: [N, D] (no gradient), for each sample whose class is on this shard its center
      (the kept row at its column); other rows are ignored. Used for the margin's target cosine.
    local_target: int64 [N], column of each sample's class among the kept centers or -1.
    ops: the block operations (:mod:`paddle_pfc.kernels.blockwise`).
    dtype: the operand dtype of the products (``float32`` or ``bfloat16``; see
      :func:`as_float32_operand`). Norms, logits, softmax, margin and loss are float32.
    reload_block: optional ``k -> [c_k, D]`` value equal to block k's centers, built in the
      backward (e.g. a fresh gather from the shard), so that the forward's block need not stay
      alive until then.
    margin: the target's rule (:class:`~paddle_pfc.head.margin.Margin`), with ``margin_states``
      (what its ``create_states`` returned); it sees the norms of ``feature``'s rows when it asks.

    Returns a float32 scalar equal on every rank. Its gradient w.r.t. ``feature`` is this shard's
    contribution (the caller sums it over ranks, see ``all_gather_with_grad``); w.r.t. each block
    it is complete ([c_k, D] in the block's dtype, nothing to sum) — except that where
    ``ops.projects_in_update`` (the native kernels) it is handed on before its tangent projection,
    ``h_j = |w_j|^-1 sum_i dL/dcos_ij x_i/|x_i|``, which ``ops.update_rows_`` projects (the
    gradient is ``h_j - (h_j . u_j) u_j``, ``u_j = w_j/|w_j|``). Every read of a block by the gradient
    computation precedes the output of that block's gradient, so the caller may update the block
    in place once it has that gradient.

    Memory: per block one [N, c_k] float32 softmax is kept from the forward to the backward (and
    the block itself unless ``reload_block`` is given); every other temporary is one block in
    size, so blocks under glibc's mmap threshold can reuse heap memory step after step instead of
    faulting fresh pages in (``PADDLE_PFC_MALLOC=speed``, see ``paddle_pfc.runtime.process``).
    """
    features = _unit_features(feature, ops, dtype)
    cos_target = _target_cosine(features, target_centers, ops, dtype)
    norms = paddle.norm(features.x, p=2, axis=1, keepdim=True) if margin.uses_norms else None
    target_cosine, margin_slope = margin.target(cos_target, norms, list(margin_states))         # [N,1]
    target_logit = margin.s * target_cosine
    local_target = paddle.unsqueeze(local_target, 1)                                          # [N,1]
    saved = [_block_forward(block, features, target_logit, local_target, margin.s, ops, dtype,
                            keep_centers=reload_block is None) for block in blocks]
    lse, loss_value = _normaliser(saved, local_target, target_logit, chain)
    num_rows = paddle.cast(paddle.shape(features.x)[0], "float32")

    def forward(feature_in, *rest):
        # The value was computed above from detached inputs and enters as the last input (PIR
        # mishandles a forward region that reads outer values); reading one element of each
        # differentiable input ties them to the output so that they get gradient slots.
        *centers_in, loss_in = rest
        out = loss_in + zero_depending_on(feature_in)
        for centers in centers_in:
            out = out + zero_depending_on(centers)
        return out

    def backward(grad_loss):
        return _backward(grad_loss, features, saved, [b.centers.dtype for b in blocks], lse, margin_slope,
                         num_rows, margin.s, ops, dtype, reload_block)

    return paddle.static.nn.static_pylayer(forward, [feature, *(b.centers for b in blocks), loss_value],
                                           backward)
