"""The native channel PReLU (training programs on CPU) against Paddle's prelu and float64 numpy."""
from __future__ import annotations

import numpy as np
import paddle
import pytest
from paddle.autograd.ir_backward import grad as pir_grad

from paddle_pfc import native_ops
from paddle_pfc.backbones.prelu import PReLU


def _program(shape, native: bool):
    """(main, startup, x, alpha-param, out, dx, dalpha) for sum(prelu(x) * w)."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", shape, "float32")
        x.stop_gradient = False
        upstream = paddle.static.data("upstream", shape, "float32")
        layer = PReLU(num_parameters=shape[1], init=0.25)
        layer.train() if native else layer.eval()
        out = layer(x)
        dx, dalpha = pir_grad(paddle.sum(out * upstream), [x, layer._weight])
    op_names = [op.name() for op in main.global_block().ops]
    return main, startup, layer, out, dx, dalpha, op_names


@pytest.mark.parametrize("shape", [[3, 5, 7, 9], [4, 6, 1, 1], [2, 3, 17]])
def test_native_prelu_matches_paddle_and_float64(shape, static_mode):
    rng = np.random.default_rng(len(shape) * 7 + shape[1])
    x = rng.standard_normal(shape).astype(np.float32)
    x.reshape(-1)[::5] = 0.0  # x == 0 takes the alpha branch, as in Paddle
    upstream = rng.standard_normal(shape).astype(np.float32)
    alpha = rng.uniform(-0.5, 0.5, shape[1]).astype(np.float32)
    results = {}
    for native in (True, False):
        main, startup, layer, out, dx, dalpha, ops = _program(shape, native)
        assert any("pfc_prelu" in name for name in ops) == native, ops
        exe = paddle.static.Executor(paddle.CPUPlace())
        scope = paddle.static.Scope()
        with paddle.static.scope_guard(scope):
            exe.run(startup)
            scope.find_var(layer._weight.name).get_tensor().set(alpha, paddle.CPUPlace())
            results[native] = exe.run(main, feed={"x": x, "upstream": upstream}, fetch_list=[out, dx, dalpha])
    native_out, native_dx, native_da = results[True]
    paddle_out, paddle_dx, paddle_da = results[False]
    np.testing.assert_array_equal(native_out, paddle_out)
    np.testing.assert_array_equal(native_dx, paddle_dx)
    # float64 reference
    a = alpha.astype(np.float64).reshape([1, -1] + [1] * (len(shape) - 2))
    x64, up64 = x.astype(np.float64), upstream.astype(np.float64)
    np.testing.assert_array_equal(native_out, np.where(x64 > 0, x64, a * x64).astype(np.float32))
    np.testing.assert_allclose(native_dx, np.where(x64 > 0, up64, a * up64), rtol=1e-6, atol=0)
    reduce_axes = tuple(d for d in range(len(shape)) if d != 1)
    ref_da = np.where(x64 > 0, 0.0, x64 * up64).sum(axis=reduce_axes)
    scale = np.abs(x64 * up64).sum(axis=reduce_axes)
    assert np.all(np.abs(native_da - ref_da) <= 1e-6 * scale + 1e-7), (native_da, ref_da)
    assert np.all(np.abs(paddle_da - ref_da) <= 1e-5 * scale + 1e-7)


def test_eval_and_dynamic_mode_use_paddles_op(static_mode):
    """Exported and validation programs (eval mode) must not contain the custom op."""
    *_, ops = _program([2, 3, 4, 4], native=False)
    assert "pd_op.prelu" in ops and not any("pfc_prelu" in n for n in ops)


def test_native_prelu_rejects_bad_inputs(static_mode):
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [2, 3, 4], "float32")
        alpha = paddle.static.data("alpha", [4], "float32")
        out = native_ops.prelu(x, alpha)
    exe = paddle.static.Executor(paddle.CPUPlace())
    with pytest.raises(Exception):  # Paddle 3.3 re-raises custom-op errors as a bare std::exception
        exe.run(main, feed={"x": np.ones([2, 3, 4], np.float32), "alpha": np.ones([4], np.float32)},
                fetch_list=[out])
