"""The native batch norm, alone and fused with the channel PReLU after it, against float64 numpy
and Paddle's batch_norm (+ prelu): in training outputs, every gradient, the running statistics; in
inference (native_inference) outputs; on NCHW tensors and (channels last) on NHWC ones."""
from __future__ import annotations

import contextlib

import numpy as np
import paddle
import pytest
from paddle.autograd.ir_backward import grad as pir_grad

from paddle_pfc.backbones.native_layers import (
    BatchNorm2D,
    PReLU,
    batch_norm_prelu,
    channels_last,
    to_channels_first,
    to_channels_last,
)
from reference import round_bfloat16 as _bfloat16

MOMENTUM, EPSILON = 0.9, 1e-5


def _reference(x, scale, bias, alpha, up):
    """float64 (out, dx, dscale, dbias, dalpha, running mean, running var) of
    sum(prelu(bn(x)) * up), running statistics from Paddle's initial 0 and 1."""
    x, up = x.astype(np.float64), up.astype(np.float64)
    axes = tuple(d for d in range(x.ndim) if d != 1)
    shape = [1, -1] + [1] * (x.ndim - 2)
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    inv_std = 1.0 / np.sqrt(var + EPSILON)
    xhat = (x - mean.reshape(shape)) * inv_std.reshape(shape)
    y = scale.reshape(shape) * xhat + bias.reshape(shape)
    if alpha is None:
        out, dy, dalpha = y, up, None
    else:
        a = alpha.astype(np.float64).reshape(shape)
        out, dy = np.where(y > 0, y, a * y), np.where(y > 0, up, a * up)
        dalpha = np.where(y > 0, 0.0, y * up).sum(axis=axes)
    dbias, dscale = dy.sum(axis=axes), (dy * xhat).sum(axis=axes)
    dx = (scale * inv_std).reshape(shape) * (dy - dy.mean(axis=axes, keepdims=True)
                                            - xhat * (dy * xhat).mean(axis=axes, keepdims=True))
    return out, dx, dscale, dbias, dalpha, (1 - MOMENTUM) * mean, MOMENTUM + (1 - MOMENTUM) * var


def _run(x, scale, bias, alpha, up, native: str, monkeypatch, steps: int = 1, bfloat16_output: bool = False,
         bfloat16_input: bool = False, nhwc: bool = False, prelu_slopes: int | None = None):
    """The same values from a static training program: native ('on') or Paddle's ops ('off');
    with ``bfloat16_output`` the native op writes bfloat16 (cast to float32 for the loss), with
    ``bfloat16_input`` it reads x cast to bfloat16; with ``nhwc`` the layers run channels last on
    x converted to NHWC (the results converted back). ``prelu_slopes``: the PReLU's parameter count
    (default one per channel)."""
    monkeypatch.setenv("PADDLE_PFC_NATIVE", native)
    channels = x.shape[1]
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        xv = paddle.static.data("x", list(x.shape), "float32")
        xv.stop_gradient = False
        upv = paddle.static.data("up", list(x.shape), "float32")
        norm = BatchNorm2D(channels, momentum=MOMENTUM, epsilon=EPSILON)
        prelu = PReLU(num_parameters=prelu_slopes or channels) if alpha is not None else None
        operand = paddle.cast(xv, "bfloat16") if bfloat16_input else xv
        if nhwc:
            with channels_last():
                out = to_channels_first(batch_norm_prelu(norm, prelu, to_channels_last(operand),
                                                         bfloat16_output=bfloat16_output))
        else:
            out = batch_norm_prelu(norm, prelu, operand, bfloat16_output=bfloat16_output)
        if bfloat16_output:
            out = paddle.cast(out, "float32")
        params = [xv, norm.weight, norm.bias] + ([prelu._weight] if prelu is not None else [])
        grads = pir_grad(paddle.sum(out * upv), params)
    ops = {op.name() for op in main.global_block().ops}
    exe = paddle.static.Executor(paddle.CPUPlace())
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        for param, value in ((norm.weight, scale), (norm.bias, bias)) + (((prelu._weight, alpha),) if prelu else ()):
            scope.find_var(param.name).get_tensor().set(value, paddle.CPUPlace())
        for _ in range(steps):
            values = exe.run(main, feed={"x": x, "up": up}, fetch_list=[out, *grads])
        running = [np.array(scope.find_var(v.name).get_tensor()) for v in (norm._mean, norm._variance)]
    if alpha is None:
        values.append(None)
    return ops, values + running


def _inputs(shape, seed, offset=0.0, spread=1.0):
    rng = np.random.default_rng(seed)
    channels = shape[1]
    x = (offset + spread * rng.standard_normal(shape)).astype(np.float32)
    up = rng.standard_normal(shape).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, channels).astype(np.float32)
    bias = rng.uniform(-0.5, 0.5, channels).astype(np.float32)
    alpha = rng.uniform(-0.3, 0.6, channels).astype(np.float32)
    return x, scale, bias, alpha, up


# planes of 1, 49 (blocks of 83 channels: 130 is not a multiple), 33, 4095 (one a block) and
# 5000 values
@pytest.mark.parametrize("nhwc", [False, True])
@pytest.mark.parametrize("shape", [[8, 5, 1, 1], [3, 130, 7, 7], [4, 6, 1, 33], [2, 3, 63, 65], [2, 2, 50, 100]])
@pytest.mark.parametrize("with_prelu", [False, True])
def test_native_batch_norm_matches_float64_and_paddle(shape, with_prelu, nhwc, static_mode, monkeypatch):
    x, scale, bias, alpha, up = _inputs(shape, seed=sum(shape) + with_prelu)
    alpha = alpha if with_prelu else None
    ops, got = _run(x, scale, bias, alpha, up, "on", monkeypatch, nhwc=nhwc)
    assert ("custom_op.pfc_to_nhwc" in ops) == nhwc, ops
    fused = "custom_op.pfc_batch_norm_prelu_" if with_prelu else "custom_op.pfc_batch_norm_"
    assert fused in ops and "pd_op.batch_norm_" not in ops and "custom_op.pfc_prelu" not in ops, ops
    paddle_ops, paddles = _run(x, scale, bias, alpha, up, "off", monkeypatch)
    assert "pd_op.batch_norm_" in paddle_ops and not any(n.startswith("custom_op.") for n in paddle_ops)
    want = _reference(x, scale, bias, alpha, up)
    names = ["out", "dx", "dscale", "dbias", "dalpha", "running mean", "running var"]
    for name, g, p, w in zip(names, got, paddles, want):
        if w is None:
            continue
        tolerance = 2e-5 * np.abs(w).max() + 1e-6
        if name in ("dscale", "dbias", "dalpha"):  # sums of N * H * W products
            tolerance = 1e-5 * np.abs(w).max() + 1e-5 * np.sqrt(x.size / x.shape[1])
        assert np.abs(g - w).max() <= tolerance, (name, np.abs(g - w).max(), tolerance)
        assert np.abs(p - w).max() <= 10 * tolerance, (name, "paddle", np.abs(p - w).max())


def _within_a_bfloat16_step(got, want, name):
    assert np.array_equal(got, _bfloat16(got)), f"{name} is not bfloat16"
    assert np.all(np.abs(got - want) <= 2.0**-8 * np.abs(want) + 1e-6), (name, np.max(np.abs(got - want)))
    assert np.mean(got == _bfloat16(want)) > 0.98, name  # off by a step only where float32 sits near a tie


@pytest.mark.parametrize("bfloat16_input, bfloat16_output, nhwc", [(False, True, False), (True, False, False),
                                                                    (True, True, False), (True, True, True)])
@pytest.mark.parametrize("with_prelu", [False, True])
def test_native_batch_norm_bfloat16_tensors(with_prelu, bfloat16_input, bfloat16_output, nhwc, static_mode,
                                            monkeypatch):
    """Between bfloat16 convolutions: a bfloat16 x (d x then bfloat16, float64's rounded) and / or a
    bfloat16 output (float64's rounded; its gradient arrives in bfloat16, the upstream rounded);
    everything else float64's for those values, to float32 accuracy."""
    x, scale, bias, alpha, up = _inputs([3, 20, 9, 7], seed=11 + with_prelu)
    x = _bfloat16(x).astype(np.float32)
    alpha = alpha if with_prelu else None
    ops, got = _run(x, scale, bias, alpha, up, "on", monkeypatch, bfloat16_output=bfloat16_output,
                    bfloat16_input=bfloat16_input, nhwc=nhwc)
    assert "custom_op.pfc_batch_norm_prelu_" in ops or "custom_op.pfc_batch_norm_" in ops, ops
    want = _reference(x, scale, bias, alpha, _bfloat16(up) if bfloat16_output else up)
    for name, g, w, rounded in zip(["out", "dx", "dscale", "dbias", "dalpha"], got, want,
                                   [bfloat16_output, bfloat16_input, False, False, False]):
        if w is None:
            continue
        if rounded:
            _within_a_bfloat16_step(g, w, name)
        else:
            tolerance = 2e-5 * np.abs(w).max() + 1e-5
            assert np.abs(g - w).max() <= tolerance, (name, np.abs(g - w).max(), tolerance)
    if bfloat16_output and not bfloat16_input:
        unrounded = _reference(x, scale, bias, alpha, up)[1]
        assert np.abs(got[1] - unrounded).max() > 2e-5 * np.abs(unrounded).max(), "the upstream was not rounded"


@pytest.mark.parametrize("nhwc", [False, True])
@pytest.mark.parametrize("with_prelu", [False, True])
def test_native_batch_norm_far_from_zero_and_running_statistics(with_prelu, nhwc, static_mode, monkeypatch):
    """A mean 10^4 times the spread: the output and every gradient as exact as float32 allows
    against float64 (the kernel normalises x - mean with the mean kept to float64 precision, so the
    mean's size costs nothing; x * gain + (bias - mean * gain) loses ~3e-4 of the output's scale here,
    and Paddle's own CPU op up to 18 % of d x with the PReLU); three steps of running statistics."""
    x, scale, bias, alpha, up = _inputs([4, 3, 9, 11], seed=5, offset=300.0, spread=0.03)
    alpha = alpha if with_prelu else None
    _, got = _run(x, scale, bias, alpha, up, "on", monkeypatch, steps=3, nhwc=nhwc)
    out, dx, dscale, dbias, dalpha, mean1, var1 = _reference(x, scale, bias, alpha, up)
    for name, g, w in zip(["out", "dx", "dscale", "dbias", "dalpha"], got, [out, dx, dscale, dbias, dalpha]):
        if w is not None:
            assert np.abs(g - w).max() <= 2e-6 * np.abs(w).max(), (name, np.abs(g - w).max() / np.abs(w).max())
    batch_mean, batch_var = mean1 / (1 - MOMENTUM), (var1 - MOMENTUM) / (1 - MOMENTUM)
    want_mean = batch_mean * (1 - MOMENTUM**3)  # from 0, three updates with the same batch
    want_var = MOMENTUM**3 + batch_var * (1 - MOMENTUM**3)
    np.testing.assert_allclose(got[5], want_mean, rtol=1e-6)
    np.testing.assert_allclose(got[6], want_var, rtol=1e-5)


def test_channels_last_with_one_prelu_slope(static_mode, monkeypatch):
    """Channels last, a PReLU with one slope for all channels (it cannot fuse) follows the native
    norm as its own NHWC op: the float64 values."""
    x, scale, bias, alpha, up = _inputs([3, 8, 5, 6], seed=9)
    alpha = np.full(1, 0.2, np.float32)
    ops, got = _run(x, scale, bias, alpha, up, "on", monkeypatch, nhwc=True, prelu_slopes=1)
    assert "custom_op.pfc_batch_norm_" in ops and "custom_op.pfc_batch_norm_prelu_" not in ops, ops
    want = _reference(x, scale, bias, np.full(8, 0.2, np.float32), up)
    for name, g, w in zip(["out", "dx", "dscale", "dbias"], got, want):
        assert np.abs(g - w).max() <= 2e-5 * np.abs(w).max() + 1e-5, name
    np.testing.assert_allclose(got[4], want[4].sum(keepdims=True), rtol=1e-5)  # the one slope's gradient


def test_channels_last_refuses_a_layer_without_its_native_op(static_mode, monkeypatch):
    """Within channels_last() a norm that would build Paddle's NCHW op (here in eval mode) raises,
    instead of normalising the wrong axis."""
    monkeypatch.setenv("PADDLE_PFC_NATIVE", "on")
    with paddle.static.program_guard(paddle.static.Program(), paddle.static.Program()):
        x = paddle.static.data("x", [2, 4, 4, 3], "float32")
        norm = BatchNorm2D(3)
        norm.eval()
        with channels_last(), pytest.raises(RuntimeError, match=r"BatchNorm2D: channels_last\(\) needs"):
            batch_norm_prelu(norm, None, x)


def test_eval_mode_and_global_stats_use_paddles_op(static_mode, monkeypatch):
    """Eval programs built outside native_inference() (exports), and a training layer told to use
    its running statistics, keep Paddle's batch_norm (an exported model needs no custom-op
    library)."""
    monkeypatch.setenv("PADDLE_PFC_NATIVE", "on")
    for configure in (lambda n: n.eval(), lambda n: setattr(n, "_use_global_stats", True)):
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [2, 3, 4, 4], "float32")
            norm, prelu = BatchNorm2D(3), PReLU(num_parameters=3)
            configure(norm)
            batch_norm_prelu(norm, prelu, x)
        ops = {op.name() for op in main.global_block().ops}
        assert "pd_op.batch_norm_" in ops and not any("pfc_batch_norm" in n for n in ops), ops


def test_native_batch_norm_rejects_bad_inputs(static_mode):
    from paddle_pfc.kernels import native_ops

    with paddle.static.program_guard(paddle.static.Program(), paddle.static.Program()):
        x = paddle.static.data("x", [2, 3, 4], "float32")
        per_channel = [paddle.static.data(name, [3], "float32") for name in ("s", "b", "m", "v")]
        native_ops.batch_norm(x, *per_channel, MOMENTUM, EPSILON)  # well formed: builds
        with pytest.raises(ValueError, match="alpha must be float32 \\[C\\] = \\[3\\] for x .*, got .* \\[4\\]"):
            native_ops.batch_norm(x, *per_channel, MOMENTUM, EPSILON, alpha=paddle.static.data("a", [4], "float32"))
        with pytest.raises(ValueError, match="x must be float32"):
            native_ops.batch_norm(paddle.static.data("h", [2, 3], "float16"), *per_channel, MOMENTUM, EPSILON)
        with pytest.raises(ValueError, match="scale must be float32 \\[C\\] = \\[4\\] for x \\[N, ..., C\\]"):
            native_ops.batch_norm(x, *per_channel, MOMENTUM, EPSILON, channels_last=True)
        native_ops.batch_norm_inference(x, *per_channel, EPSILON)  # well formed: builds
        with pytest.raises(ValueError, match="batch_norm_inference: x must be float32 \\[N, C, ...\\], got .*bfloat16"):
            native_ops.batch_norm_inference(paddle.cast(x, "bfloat16"), *per_channel, EPSILON)
        with pytest.raises(ValueError, match="batch_norm_inference: scale must be float32 \\[C\\] = \\[4\\]"):
            native_ops.batch_norm_inference(x, *per_channel, EPSILON, channels_last=True)


@pytest.mark.parametrize("nhwc", [False, True])
@pytest.mark.parametrize("with_prelu", [False, True])
def test_native_inference_batch_norm_matches_float64_and_paddle(with_prelu, nhwc, static_mode, monkeypatch):
    """Within native_inference() an eval-mode norm (with the PReLU after it) is one native op on the
    running statistics: float64 numpy's value, and Paddle's eval batch_norm (+ prelu) within
    float32 rounding; the running statistics are left as they are."""
    from paddle_pfc.backbones.native_layers import native_inference

    monkeypatch.setenv("PADDLE_PFC_NATIVE", "on")
    rng = np.random.default_rng(7)
    x = rng.normal(0.3, 2.0, (3, 5, 6, 7)).astype(np.float32)
    scale, bias = rng.uniform(-1.5, 1.5, 5).astype(np.float32), rng.normal(0, 1, 5).astype(np.float32)
    mean, var = rng.normal(0.5, 1.0, 5).astype(np.float32), rng.uniform(0.2, 3.0, 5).astype(np.float32)
    alpha = rng.uniform(-0.5, 0.8, 5).astype(np.float32)
    shape = [1, -1, 1, 1]
    y = (scale.astype(np.float64).reshape(shape) * (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + EPSILON)
         + bias.reshape(shape))
    expected = np.where(y > 0, y, alpha.reshape(shape) * y) if with_prelu else y
    outputs = []
    for native in (False, True):
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup), (native_inference() if native else contextlib.nullcontext()):
            xv = paddle.static.data("x", list(x.shape), "float32")
            norm = BatchNorm2D(5, momentum=MOMENTUM, epsilon=EPSILON)
            prelu = PReLU(num_parameters=5) if with_prelu else None
            norm.eval()
            if nhwc and native:
                with channels_last():
                    out = to_channels_first(batch_norm_prelu(norm, prelu, to_channels_last(xv)))
            else:
                out = batch_norm_prelu(norm, prelu, xv)
        ops = {op.name() for op in main.global_block().ops}
        op = "custom_op.pfc_batch_norm_prelu_inference" if with_prelu else "custom_op.pfc_batch_norm_inference"
        assert (op in ops) == native and ("pd_op.batch_norm_" in ops) != native, ops
        exe, scope = paddle.static.Executor(paddle.CPUPlace()), paddle.static.Scope()
        with paddle.static.scope_guard(scope):
            exe.run(startup)
            values = ((norm.weight, scale), (norm.bias, bias), (norm._mean, mean), (norm._variance, var))
            for param, value in values + (((prelu._weight, alpha),) if prelu else ()):
                scope.find_var(param.name).get_tensor().set(value, paddle.CPUPlace())
            outputs.append(exe.run(main, feed={"x": x}, fetch_list=[out])[0])
            np.testing.assert_array_equal(np.array(scope.find_var(norm._mean.name).get_tensor()), mean)
    paddles, native = outputs
    np.testing.assert_allclose(paddles, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(native, expected, rtol=1e-5, atol=1e-5)
    assert (expected < 0).any() and (expected > 0).any()
