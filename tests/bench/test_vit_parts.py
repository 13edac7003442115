"""A profiled ViT step's operators sorted into parts by name, Paddle's and torch's."""
from __future__ import annotations

import pytest

from paddle_pfc.bench.vit_parts import PARTS, part_of, parts_of


@pytest.mark.parametrize("name, part", [
    ("custom_op.pfc_attention_grad", "attention"), ("pd_op.matmul_grad", "gemm"),
    ("pylayer_instruction", "gemm"), ("aten::addmm", "gemm"),
    ("custom_op.pfc_scaled_softmax_grad", "softmax"), ("aten::_softmax", "softmax"),
    ("custom_op.pfc_layer_norm", "layer_norm"), ("aten::native_layer_norm_backward", "layer_norm"),
    ("pd_op.transpose_grad", "layout"), ("aten::copy_", "layout"),
    ("custom_op.pfc_bias_act_grad", "bias_activation"), ("aten::hardtanh_backward", "bias_activation"),
    ("custom_op.pfc_bias_residual_grad", "bias_activation"), ("custom_op.pfc_gather_tokens", "drop_path_masking"),
    ("pd_op.take_along_axis", "drop_path_masking"), ("pd_op.multiply_grad", "drop_path_masking"),
    ("pd_op.adamw_", "optimizer"), ("pd_op.multiply_", "optimizer"), ("Optimizer.step#AdamW.step", "optimizer"),
    ("pd_op.add_grad", "elementwise"), ("pd_op.something_new", "other"),
])
def test_part_of_names(name, part):
    assert part_of(name) == part


def test_parts_sum_every_operator_once():
    seconds = {"pd_op.matmul": 1.0, "pd_op.matmul_grad": 2.0, "pd_op.adamw_": 0.25, "pd_op.mystery": 0.5}
    parts = parts_of(seconds)
    assert list(parts) == list(PARTS)
    assert parts["gemm"] == 3.0 and parts["optimizer"] == 0.25 and parts["other"] == 0.5
    assert sum(parts.values()) == sum(seconds.values())
