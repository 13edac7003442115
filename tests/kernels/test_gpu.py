"""The fused-kernel contracts and the head's exactness on a GPU place (``pytest -m gpu``).

The same checks as ``fused_kernel_runs.py`` (Paddle's real ``class_center_sample`` /
``margin_cross_entropy`` against the numpy oracles, 1 and 2 ranks), the real kernels against
their emulations on identical inputs, and ``test_classifier`` / ``test_mixed_precision``'s cases
on both backends of a GPU (fused with the real kernels, composite with Paddle's GPU kernels). Every
test here skips, naming the reason, where Paddle sees no GPU.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from helpers import fused_kernel_runs
from helpers.head_runs import check_case, fused_cases, load_ranks, mixed_cases, run_world


@pytest.mark.gpu
def test_real_kernels_match_oracles_one_rank(tmp_path_factory):
    out, cases = fused_kernel_runs.run_world(1, tmp_path_factory, kernels="real")
    fused_kernel_runs.check_margin_cases(out, cases, 1)
    fused_kernel_runs.check_sample_cases(out, cases, 1)


@pytest.mark.gpu(2)
@pytest.mark.multirank
def test_real_kernels_match_oracles_two_ranks(tmp_path_factory):
    out, cases = fused_kernel_runs.run_world(2, tmp_path_factory, kernels="real")
    fused_kernel_runs.check_margin_cases(out, cases, 2)
    fused_kernel_runs.check_sample_cases(out, cases, 2)


@pytest.mark.gpu
def test_real_and_emulated_kernels_agree(static_mode):
    """Identical inputs through both implementations on the GPU: the same remapped labels and
    positives, and the same loss, softmax and gradient up to float32 rounding."""
    import paddle

    from paddle_pfc.kernels import fused_kernels
    from paddle_pfc.kernels.collectives import CollectiveChain

    rng = np.random.default_rng(5)
    cos = np.tanh(rng.standard_normal((6, 11))).astype(np.float32)
    labels = rng.integers(0, 11, 6).astype(np.int64)
    results = {}
    for emulated in (False, True):
        kernels = fused_kernels(emulated)
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            logits = paddle.static.data("logits", [6, 11], "float32")
            logits.stop_gradient = False
            label = paddle.static.data("label", [6], "int64")
            softmax, loss = kernels.margin_cross_entropy(logits, label, 0,
                                                         SimpleNamespace(m1=0.9, m2=0.4, m3=0.15, s=32.0),
                                                         CollectiveChain(1), return_softmax=True)
            (grad,) = paddle.static.gradients([paddle.sum(loss)], [logits])
            remapped, sampled = kernels.class_center_sample(label, 11, 4, 0, CollectiveChain(1), seed=7)
        exe = paddle.static.Executor(paddle.CUDAPlace(0))
        exe.run(startup)
        results[emulated] = exe.run(main, feed={"logits": cos, "label": labels},
                                    fetch_list=[softmax, loss, grad, remapped, sampled])
    real, emulated = results[False], results[True]
    for got, expected in zip(real[:3], emulated[:3]):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(real[3], emulated[3])
    positives = len(np.unique(labels))
    np.testing.assert_array_equal(real[4][:positives], emulated[4][:positives])


@pytest.mark.parametrize("world_size", [pytest.param(1, marks=pytest.mark.gpu),
                                        pytest.param(2, marks=[pytest.mark.gpu(2), pytest.mark.multirank])])
@pytest.mark.parametrize("kernels", ["fused", "composite"])
def test_head_matches_reference_on_gpus(world_size, kernels, tmp_path_factory):
    out, cases = run_world(world_size, tmp_path_factory, tag=f"gpu_{kernels}", kernels=kernels,
                                           native=False, cases_for=fused_cases, real=True)
    for case in cases:
        check_case(case, load_ranks(out, case["name"], world_size), world_size)


U_FP16 = 2.0**-11  # float16 keeps 11 significant bits; the bfloat16 bounds scaled to its u
FP16_STORAGE = {"loss": U_FP16, "rtol": U_FP16, "atol": 2e-5, "step": 4 * U_FP16}


def gpu_mixed_cases(world_size: int) -> list[dict]:
    """test_mixed_precision's cases plus float16 operands and storage with loss scaling."""
    cases = mixed_cases(world_size)
    cases.append(dict(cases[0], name="fp16_loss_scaled", dtype="float16", center_dtype="float16", seed=16,
                      loss_scaling={"init_loss_scaling": 1024.0}, tolerance=FP16_STORAGE))
    return cases


@pytest.mark.gpu
@pytest.mark.parametrize("kernels", ["fused", "composite"])
def test_mixed_precision_matches_reference_on_gpu(kernels, tmp_path_factory):
    out, cases = run_world(1, tmp_path_factory, tag=f"gpu_mixed_{kernels}", kernels=kernels,
                                           native=False, cases_for=gpu_mixed_cases, real=True)
    for case in cases:
        check_case(case, load_ranks(out, case["name"], 1), 1)
