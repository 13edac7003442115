"""The channels-last depthwise / grouped convolution (``native_ops.depthwise_conv2d``,
csrc/depthwise_ops.cc) against float64 numpy from the definition and against Paddle's own conv2d:
float32, bfloat16 products, bfloat16 tensors in and out; every group size it takes."""
from __future__ import annotations

import numpy as np
import paddle
import pytest
from paddle.autograd.ir_backward import grad as pir_grad

from paddle_pfc.kernels import native_build, native_ops
from reference import round_bfloat16

pytestmark = pytest.mark.skipif(native_build.mode() == "off", reason="PADDLE_PFC_NATIVE=off")


def _reference(x, w, up, stride, pad):
    """float64 (out, d x, d w) of sum(out * up) for NHWC ``x`` [N, H, W, C] and ``w`` [C, G, kh, kw]:
    output o reads inputs (o // G) * G + q, q < G."""
    n, h, wd, c = x.shape
    group, (kh, kw) = w.shape[1], w.shape[2:]
    oh, ow = (h + 2 * pad[0] - kh) // stride[0] + 1, (wd + 2 * pad[1] - kw) // stride[1] + 1
    xp = np.zeros((n, h + 2 * pad[0], wd + 2 * pad[1], c))
    xp[:, pad[0]:pad[0] + h, pad[1]:pad[1] + wd] = x
    dxp = np.zeros_like(xp)
    out, dw = np.zeros((n, oh, ow, c)), np.zeros(w.shape)
    first = np.arange(c) // group * group
    for q in range(group):
        for i in range(kh):
            for j in range(kw):
                window = (slice(None), slice(i, i + stride[0] * (oh - 1) + 1, stride[0]),
                          slice(j, j + stride[1] * (ow - 1) + 1, stride[1]))
                read = xp[window][..., first + q]  # lane o: the input output o reads through q
                out += read * w[:, q, i, j]
                dw[:, q, i, j] = (read * up).sum(axis=(0, 1, 2))
                contribution = up * w[:, q, i, j]
                for o in range(c):
                    dxp[window + (first[o] + q,)] += contribution[..., o]
    return out, dxp[:, pad[0]:pad[0] + h, pad[1]:pad[1] + wd], dw


def _gradients(x, w, up, convolve):
    """(out, d x, d w) as float32 numpy of sum(out * up), out = ``convolve(x, w)`` (float32) in a static program."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        xv = paddle.static.data("x", list(x.shape), "float32")
        xv.stop_gradient = False
        wv = paddle.static.data("w", list(w.shape), "float32")
        wv.stop_gradient = False
        upv = paddle.static.data("up", list(up.shape), "float32")
        out = convolve(xv, wv)
        dx, dw = pir_grad(paddle.sum(out * upv), [xv, wv])
    exe = paddle.static.Executor(paddle.CPUPlace())
    with paddle.static.scope_guard(paddle.static.Scope()):
        exe.run(startup)
        return exe.run(main, feed={"x": x, "w": w, "up": up}, fetch_list=[out, dx, dw])


def _run(x, w, up, stride, pad, bf16=False, bf16_tensors=False):
    """(out, d x, d w) of the kernel as float32 numpy; ``bf16_tensors``: x and the output bfloat16."""
    def convolve(xv, wv):
        xin = xv.astype("bfloat16") if bf16_tensors else xv
        out = native_ops.depthwise_conv2d(xin, wv, stride, pad, bf16=bf16, bf16_output=bf16_tensors)
        assert out.dtype == (paddle.bfloat16 if bf16_tensors else paddle.float32)
        return out.astype("float32") if bf16_tensors else out
    return _gradients(x, w, up, convolve)


CASES = [  # NHWC shape, channels a group, kernel, stride, padding
    ([2, 9, 8, 32], 1, (3, 3), (2, 2), (1, 1)),     # mobilefacenet's strided depthwise layers
    ([3, 7, 7, 20], 1, (7, 7), (1, 1), (0, 0)),     # its GDC; 20 channels: a partial vector
    ([2, 9, 9, 144], 2, (3, 3), (1, 1), (1, 1)),    # its 64 groups of 2: a block of 128 and one vector
    ([2, 6, 11, 40], 4, (3, 5), (2, 1), (2, 0)),    # odd shapes, padding wider than 1
    ([1, 5, 6, 16], 16, (2, 3), (1, 1), (2, 3)),    # one group of 16; padding wider than the kernel
    ([2, 5, 5, 8], 8, (3, 3), (1, 2), (1, 1)),      # fewer channels than a vector
]


def _data(shape, group, kernel, stride, pad, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal([shape[3], group, *kernel]).astype(np.float32)
    oh = (shape[1] + 2 * pad[0] - kernel[0]) // stride[0] + 1
    ow = (shape[2] + 2 * pad[1] - kernel[1]) // stride[1] + 1
    up = rng.standard_normal([shape[0], oh, ow, shape[3]]).astype(np.float32)
    return x, w, up


def _scales(x, w, up, stride, pad):
    """The same sums over |terms|: each result's float32 rounding bound is eps times its sum."""
    return _reference(np.abs(x), np.abs(w), np.abs(up), stride, pad)


@pytest.mark.parametrize("shape, group, kernel, stride, pad", CASES)
def test_float32_matches_float64_and_paddles_conv2d(shape, group, kernel, stride, pad, static_mode):
    x, w, up = _data(shape, group, kernel, stride, pad, seed=shape[3] + group)
    got = _run(x, w, up, stride, pad)
    want = _reference(x.astype(np.float64), w.astype(np.float64), up.astype(np.float64), stride, pad)
    terms = max(kernel[0] * kernel[1] * group, shape[0] * up.shape[1] * up.shape[2])
    for name, g, ref, scale in zip(("out", "d x", "d w"), got, want, _scales(x, w, up, stride, pad)):
        assert np.all(np.abs(g - ref) <= 2 * terms * np.finfo(np.float32).eps * scale + 1e-30), name
    # Paddle's own grouped conv2d (NCHW) on the same values, and its gradients
    paddles = _gradients(x, w, up, lambda xv, wv: paddle.nn.functional.conv2d(
        xv.transpose([0, 3, 1, 2]), wv, stride=stride, padding=pad, groups=shape[3] // group).transpose([0, 2, 3, 1]))
    for name, g, p in zip(("out", "d x", "d w"), got, paddles):
        np.testing.assert_allclose(g, p, rtol=1e-5, atol=1e-5 * np.abs(p).max(), err_msg=name)


@pytest.mark.parametrize("bf16_tensors", [False, True])
@pytest.mark.parametrize("shape, group, kernel, stride, pad", CASES[:4])
def test_bfloat16_products_round_operands_as_onednn_does(shape, group, kernel, stride, pad, bf16_tensors, static_mode):
    """With bf16, x, the weight and d out are rounded to bfloat16 before the float32 products (the
    reference rounds them likewise, then sums in float64); with bfloat16 tensors x arrives rounded
    and the output and d x leave rounded (one more bfloat16 rounding, 2^-9 relative)."""
    x, w, up = _data(shape, group, kernel, stride, pad, seed=3 * shape[3] + group)
    got = _run(x, w, up, stride, pad, bf16=True, bf16_tensors=bf16_tensors)
    want = _reference(round_bfloat16(x), round_bfloat16(w), round_bfloat16(up), stride, pad)
    unrounded = _reference(x.astype(np.float64), w.astype(np.float64), up.astype(np.float64), stride, pad)
    terms = max(kernel[0] * kernel[1] * group, shape[0] * up.shape[1] * up.shape[2])
    for name, g, ref, plain, scale in zip(("out", "d x", "d w"), got, want, unrounded, _scales(x, w, up, stride, pad)):
        stored = bf16_tensors and name != "d w"  # the output and d x are stored in bfloat16
        bound = 2 * terms * np.finfo(np.float32).eps * scale + (2.0 ** -8 * np.abs(ref) if stored else 0.0)
        assert np.all(np.abs(g - ref) <= bound + 1e-30), name
        # the rounding is real: the unrounded float64 result is further away than the bound allows
        assert np.abs(g - plain).max() > np.abs(g - ref).max(), name


def test_bad_inputs_name_the_problem(static_mode):
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [2, 5, 5, 24], "float32")
        with pytest.raises(ValueError, match=r"weight must be float32 \[C, G, kh, kw\] with G dividing 16"):
            native_ops.depthwise_conv2d(x, paddle.static.data("w3", [24, 3, 3, 3], "float32"), (1, 1), (1, 1))
        with pytest.raises(ValueError, match=r"weight must be .* got paddle.float32 \[12, 1, 3, 3\]"):
            native_ops.depthwise_conv2d(x, paddle.static.data("w12", [12, 1, 3, 3], "float32"), (1, 1), (1, 1))
        w = paddle.static.data("w", [24, 1, 3, 3], "float32")
        with pytest.raises(ValueError, match="x must be float32 \\[N, H, W, C\\], got paddle.bfloat16"):
            native_ops.depthwise_conv2d(x.astype("bfloat16"), w, (1, 1), (1, 1))
        with pytest.raises(ValueError, match="a bfloat16 output needs bf16 products"):
            native_ops.depthwise_conv2d(x, w, (1, 1), (1, 1), bf16_output=True)
        with pytest.raises(ValueError, match=r"x must be float32 or bfloat16 \[N, H, W, C\]"):
            native_ops.depthwise_conv2d(paddle.static.data("x3", [2, 5, 24], "float32"), w, (1, 1), (1, 1), bf16=True)
