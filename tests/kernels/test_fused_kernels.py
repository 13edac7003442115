"""The emulated fused kernels (``paddle_pfc.kernels.emulated``) against independent numpy oracles
of what Paddle's operator tests compute (``test_margin_cross_entropy_op.py``,
``test_class_center_sample_op.py``), extended to 1-3 ranks: many random cases per launched job."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.fused_kernel_runs import (
    ARCFACE,
    COMBINED,
    COSFACE,
    SPHEREFACE,
    check_margin_cases,
    check_sample_cases,
    margin_oracle,
    run_world,
    sample_cases,
)


def test_margin_oracle_gradient_is_the_derivative_of_its_loss():
    """The oracle's closed-form gradient against central differences of its own loss (float64)."""
    rng = np.random.default_rng(0)
    for margins, scale in ((ARCFACE, 4.0), (COMBINED, 2.0), (SPHEREFACE, 3.0), (COSFACE, 1.0)):
        cos = np.tanh(rng.standard_normal((3, 5)))
        labels, g = rng.integers(0, 5, 3), rng.uniform(0.5, 1.5, (3, 1))
        _, _, grad = margin_oracle(cos, labels, g, *margins, scale)
        numeric = np.zeros_like(cos)
        for i in range(3):
            for j in range(5):
                d = np.zeros_like(cos)
                d[i, j] = 1e-6
                up = np.sum(g * margin_oracle(cos + d, labels, g, *margins, scale)[0])
                down = np.sum(g * margin_oracle(cos - d, labels, g, *margins, scale)[0])
                numeric[i, j] = (up - down) / 2e-6
        np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-7)


WORLD_SIZES = [1, pytest.param(2, marks=pytest.mark.multirank), pytest.param(3, marks=pytest.mark.multirank)]


@pytest.mark.parametrize("world_size", WORLD_SIZES)
def test_margin_cross_entropy_matches_oracle(world_size, tmp_path_factory):
    check_margin_cases(*run_world(world_size, tmp_path_factory), world_size)


@pytest.mark.parametrize("world_size", WORLD_SIZES)
def test_class_center_sample_matches_oracle(world_size, tmp_path_factory):
    check_sample_cases(*run_world(world_size, tmp_path_factory), world_size)


# --- Paddle's real kernels through the production wrapper, as far as the CPU build goes ----------
def test_real_class_center_sample_one_rank_cpu_kernel_matches_oracle(tmp_path, static_mode):
    """``PaddleFusedKernels.class_center_sample`` (the GPU backend's call, same argument order) runs
    Paddle's CPU kernel here, which implements the one-rank contract: the same oracle checks."""
    from paddle_pfc.kernels.fused import PaddleFusedKernels
    from workers.fused_kernel_worker import run_sample

    cases = [c for c in sample_cases(1) if not c.get("fix_seed")]  # the CPU kernel's seed differs
    for case in cases:
        with paddle_scope():
            result = run_sample(case, 0, 1, PaddleFusedKernels())
        np.savez(tmp_path / f"{case['name']}.rank0.npz", **result)
    check_sample_cases(tmp_path, cases, 1)


def paddle_scope():
    import paddle

    return paddle.static.scope_guard(paddle.static.Scope())


def test_real_kernels_get_the_heads_arguments(static_mode, monkeypatch):
    """The fused head built with Paddle's real kernels (the GPU program; margin_cross_entropy has
    no CPU kernel, so it is built, not run): each op's attributes are the head's values."""
    import paddle

    import paddle_pfc
    from paddle_pfc.kernels.fused import PaddleFusedKernels

    monkeypatch.setattr("paddle_pfc.kernels.fused_kernels", lambda emulated: PaddleFusedKernels())
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [4, 8], "float32")
        y = paddle.static.data("y", [4], "int64")
        head = paddle_pfc.LargeScaleClassifier(x, y, 0, 1, 37, 0.9, 0.4, 0.15, scale=24.0, sample_ratio=0.3,
                                               embedding_size=8, kernels="fused")
    ops = {op.name(): op for op in main.global_block().ops}
    sample = ops["pd_op.class_center_sample"].attrs()
    assert (sample["num_classes"], sample["num_samples"], sample["ring_id"], sample["rank"], sample["nranks"],
            sample["fix_seed"]) == (head.num_local, head.num_sample, 0, 0, 1, False)
    margin = ops["pd_op.margin_cross_entropy"].attrs()
    assert (margin["ring_id"], margin["rank"], margin["nranks"], margin["return_softmax"]) == (0, 0, 1, False)
    np.testing.assert_allclose([margin["margin1"], margin["margin2"], margin["margin3"], margin["scale"]],
                               [0.9, 0.4, 0.15, 24.0], rtol=1e-7)
    # The kernel's label operand is the [N, 1] global target; its logits are float32 cosines.
    op = ops["pd_op.margin_cross_entropy"]
    assert op.operand_source(0).dtype == paddle.float32 and list(op.operand_source(1).shape) == [4, 1]
