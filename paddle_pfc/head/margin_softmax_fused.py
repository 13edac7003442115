"""The margin softmax loss on the fused backend: Paddle's fused ``margin_cross_entropy`` kernel (GPU)
or its emulation (:mod:`paddle_pfc.kernels`), one block; the rest differentiated by Paddle. The
same contract as :func:`paddle_pfc.head.margin_softmax.margin_softmax_loss`."""
from __future__ import annotations

import paddle

from paddle_pfc.head.margin import Margin
from paddle_pfc.head.margin_softmax import as_float32_operand
from paddle_pfc.kernels.collectives import CollectiveChain
from paddle_pfc.kernels.fused import FusedKernels
from paddle_pfc.utils import paddle_compat


def _fused_product(x_unit: paddle.pir.Value, w_unit: paddle.pir.Value, dtype) -> paddle.pir.Value:
    """float32 [N, S] cosines ``x_unit @ w_unit^T`` of float32 unit rows, with ``dtype`` operands.

    On GPU a ``dtype`` GEMM (its output rounded to ``dtype``). Paddle's CPU build has no float16 /
    bfloat16 matmul kernel, so there the same values are computed as a float32 product of operands
    rounded to ``dtype``, rounded to ``dtype`` once (what the GEMM returns, up to summation order).
    """
    if dtype == paddle.float32:
        return paddle.matmul(x_unit, w_unit, transpose_y=True)
    name = "bfloat16" if dtype == paddle.bfloat16 else "float16"
    if paddle_compat.on_gpu():
        product = paddle.matmul(paddle.cast(x_unit, name), paddle.cast(w_unit, name), transpose_y=True)
    else:
        product = paddle.cast(paddle.matmul(as_float32_operand(x_unit, name), as_float32_operand(w_unit, name),
                                            transpose_y=True), name)
    return paddle.cast(product, "float32")


def refuse_unfused(margin: Margin) -> None:
    """ValueError naming ``margin`` unless the fused ``margin_cross_entropy`` kernel can run it."""
    if not margin.runs_fused:
        raise ValueError(f"the fused backend (kernels='fused') runs the combined margin (arcface, cosface, "
                         f"combined) only, not margin {margin.name!r}: use kernels='composite'")


def margin_softmax_loss_fused(feature: paddle.pir.Value, centers: paddle.pir.Value,
                              global_target: paddle.pir.Value, chain: CollectiveChain, rank: int,
                              margin: Margin, kernels: FusedKernels) -> paddle.pir.Value:
    """Mean margin-softmax loss with the fused ``margin_cross_entropy`` kernel, one block.

    ``feature``: float32 [N, D], the gathered features (differentiable). ``centers``: [S, D] this
    shard's kept centers in the operand dtype (float32, float16 or bfloat16), differentiable. The
    norms and unit vectors are float32 (as on the composite backend); the product takes ``dtype``
    operands (:func:`_fused_product`); the cosines enter the kernel as float32. ``global_target``:
    int64 [N], each label's column in the concatenation of all ranks' kept centers (rank order),
    or the raw label when nothing is sampled. The kernel all-reduces its normaliser and the
    per-sample loss; ``kernels`` orders its collectives in ``chain``.

    Returns the float32 mean loss, equal on every rank; the gradient w.r.t. ``feature`` is this
    shard's part (summed over ranks by ``all_gather_with_grad``), w.r.t. ``centers`` complete.
    ValueError naming the margin when the kernel cannot run it (``margin.runs_fused`` False).
    """
    refuse_unfused(margin)
    x = chain.tied(feature)
    x_unit = paddle.nn.functional.normalize(x, axis=1)
    w = centers if centers.dtype == paddle.float32 else paddle.cast(centers, "float32")
    w_unit = paddle.nn.functional.normalize(w, axis=1)
    cos = _fused_product(x_unit, w_unit, centers.dtype)
    _, per_sample = kernels.margin_cross_entropy(cos, paddle.unsqueeze(global_target, 1), rank, margin, chain)
    loss = paddle.mean(per_sample)
    chain.after(loss)
    return loss
