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
  backward attached through ``static_pylayer``. The normalisation of x and w is folded into the
  products (no normalised [S, D] copy of the centers is made), the inputs are aliased rather than
  copied, and the backward reuses the softmax of the forward in place, so a step costs the three
  [N, D] x [D, S] products, one [S, D] norm pass, one [S, D] temporary and a few O(N*S) passes.
  The local normaliser comes from an in-place softmax (log-sum-exp = row max - log(max softmax)).
* :func:`margin_softmax_loss_fused` (GPU): Paddle's fused ``margin_cross_entropy`` kernel with
  the communicator, differentiated by Paddle.
"""
from __future__ import annotations

import math

import paddle
from paddle import _C_ops

from paddle_pfc.collectives import CollectiveChain, zero_depending_on

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


def margin_softmax_loss(feature: paddle.pir.Value, centers: paddle.pir.Value,
                        local_target: paddle.pir.Value, chain: CollectiveChain,
                        m1: float, m2: float, m3: float, scale: float) -> paddle.pir.Value:
    """Mean margin-softmax loss of the global batch against sharded centers (CPU implementation).

    feature: float32 [N, D], the all-gathered features (N = global batch), differentiable.
    centers: float32 [S, D], this shard's kept centers (unnormalised), differentiable.
    local_target: int64 [N], column of each sample's class in ``centers`` or -1 if on another shard.
    Returns a float32 scalar equal on every rank. Its gradient w.r.t. ``feature`` is this shard's
    contribution (the caller sums it over ranks, see ``all_gather_with_grad``); w.r.t. ``centers``
    it is complete ([S, D], nothing to sum). Every read of ``centers`` by the gradient computation
    precedes the output of the ``centers`` gradient, so the caller may update ``centers`` in place
    once it has that gradient.

    Cost: the three products plus one [S, D] read (row norms) and one [S, D] temporary (radial
    part of the center gradient); the rest is O(N*S), mostly in place.
    """
    x, w = _detached(feature), _detached(centers)
    inv_x_norm = 1.0 / paddle.clip(paddle.norm(x, p=2, axis=1, keepdim=True), min=_NORM_EPS)  # [N,1]
    # frobenius_norm over axis 1 is one fused pass (p_norm and sqrt(sum(w*w)) are several).
    inv_w_norm = 1.0 / paddle.clip(_C_ops.frobenius_norm(w, [1], False, False), min=_NORM_EPS)  # [S]
    x_unit = x * inv_x_norm
    # proj_ij = <x_i/|x_i|, w_j> = |w_j| cos_ij, kept for the backward; logits = s * cos.
    proj = paddle.matmul(x_unit, w, transpose_y=True)                                          # [N,S]
    logits = proj * (inv_w_norm * scale)                                                       # [N,S]
    has_target = paddle.unsqueeze(local_target >= 0, 1)                                        # [N,1]
    column = paddle.unsqueeze(paddle.clip(local_target, min=0), 1)                             # [N,1]
    at_column = paddle.take_along_axis(logits, column, axis=1, broadcast=False)                # [N,1]
    cos_target = paddle.clip(at_column / scale, -1.0, 1.0)
    target_logit = scale * target_margin(cos_target, m1, m2, m3)
    logits = _C_ops.put_along_axis_(logits, column, paddle.where(has_target, target_logit, at_column),
                                    1, "assign", True)
    # Local softmax in place; with its row maximum M and the fact that the softmax equals 1/sum at
    # the maximum, the local log-sum-exp is M - log(max softmax) (no extra exp pass).
    local_max = paddle.max(logits, axis=1, keepdim=True)                                       # [N,1]
    softmax = _C_ops.softmax_(logits, 1)                                                       # [N,S]
    local_lse = local_max - paddle.log(paddle.max(softmax, axis=1, keepdim=True))              # [N,1]
    row_max = chain.all_reduce_max(local_lse)                                                  # [N,1]
    local_stats = paddle.concat(
        [paddle.exp(local_lse - row_max),
         paddle.where(has_target, target_logit, paddle.zeros_like(target_logit))], axis=1)     # [N,2]
    stats = chain.all_reduce_sum(local_stats)
    denominator, global_target_logit = stats[:, 0:1], stats[:, 1:2]
    lse = paddle.log(denominator) + row_max                                                   # [N,1]
    loss_value = paddle.mean(lse - global_target_logit)
    to_global = paddle.exp(local_lse - lse)           # local softmax -> global softmax, per row
    margin_slope = target_margin_derivative(cos_target, m1, m2)                                # [N,1]
    num_rows = paddle.cast(paddle.shape(x)[0], "float32")

    def forward(feature_in, centers_in, loss_in):
        # The value was computed above from detached inputs and enters as a third input (PIR
        # mishandles a forward region that reads outer values); reading one element of each
        # differentiable input ties them to the output so that they get gradient slots.
        return loss_in + zero_depending_on(feature_in) + zero_depending_on(centers_in)

    def backward(grad_loss):
        # dL/dcos = s/N * (softmax - onehot), the target entry times dc'/dc, then folded with
        # 1/|w_j| (grad_scaled); all in place in the softmax buffer.
        coef = grad_loss * scale / num_rows
        row_coef = to_global * coef                                                           # [N,1]
        p_target = paddle.take_along_axis(softmax, column, axis=1, broadcast=False) * to_global
        grad_target = paddle.where(has_target, (p_target - 1.0) * margin_slope, p_target) * coef
        grad_cos = _C_ops.multiply_(softmax, row_coef)
        grad_cos = _C_ops.put_along_axis_(grad_cos, column, grad_target, 1, "assign", True)
        grad_scaled = _C_ops.multiply_(grad_cos, inv_w_norm)                                  # [N,S]
        # Feature: project dL/dx_unit onto the tangent space of the unit sphere, divide by |x|.
        grad_x_unit = paddle.matmul(grad_scaled, w)                                            # [N,D]
        radial = paddle.sum(grad_x_unit * x_unit, axis=1, keepdim=True)
        grad_feature = (grad_x_unit - radial * x_unit) * inv_x_norm
        # Centers: h = grad_scaled^T x_unit is |w|^-1 dL/dw_unit; the same projection removes
        # (h_j . w_j) w_j / |w_j|^2, where h_j . w_j = sum_i grad_scaled_ij proj_ij ([N,S] work).
        along = paddle.matmul(paddle.ones_like(inv_x_norm), _C_ops.multiply_(proj, grad_scaled),
                              transpose_x=True)                                               # [1,S]
        # The last reader of ``w`` (grad_x_unit) precedes the center gradient (see docstring).
        radial_w = paddle.reshape(along * (inv_w_norm * inv_w_norm), [-1, 1]) + zero_depending_on(grad_x_unit)
        h = paddle.matmul(grad_scaled, x_unit, transpose_x=True)                               # [S,D]
        grad_centers = _C_ops.subtract_(h, w * radial_w)
        return grad_feature, grad_centers, None

    loss = paddle.static.nn.static_pylayer(forward, [feature, centers, loss_value], backward)
    return loss


def margin_softmax_loss_fused(feature: paddle.pir.Value, centers: paddle.pir.Value,
                              global_target: paddle.pir.Value, chain: CollectiveChain,
                              rank: int, world_size: int,
                              m1: float, m2: float, m3: float, scale: float) -> paddle.pir.Value:
    """Same contract as :func:`margin_softmax_loss` with Paddle's fused GPU kernel.

    ``global_target``: int64 [N], each label's column in the concatenation of all ranks' kept
    centers (rank order), as produced by ``class_center_sample`` (or the raw label when nothing is
    sampled). The kernel all-reduces its normaliser on ring 0; the chain orders it after the
    previous collective and records its output as the last one.
    """
    x_unit = paddle.nn.functional.normalize(chain.tied(feature), axis=1)
    w_unit = paddle.nn.functional.normalize(centers, axis=1)
    cos = paddle.matmul(x_unit, w_unit, transpose_y=True)
    if cos.dtype != paddle.float32:
        cos = paddle.cast(cos, "float32")
    _, per_sample = _C_ops.margin_cross_entropy(
        cos, paddle.unsqueeze(global_target, 1), False, 0, rank, world_size, m1, m2, m3, scale)
    loss = paddle.mean(per_sample)
    chain.after(loss)
    return loss
