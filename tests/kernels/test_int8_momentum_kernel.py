"""The int8 momentum update of kept center rows (native kernel and Paddle's ops) against a float64
numpy emulation of the same quantization, over several steps with rows kept and not kept.

Tolerances, from float32 rounding (u = 2**-24): the float32 momentum ``mu * q * s + (g + wd * w)``
takes four rounded operations, so it lies within ``8u * (|mu q s| + |g| + |wd w|)`` of its float64
value (``err_v``); the scale ``max|v| / 127`` within ``max_row(err_v) / 127 + 2u s`` (``err_s``).
A code ``v / s`` then lies within ``m = (err_v + |v / s| * err_s) / s + 2u * 127`` code units of
the float64 one: the int8 codes must be equal wherever the float64 ratio is farther than ``m``
from a rounding boundary (a half-integer), and within one elsewhere.
"""
from __future__ import annotations

import numpy as np
import pytest

U32 = 2.0**-24
ROWS, DIM, KEPT = 40, 24, 15


def quantize64(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Float64 row-wise absmax quantization: (unrounded codes v / s, scales s [rows, 1])."""
    scale = np.abs(v).max(axis=1, keepdims=True) / 127.0
    ratio = np.divide(v, scale, out=np.zeros_like(v), where=scale > 0)
    return ratio, scale


def emulate_step(w, codes, scale, grad, index, lr, mu, wd, nesterov):
    """One update of rows ``index`` in float64: (new w, unrounded codes, scales, err_v) of those rows."""
    w_rows = w[index].astype(np.float64)
    v = codes[index].astype(np.float64) * scale[index].astype(np.float64)
    g = grad.astype(np.float64) + wd * w_rows
    vel = mu * v + g
    new_w = w_rows - lr * ((g + mu * vel) if nesterov else vel)
    ratio, new_scale = quantize64(vel)
    err_v = 8 * U32 * (np.abs(mu * v) + np.abs(grad) + np.abs(wd * w_rows))
    return new_w, ratio, new_scale, err_v


def assert_codes(got_codes, got_scale, ratio, scale, err_v, what):
    err_s = err_v.max(axis=1, keepdims=True) / 127.0 + 2 * U32 * scale
    np.testing.assert_allclose(got_scale, scale, rtol=0, atol=float(err_s.max()), err_msg=what)
    safe_scale = np.where(scale > 0, scale, 1.0)
    margin = (err_v + np.abs(ratio) * err_s) / safe_scale + 2 * U32 * 127
    expected = np.clip(np.round(ratio), -127, 127)  # numpy rounds half to even
    distance = np.abs(np.abs(ratio - np.floor(ratio)) - 0.5)
    clear = distance > margin
    assert clear.mean() > 0.99, what  # the check is not vacuous
    np.testing.assert_array_equal(got_codes[clear], expected[clear], err_msg=what)
    assert np.abs(got_codes.astype(np.float64) - ratio).max() <= 0.5 + margin.max(), what


def _program(backend: str, center_dtype: str, mu: float, wd: float, nesterov: bool, grad_dtype: str = "float32"):
    import paddle

    from paddle_pfc.head.sparse_update import CenterUpdateRule, create_velocity, create_velocity_scale
    from paddle_pfc.kernels import native_ops
    from paddle_pfc.kernels.blockwise import PaddleBlockOps

    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        weight = paddle.static.create_parameter([ROWS, DIM], center_dtype, name="w",
                                                 default_initializer=paddle.nn.initializer.Constant(0.0))
        weight.stop_gradient = True
        velocity, scale = create_velocity(weight, "int8"), create_velocity_scale(weight)
        index = paddle.static.data("index", [KEPT], "int64")
        grad = paddle.static.data("grad", [KEPT, DIM], "float32")
        if grad_dtype == "bfloat16":  # the update takes a bfloat16 gradient as it is
            grad = paddle.cast(grad, "bfloat16")
        lr = paddle.static.data("lr", [1], "float32")
        rule = CenterUpdateRule(mu, nesterov, wd, 1.0)
        if backend == "native":
            native_ops.sparse_update_int8_(weight, velocity, scale, index, grad, lr, momentum=mu, nesterov=nesterov,
                                           weight_decay=wd, rescale=1.0)
        else:
            PaddleBlockOps().update_rows_(weight, velocity, index, paddle.gather(weight, index), grad, lr, rule,
                                          scale)
    return main, startup


@pytest.mark.parametrize("backend", ["paddle", "native"])
@pytest.mark.parametrize("nesterov", [False, True])
@pytest.mark.parametrize("center_dtype,grad_dtype", [("float32", "float32"), ("bfloat16", "float32"),
                                                     ("bfloat16", "bfloat16")])
def test_int8_momentum_update_matches_float64_emulation(backend, nesterov, center_dtype, grad_dtype, static_mode):
    import paddle

    from paddle_pfc.head.dtypes import convert, to_float32
    from paddle_pfc.kernels import native_ops

    if backend == "native" and native_ops.kernels() is None:
        pytest.skip("the native kernels are not built here")
    mu, wd, lr = 0.9, 5e-4, 0.1
    main, startup = _program(backend, center_dtype, mu, wd, nesterov, grad_dtype)
    rng = np.random.default_rng(7 + nesterov)
    exe = paddle.static.Executor(paddle.CPUPlace())
    with paddle.static.scope_guard(paddle.static.Scope()):
        exe.run(startup)
        scope = paddle.static.global_scope()
        read = lambda name: np.array(scope.find_var(name).get_tensor())  # noqa: E731
        w0 = rng.standard_normal((ROWS, DIM)).astype(np.float32)
        w0[0] = 0.0  # kept with a zero gradient at step 0: a zero momentum row (scale 0, codes 0)
        w0 = convert(w0, center_dtype)
        scope.find_var("w").get_tensor().set(w0, paddle.CPUPlace())
        for step in range(4):
            w, codes, scale = to_float32(read("w")), read("w_velocity"), read("w_velocity_scale")
            index = np.sort(rng.choice(ROWS, KEPT, replace=False)).astype(np.int64)
            if step == 0:
                index[0] = 0 if 0 not in index else index[0]
                index = np.sort(index)
            grad = (rng.standard_normal((KEPT, DIM)) * 10.0 ** rng.integers(-3, 1, (KEPT, 1))).astype(np.float32)
            if step == 0:
                grad[0] = 0.0
            exe.run(main, feed={"index": index, "grad": grad, "lr": np.array([lr], np.float32)})
            grad = to_float32(convert(grad, grad_dtype))  # the values the update took
            got_w, got_codes, got_scale = to_float32(read("w")), read("w_velocity"), read("w_velocity_scale")
            assert got_codes.dtype == np.int8 and got_scale.shape == (ROWS, 1)
            new_w, ratio, new_scale, err_v = emulate_step(w, codes, scale, grad, index, lr, mu, wd, nesterov)
            what = f"{backend} {center_dtype} nesterov={nesterov} step {step}"
            rtol = 2.0**-8 if center_dtype == "bfloat16" else 4 * U32
            np.testing.assert_allclose(got_w[index], new_w, rtol=rtol, atol=1e-7, err_msg=what)
            assert_codes(got_codes[index], got_scale[index], ratio, new_scale, err_v, what)
            untouched = np.setdiff1d(np.arange(ROWS), index)
            np.testing.assert_array_equal(read("w")[untouched], convert(w, center_dtype)[untouched])
            np.testing.assert_array_equal(got_codes[untouched], codes[untouched])
            np.testing.assert_array_equal(got_scale[untouched], scale[untouched])
            if step == 0:
                assert got_scale[0, 0] == 0.0 and not got_codes[0].any()
