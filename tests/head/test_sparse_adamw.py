"""The class centers' sparse AdamW (``paddle.optimizer.AdamW`` through LargeScaleClassifier + minimize)
on 1, 2 and 3 real ranks against torch's AdamW step in float64, each kept row with its own step count
(:mod:`helpers.adamw_runs`): on the native CPU kernels' backend, on Paddle's kernels and on the fused
backend's Python path, with float32 and bfloat16 centers."""
from __future__ import annotations

import pytest

from helpers.adamw_runs import check_adamw_case
from helpers.head_runs import adamw_cases, load_ranks, run_world

MULTI = pytest.mark.multirank


@pytest.mark.parametrize("native,world_size", [(True, 1), pytest.param(True, 2, marks=MULTI),
                                               pytest.param(True, 3, marks=MULTI), (False, 1),
                                               pytest.param(False, 2, marks=MULTI)],
                         ids=["native-1", "native-2", "native-3", "paddle_kernels-1", "paddle_kernels-2"])
def test_sparse_adamw_matches_reference(native, world_size, tmp_path_factory):
    out, cases = run_world(world_size, tmp_path_factory, tag=f"adamw_native{int(native)}", cases_for=adamw_cases,
                           native=native)
    for case in cases:
        check_adamw_case(case, load_ranks(out, case["name"], world_size), world_size)


def test_sparse_adamw_on_the_fused_backend_matches_reference(tmp_path_factory):
    out, cases = run_world(1, tmp_path_factory, tag="adamw_fused", cases_for=adamw_cases, kernels="fused")
    for case in cases:
        check_adamw_case(case, load_ranks(out, case["name"], 1), 1)


def test_the_rule_is_read_from_adamw_and_what_it_cannot_apply_is_refused(static_mode):
    import paddle

    import paddle_pfc
    from paddle_pfc.head.sparse_update import CenterUpdateRule

    rule = CenterUpdateRule.from_optimizer(paddle.optimizer.AdamW(0.1, beta1=0.8, beta2=0.99, epsilon=1e-6,
                                                                  weight_decay=0.05))
    assert (rule.kind, rule.weight_decay, rule.adamw.beta1, rule.adamw.beta2, rule.adamw.epsilon) == \
        ("adamw", 0.05, 0.8, 0.99, 1e-6)
    with pytest.raises(ValueError, match="optimizer amsgrad: the class centers' AdamW has no AMSGrad"):
        CenterUpdateRule.from_optimizer(paddle.optimizer.AdamW(0.1, amsgrad=True))
    with pytest.raises(ValueError, match="supports paddle.optimizer.SGD, .*AdamW, got Adam"):
        CenterUpdateRule.from_optimizer(paddle.optimizer.Adam(0.1))
    x = paddle.static.data("x", [4, 8], "float32")
    y = paddle.static.data("y", [4], "int64")
    head = paddle_pfc.LargeScaleClassifier(x, y, 0, 1, 20, embedding_size=8, momentum_dtype="int8")
    with pytest.raises(ValueError, match="momentum_dtype='int8' with optimizer AdamW"):
        paddle_pfc.minimize(paddle.optimizer.AdamW(0.1), head.output_dict["loss"])
