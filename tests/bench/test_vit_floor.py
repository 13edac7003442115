"""The ViT step's product count against a count by hand (vit_t: D 256, 12 blocks, 144 tokens)."""
from __future__ import annotations

import pytest

from paddle_pfc.bench.vit_floor import VitShape, floor_seconds, vit_gemm_flop, vit_step_gemm_flop

VIT_T = VitShape(embed_dim=256, depth=12, num_heads=8, num_patches=144, len_keep=144)


def test_forward_products_of_one_vit_t_image():
    # by hand, multiply-adds x 2: patch [144, 243] x [243, 256]; per block qkv [144, 256] x [256, 768],
    # 8 heads of [144, 32] x [32, 144] and [144, 144] x [144, 32], proj [144, 256] x [256, 256],
    # fc1 [144, 256] x [256, 1024] and fc2 back; feature [1, 36864] x [36864, 256] and [1, 256] x [256, 512]
    assert vit_gemm_flop(VIT_T, 1) == {
        "patch": 17_915_904,
        "qkv": 12 * 56_623_104,
        "attention": 12 * 8 * 2 * (2 * 144 * 32 * 144),
        "proj": 12 * 18_874_368,
        "mlp": 12 * 2 * 75_497_472,
        "feature": 18_874_368 + 262_144,
    }


def test_step_is_three_forwards_but_the_patch_convolution():
    forward = 17_915_904 + 12 * (56_623_104 + 21_233_664 + 18_874_368 + 150_994_944) + 19_136_512
    step = 3 * forward - 17_915_904
    assert vit_step_gemm_flop(VIT_T, 4) == pytest.approx(4 * step, rel=1e-15)
    assert floor_seconds(4 * step, 100.0) == pytest.approx(4 * step / 1e11)


def test_masking_shrinks_the_blocks_not_the_patch_or_feature_products():
    masked = VitShape(embed_dim=256, depth=12, num_heads=8, num_patches=144, len_keep=129)
    flop = vit_gemm_flop(masked, 2)
    assert flop["patch"] == 2 * 17_915_904 and flop["feature"] == 2 * 19_136_512
    assert flop["qkv"] == 2 * 12 * 2 * 129 * 256 * 768
    assert flop["attention"] == 2 * 12 * 8 * 2 * (2 * 129 * 32 * 129)
