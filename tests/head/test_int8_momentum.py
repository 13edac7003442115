"""The int8 momentum of class centers (``momentum_dtype='int8'``) through LargeScaleClassifier +
minimize on 1 and 2 real ranks, against the float64 reference and its quantization (see
:func:`helpers.head_runs.assert_int8_momentum`)."""
from __future__ import annotations

import pytest

from helpers.head_runs import check_case, int8_momentum_cases, int8_momentum_fused_cases, load_ranks, run_world

WORLD_SIZES = [1, pytest.param(2, marks=pytest.mark.multirank)]


@pytest.mark.parametrize("native", [True, False], ids=["native", "paddle_kernels"])
@pytest.mark.parametrize("world_size", WORLD_SIZES)
def test_int8_momentum_matches_reference(world_size, native, tmp_path_factory):
    out, cases = run_world(world_size, tmp_path_factory, tag=f"int8_native{int(native)}",
                           cases_for=int8_momentum_cases, native=native)
    for case in cases:
        check_case(case, load_ranks(out, case["name"], world_size), world_size)


def test_int8_momentum_on_the_fused_backend_matches_reference(tmp_path_factory):
    """The fused backend's Python path (emulated kernels on CPU) updates the int8 momentum alike
    (with the fused backend's bounds for bfloat16 operands)."""
    out, cases = run_world(1, tmp_path_factory, tag="int8_fused", cases_for=int8_momentum_fused_cases,
                           kernels="fused")
    for case in cases:
        check_case(case, load_ranks(out, case["name"], 1), 1)


def test_int8_momentum_is_refused_on_gpu_and_where_it_is_unknown(static_mode, monkeypatch):
    import paddle

    import paddle_pfc
    from paddle_pfc.utils import paddle_compat

    x = paddle.static.data("x", [4, 8], "float32")
    y = paddle.static.data("y", [4], "int64")
    with pytest.raises(ValueError, match="momentum_dtype must be one of .*int8, got 'int4'"):
        paddle_pfc.LargeScaleClassifier(x, y, 0, 1, 20, embedding_size=8, momentum_dtype="int4")
    monkeypatch.setattr(paddle_compat, "on_gpu", lambda: True)
    with pytest.raises(ValueError, match="momentum_dtype='int8': .*CPU programs only"):
        paddle_pfc.LargeScaleClassifier(x, y, 0, 1, 20, embedding_size=8, momentum_dtype="int8")


def test_config_key_reaches_the_head_and_gpu_is_refused(tmp_path):
    from launcher import REPO
    from paddle_pfc.engine.builder import check_supported
    from paddle_pfc.engine.config import ConfigError, load_config

    tiny = str(REPO / "tests" / "train_tiny.yaml")
    cfg = load_config(tiny, ["classifier.momentum_dtype=int8", f"train.output_dir={tmp_path}"])
    assert cfg.classifier.momentum_dtype == "int8"
    check_supported(cfg, gpu=False)
    with pytest.raises(ConfigError, match="classifier.momentum_dtype: 'int8' is implemented for CPU training only"):
        check_supported(cfg, gpu=True)
    assert load_config(tiny, [f"train.output_dir={tmp_path}"]).classifier.momentum_dtype is None
    with pytest.raises(ConfigError, match="classifier.momentum_dtype: must be one of .*int8; got 'int4'"):
        load_config(tiny, ["classifier.momentum_dtype=int4"])
