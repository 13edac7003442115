"""The native transformer-block kernels (layer norm, bias add with ReLU6, scaled softmax) in a static
training program on CPU: values and gradients against float64 numpy, and the layers of
paddle_pfc.backbones.transformer_layers against Paddle's own ops."""
from __future__ import annotations

import numpy as np
import paddle
import pytest
from paddle.autograd.ir_backward import grad as pir_grad

from paddle_pfc.backbones.transformer_layers import LayerNorm, Linear, scaled_softmax
from paddle_pfc.kernels import transformer_ops

pytestmark = pytest.mark.skipif(transformer_ops.kernels() is None, reason="native kernels not built")
SHAPE = (3, 7, 48)  # 21 rows: the column sums cross no 64-row chunk; ROWS_SHAPE crosses several
ROWS_SHAPE = (2, 150, 24)


def _run(build, feed: dict, names: list[str]) -> list[np.ndarray]:
    """Outputs of ``build(inputs) -> (out, loss)`` and d loss / d each input, in one static program."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        inputs = []
        for name in names:
            value = paddle.static.data(name, feed[name].shape, "float32")
            value.stop_gradient = False
            inputs.append(value)
        upstream = paddle.static.data("upstream", feed["upstream"].shape, "float32")
        out = build(*inputs)
        grads = pir_grad(paddle.sum(out * upstream), inputs)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    return exe.run(main, feed=feed, fetch_list=[out, *grads])


def _layer_norm64(x, g, b, eps, up):
    """Forward and the three gradients of sum(layer_norm(x) * up), float64."""
    mean = x.mean(-1, keepdims=True)
    inv = 1.0 / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + eps)
    xhat = (x - mean) * inv
    h = up * g
    dx = inv * (h - h.mean(-1, keepdims=True) - xhat * (h * xhat).mean(-1, keepdims=True))
    rows = (-1, x.shape[-1])
    return xhat * g + b, dx, (up * xhat).reshape(rows).sum(0), up.reshape(rows).sum(0)


@pytest.mark.parametrize("shape", [SHAPE, ROWS_SHAPE])
def test_layer_norm_matches_float64(shape, static_mode):
    rng = np.random.default_rng(shape[1])
    d = shape[-1]
    feed = {"x": (rng.standard_normal(shape) * 3 + 1).astype(np.float32),
            "g": rng.uniform(0.5, 1.5, d).astype(np.float32), "b": rng.standard_normal(d).astype(np.float32),
            "upstream": rng.standard_normal(shape).astype(np.float32)}
    got = _run(lambda x, g, b: transformer_ops.layer_norm(x, g, b, 1e-5), feed, ["x", "g", "b"])
    want = _layer_norm64(*(feed[k].astype(np.float64) for k in ("x", "g", "b")), 1e-5,
                         feed["upstream"].astype(np.float64))
    for value, reference in zip(got, want):
        np.testing.assert_allclose(value, reference, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("relu6", [False, True])
def test_bias_act_matches_float64(relu6, static_mode):
    rng = np.random.default_rng(int(relu6))
    c = ROWS_SHAPE[-1]
    x = (rng.standard_normal(ROWS_SHAPE) * 4).astype(np.float32)
    feed = {"x": x, "b": rng.standard_normal(c).astype(np.float32),
            "upstream": rng.standard_normal(ROWS_SHAPE).astype(np.float32)}
    out, dx, db = _run(lambda x, b: transformer_ops.bias_act(x, b, relu6), feed, ["x", "b"])
    pre = x.astype(np.float64) + feed["b"]
    want = np.clip(pre, 0.0, 6.0) if relu6 else pre
    passes = (pre > 0) & (pre < 6) if relu6 else np.ones_like(pre, bool)
    want_dx = np.where(passes, feed["upstream"].astype(np.float64), 0.0)
    if relu6:
        assert 0 < passes.mean() < 1  # both sides of the clip are exercised
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(dx, want_dx.astype(np.float32))
    np.testing.assert_allclose(db, want_dx.reshape(-1, c).sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [SHAPE, ROWS_SHAPE])
def test_bias_residual_matches_float64(shape, static_mode):
    rng = np.random.default_rng(23)
    feed = {"x": rng.standard_normal(shape).astype(np.float32), "h": rng.standard_normal(shape).astype(np.float32),
            "bias": rng.standard_normal(shape[-1]).astype(np.float32),
            "keep": np.array([0.0, 1 / 0.9, 1 / 0.9][:shape[0]], np.float32),
            "upstream": rng.standard_normal(shape).astype(np.float32)}
    def build(x, h, bias):
        return transformer_ops.bias_residual(x, h, bias, paddle.static.data("keep", [shape[0]], "float32"))

    out, dx, dh, db = _run(build, feed, ["x", "h", "bias"])
    x, h, bias, up = (feed[name].astype(np.float64) for name in ("x", "h", "bias", "upstream"))
    factor = feed["keep"].astype(np.float64).reshape(-1, 1, 1)
    np.testing.assert_allclose(out, x + factor * (h + bias), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(dx, up, rtol=0, atol=0)
    np.testing.assert_allclose(dh, factor * up, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(db, (factor * up).reshape(-1, shape[-1]).sum(0), rtol=1e-5, atol=1e-5)


def test_scaled_softmax_matches_float64(static_mode):
    rng = np.random.default_rng(5)
    shape = (2, 3, 9, 129)
    x = (rng.standard_normal(shape) * 20).astype(np.float32)
    feed = {"x": x, "upstream": rng.standard_normal(shape).astype(np.float32)}
    scale = 32 ** -0.5
    out, dx = _run(lambda x: transformer_ops.scaled_softmax(x, scale), feed, ["x"])
    z = x.astype(np.float64) * scale
    e = np.exp(z - z.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    up = feed["upstream"].astype(np.float64)
    want_dx = scale * p * (up - (up * p).sum(-1, keepdims=True))
    np.testing.assert_allclose(out, p, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(dx, want_dx, rtol=1e-4, atol=1e-6)


def _layers_program(native: bool):
    """sum(softmax(relu6-Linear(LayerNorm(x))) * upstream) and its gradients, native or Paddle's ops."""
    paddle.seed(3)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [2, 5, 16], "float32")
        x.stop_gradient = False
        upstream = paddle.static.data("upstream", [2, 5, 24], "float32")
        norm, linear = LayerNorm(16, epsilon=1e-5), Linear(16, 24, relu6=True)
        for layer in (norm, linear):
            layer.train() if native else layer.eval()
        out = scaled_softmax(linear, linear(norm(x)), 0.7)
        params = [x, norm.weight, norm.bias, linear.weight, linear.bias]
        grads = pir_grad(paddle.sum(out * upstream), params)
    names = [op.name() for op in main.global_block().ops]
    return main, startup, [out, *grads], names


def test_layers_build_native_ops_in_training_and_match_paddles(static_mode):
    rng = np.random.default_rng(9)
    feed = {"x": rng.standard_normal((2, 5, 16)).astype(np.float32),
            "upstream": rng.standard_normal((2, 5, 24)).astype(np.float32)}
    results = {}
    for native in (True, False):
        main, startup, fetch, names = _layers_program(native)
        for op in ("pfc_layer_norm", "pfc_bias_act", "pfc_scaled_softmax"):
            assert any(op in name for name in names) == native, names
        exe = paddle.static.Executor(paddle.CPUPlace())
        scope = paddle.static.Scope()
        with paddle.static.scope_guard(scope):
            exe.run(startup)
            results[native] = exe.run(main, feed=feed, fetch_list=fetch)
    for got, want in zip(results[True], results[False]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_linear_residual_native_and_paddles_agree(static_mode):
    """x + keep * Linear(h), keep a drop-path factor a sample: one pfc_bias_residual after the product
    in training, Paddle's Linear, multiply and add otherwise; the same values and gradients."""
    from paddle_pfc.backbones.transformer_layers import Linear, linear_residual

    rng = np.random.default_rng(29)
    feed = {"x": rng.standard_normal((3, 5, 8)).astype(np.float32),
            "h": rng.standard_normal((3, 5, 12)).astype(np.float32),
            "keep": np.array([1 / 0.7, 0.0, 1 / 0.7], np.float32),
            "upstream": rng.standard_normal((3, 5, 8)).astype(np.float32)}
    results = {}
    for native in (True, False):
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            paddle.seed(5)
            linear = Linear(12, 8)
            linear.train() if native else linear.eval()
            x, h = (paddle.static.data(name, feed[name].shape, "float32") for name in ("x", "h"))
            x.stop_gradient = h.stop_gradient = False
            out = linear_residual(linear, x, h, paddle.static.data("keep", [3], "float32"))
            params = [x, h, linear.weight, linear.bias]
            grads = pir_grad(paddle.sum(out * paddle.static.data("upstream", [3, 5, 8], "float32")), params)
        names = [op.name() for op in main.global_block().ops]
        assert ("custom_op.pfc_bias_residual" in names) == native, names
        exe = paddle.static.Executor(paddle.CPUPlace())
        with paddle.static.scope_guard(paddle.static.Scope()):
            exe.run(startup)
            results[native] = exe.run(main, feed=feed, fetch_list=[out, *grads])
    for got, want in zip(results[True], results[False]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(results[True][0][1], feed["x"][1])  # a dropped sample: the residual alone


def test_gather_tokens_matches_numpy(static_mode):
    rng = np.random.default_rng(31)
    index = np.stack([rng.permutation(7)[:5], [6, 6, 0, 1, 2]])  # the second sample picks token 6 twice
    feed = {"x": rng.standard_normal((2, 7, 16)).astype(np.float32),
            "upstream": rng.standard_normal((2, 5, 16)).astype(np.float32)}

    def build(x):
        return transformer_ops.gather_tokens(x, paddle.static.data("index", [2, 5], "int64"))

    out, dx = _run(build, {**feed, "index": index}, ["x"])
    np.testing.assert_array_equal(out, np.take_along_axis(feed["x"], index[:, :, None], axis=1))
    want = np.zeros((2, 7, 16))
    for n in range(2):
        np.add.at(want[n], index[n], feed["upstream"][n].astype(np.float64))
    np.testing.assert_allclose(dx, want, rtol=1e-6, atol=1e-6)


def test_bfloat16_matmul_matches_float64_of_rounded_operands(static_mode):
    """Forward and both gradients: float64 products of the bfloat16-rounded operands (d out rounded
    too, as the gradient products read it), up to float32 summation."""
    from paddle_pfc.kernels import onednn_ops
    from tests.reference import round_bfloat16

    reason = onednn_ops.bfloat16_unsupported()
    if reason is not None:
        pytest.skip(f"no native bfloat16 here: {reason}")
    rng = np.random.default_rng(11)
    feed = {"x": rng.standard_normal((3, 10, 40)).astype(np.float32),
            "w": rng.standard_normal((40, 24)).astype(np.float32),
            "upstream": rng.standard_normal((3, 10, 24)).astype(np.float32)}
    out, dx, dw = _run(transformer_ops.bfloat16_matmul, feed, ["x", "w"])
    x, w, up = (round_bfloat16(feed[k]) for k in ("x", "w", "upstream"))
    np.testing.assert_allclose(out, x @ w, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(dx, up @ w.T, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(dw, x.reshape(-1, 40).T @ up.reshape(-1, 24), rtol=1e-5, atol=1e-4)
    # and not float32's: the rounding shows
    assert np.abs(out - feed["x"].astype(np.float64) @ feed["w"]).max() > 1e-3


def test_use_bfloat16_convolutions_sets_a_vits_block_linears(static_mode):
    """train.amp=bf16's switch reaches a ViT: its blocks' Linears multiply in bfloat16 in the training
    program (pylayer regions of oneDNN products), its attention and feature Linears stay float32."""
    from paddle_pfc.backbones.native_layers import use_bfloat16_convolutions
    from paddle_pfc.backbones.vit import VisionTransformer
    from paddle_pfc.kernels import onednn_ops

    if onednn_ops.bfloat16_unsupported() is not None:
        pytest.skip("no native bfloat16 here")
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        net = VisionTransformer(32, 2, 8, embedding_size=8)
        net.train()
        assert use_bfloat16_convolutions(net) == 2 * 4  # qkv, proj, fc1, fc2 per block
        net(paddle.static.data("x", [2, 3, 112, 112], "float32"))
    names = [op.name() for op in main.global_block().ops]
    assert names.count("pd_op.pylayer") == 8 and names.count("custom_op.pfc_attention") == 2
    assert names.count("pd_op.matmul") == 2  # the feature's


def _attention64(qkv, heads, scale, up):
    """Forward and d qkv of sum(attention(qkv) * up), float64, head by head."""
    n, t, three_d = qkv.shape
    dim = three_d // 3
    d = dim // heads
    out, grad = np.zeros((n, t, dim)), np.zeros_like(qkv)
    for h in range(heads):
        cols = slice(h * d, (h + 1) * d)
        q, k, v = qkv[:, :, cols], qkv[:, :, dim:][:, :, cols], qkv[:, :, 2 * dim:][:, :, cols]
        s = scale * q @ k.transpose(0, 2, 1)
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        out[:, :, cols] = p @ v
        do = up[:, :, cols]
        dp = do @ v.transpose(0, 2, 1)
        ds = scale * p * (dp - (dp * p).sum(-1, keepdims=True))
        grad[:, :, cols] = ds @ k
        grad[:, :, dim:][:, :, cols] = ds.transpose(0, 2, 1) @ q
        grad[:, :, 2 * dim:][:, :, cols] = p.transpose(0, 2, 1) @ do
    return out, grad


def test_attention_matches_float64(static_mode):
    from paddle_pfc.kernels import native_ops

    if native_ops.blas_library() is None:
        pytest.skip("no MKL in this wheel")
    rng = np.random.default_rng(13)
    heads, scale = 4, 8 ** -0.5
    feed = {"qkv": (rng.standard_normal((3, 11, 3 * 32)) * 2).astype(np.float32),
            "upstream": rng.standard_normal((3, 11, 32)).astype(np.float32)}
    out, grad = _run(lambda qkv: transformer_ops.attention(qkv, heads, scale), feed, ["qkv"])
    qkv64, up64 = feed["qkv"].astype(np.float64), feed["upstream"].astype(np.float64)
    want_out, want_grad = _attention64(qkv64, heads, scale, up64)
    np.testing.assert_allclose(out, want_out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-4, atol=1e-5)


# (N, T, heads, head dim): vit_t's real shape (T = 144 patches less the 10 % masked); one token, a T
# of 16 and Ts not a multiple of 16 (the probabilities' rows are padded to 16), one head, batch 1;
# head dims 16 to 64.
ATTENTION_SHAPES = [(16, 129, 8, 32), (1, 129, 1, 32), (1, 1, 1, 64), (2, 16, 3, 48), (3, 33, 2, 16),
                    (2, 23, 1, 24)]


@pytest.mark.parametrize("n, t, heads, d", ATTENTION_SHAPES)
def test_attention_matches_float64_at_vit_shapes(static_mode, n, t, heads, d):
    from paddle_pfc.kernels import native_ops

    if native_ops.blas_library() is None:
        pytest.skip("no MKL in this wheel")
    rng = np.random.default_rng(t * 100 + d)
    scale = d ** -0.5
    feed = {"qkv": (rng.standard_normal((n, t, 3 * heads * d)) * 2).astype(np.float32),
            "upstream": rng.standard_normal((n, t, heads * d)).astype(np.float32)}
    out, grad = _run(lambda qkv: transformer_ops.attention(qkv, heads, scale), feed, ["qkv"])
    want_out, want_grad = _attention64(feed["qkv"].astype(np.float64), heads, scale,
                                       feed["upstream"].astype(np.float64))
    np.testing.assert_allclose(out, want_out, rtol=1e-4, atol=2e-5)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-4, atol=5e-5)


def test_attention_layer_native_and_paddles_agree(static_mode):
    from paddle_pfc.backbones.transformer_layers import attention

    rng = np.random.default_rng(17)
    feed = {"qkv": rng.standard_normal((2, 9, 48)).astype(np.float32),
            "upstream": rng.standard_normal((2, 9, 16)).astype(np.float32)}
    results = {}
    for native in (True, False):
        layer = paddle.nn.Layer()
        layer.train() if native else layer.eval()
        results[native] = _run(lambda qkv: attention(layer, qkv, 2, 0.3), feed, ["qkv"])
    for got, want in zip(results[True], results[False]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
