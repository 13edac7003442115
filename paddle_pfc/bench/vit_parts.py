"""Where a ViT training step's time goes, by kind of work: each profiled operator's time (Paddle's
operators, or torch's ``aten::`` ops by self time) sorted into one part of :data:`PARTS` by its name.
Imports no Paddle.

Names are matched without their dialect prefix (``pd_op.``, ``custom_op.``, ``aten::``); an unknown
name counts in ``other``. ``attention`` is the native attention op (its products and softmax
together: ``pfc_attention``); elsewhere those count in ``gemm`` and ``softmax``. A
``pylayer_instruction`` is a ViT's bfloat16 Linear (its product and the product's two gradients:
``gemm``). Paddle's ``multiply_`` is the gradient clipping's scaling of
each gradient (``optimizer``), its ``multiply`` / ``multiply_grad`` the drop path's per-sample
factor; ``pfc_bias_residual`` (a Linear's bias, the drop path's factor and the residual add in one
pass) counts in ``bias_activation``, ``pfc_gather_tokens`` (the masking's gathers) in
``drop_path_masking``; torch's optimizer and clipping run as ``_foreach_*`` or per-tensor element-wise ops, of which
``mul`` / ``add`` are ambiguous (counted in ``elementwise``).
"""
from __future__ import annotations

from collections.abc import Mapping

__all__ = ["PARTS", "part_of", "parts_of"]

#: The parts, in the order they are reported.
PARTS = ("gemm", "attention", "softmax", "layer_norm", "layout", "bias_activation", "drop_path_masking", "optimizer",
         "elementwise", "other")

_PART_OF = {
    **dict.fromkeys(("matmul", "matmul_grad", "conv2d", "conv2d_grad", "pylayer_instruction", "pfc_matmul",
                     "mm", "addmm", "bmm", "convolution_backward", "mkldnn_convolution", "linear"), "gemm"),
    **dict.fromkeys(("pfc_attention", "pfc_attention_grad"), "attention"),
    **dict.fromkeys(("softmax", "softmax_", "softmax_grad", "pfc_scaled_softmax", "pfc_scaled_softmax_grad",
                     "_softmax", "_softmax_backward_data"), "softmax"),
    **dict.fromkeys(("layer_norm", "layer_norm_grad", "pfc_layer_norm", "pfc_layer_norm_grad",
                     "native_layer_norm", "native_layer_norm_backward"), "layer_norm"),
    **dict.fromkeys(("transpose", "transpose_grad", "reshape", "reshape_", "reshape_grad", "reshape_grad_",
                     "flatten", "flatten_grad", "slice", "slice_grad", "unbind", "stack", "split", "concat",
                     "concat_grad", "copy_", "clone", "contiguous", "_unsafe_view", "view", "as_strided",
                     "permute", "t", "unsqueeze_", "squeeze_"), "layout"),
    **dict.fromkeys(("relu6", "relu6_", "relu6_grad", "relu6_grad_", "pfc_bias_act", "pfc_bias_act_grad",
                     "pfc_bias_residual", "pfc_bias_residual_grad", "hardtanh", "hardtanh_", "hardtanh_backward"),
                    "bias_activation"),
    **dict.fromkeys(("dropout", "dropout_", "dropout_grad", "multiply", "multiply_grad", "bernoulli_",
                     "take_along_axis", "take_along_axis_grad", "pfc_gather_tokens", "pfc_gather_tokens_grad",
                     "argsort", "gather", "scatter_add_",
                     "tile", "tile_grad", "uniform", "rand"), "drop_path_masking"),
    **dict.fromkeys(("adamw_", "momentum_", "sgd_", "squared_l2_norm", "multiply_", "sqrt", "sqrt_", "lerp_",
                     "addcdiv_", "addcmul_", "div", "div_", "linalg_vector_norm", "clamp", "_foreach_mul_",
                     "_foreach_add_", "_foreach_lerp_", "_foreach_addcmul_", "_foreach_addcdiv_",
                     "_foreach_sqrt", "_foreach_div_", "_foreach_norm"), "optimizer"),
    **dict.fromkeys(("add", "add_", "add_grad", "add_n", "mul", "mul_", "sum", "fill_", "full", "full_like",
                     "scale", "scale_", "zero_"), "elementwise"),
}


def part_of(op_name: str) -> str:
    """The part of :data:`PARTS` an operator counts in (``pd_op.matmul_grad`` -> ``gemm``,
    ``aten::native_layer_norm`` -> ``layer_norm``, anything unknown -> ``other``)."""
    if op_name.startswith("Optimizer."):  # torch's optimizer ranges (step, zero_grad)
        return "optimizer"
    name = op_name.rsplit("::", 1)[-1].rsplit(".", 1)[-1]
    return _PART_OF.get(name, "other")


def parts_of(op_seconds: Mapping[str, float]) -> dict[str, float]:
    """Seconds of each part (every key of :data:`PARTS`) from seconds per operator name."""
    parts = dict.fromkeys(PARTS, 0.0)
    for name, seconds in op_seconds.items():
        parts[part_of(name)] += seconds
    return parts
