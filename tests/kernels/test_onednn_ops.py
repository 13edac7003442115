"""oneDNN ops (paddle_pfc.kernels.onednn_ops): convolutions against Paddle's conv2d and float64
numpy, the backbones' training programs with them against PADDLE_PFC_NATIVE=off, and the bfloat16
matrix product against float64 of rounded operands."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import paddle
import pytest
from paddle.autograd.ir_backward import grad as pir_grad

from paddle_pfc.backbones import build_backbone
from paddle_pfc.backbones.native_layers import Conv2D
from paddle_pfc.kernels import onednn_ops
from reference import round_bfloat16 as _bfloat16

_ISA_AVX512_CORE = 0x27  # dnnl_cpu_isa_avx512_core's bits


@pytest.fixture(autouse=True)
def _need_onednn():
    if onednn_ops.kernels() is None:
        pytest.skip("oneDNN convolutions unavailable (PADDLE_PFC_NATIVE=off or build failed)")


def _patches(x, kernel, stride, pad):
    """float64 [N, OH, OW, C, kh, kw] windows of zero-padded ``x``."""
    n, c, h, w = x.shape
    xp = np.zeros((n, c, h + 2 * pad[0], w + 2 * pad[1]))
    xp[:, :, pad[0]:pad[0] + h, pad[1]:pad[1] + w] = x
    oh, ow = (h + 2 * pad[0] - kernel[0]) // stride[0] + 1, (w + 2 * pad[1] - kernel[1]) // stride[1] + 1
    out = np.empty((n, oh, ow, c, kernel[0], kernel[1]))
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            window = xp[:, :, i:i + stride[0] * (oh - 1) + 1:stride[0], j:j + stride[1] * (ow - 1) + 1:stride[1]]
            out[..., i, j] = window.transpose(0, 2, 3, 1)
    return out


def _reference(x, w, up, stride, pad, groups=1):
    """float64 out, d x and d weight of sum(conv(x, w) * up), straight from the definition, and the
    same sums of absolute terms (each result's rounding scale); ``groups``: each group of x's
    channels convolved with its own slice of w's outputs."""
    if groups > 1:
        cg, og = x.shape[1] // groups, w.shape[0] // groups
        parts = [_reference(x[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og], up[:, g * og:(g + 1) * og],
                            stride, pad) for g in range(groups)]
        axes = (1, 1, 0)  # out and d x along channels, d weight along outputs
        return tuple(tuple(np.concatenate([part[k][m] for part in parts], axis=axes[m]) for m in range(3))
                     for k in range(2))
    kernel = w.shape[2:]
    p = _patches(x, kernel, stride, pad)
    out = np.einsum("nhwcij,ocij->nohw", p, w)
    out_scale = np.einsum("nhwcij,ocij->nohw", np.abs(p), np.abs(w))
    dw = np.einsum("nohw,nhwcij->ocij", up, p)
    dw_scale = np.einsum("nohw,nhwcij->ocij", np.abs(up), np.abs(p))
    # d x: each window's share up . w, added back where the window read x
    n, c, h, wd = x.shape
    share = np.einsum("nohw,ocij->nhwcij", up, w)
    share_abs = np.einsum("nohw,ocij->nhwcij", np.abs(up), np.abs(w))
    dx = np.zeros((n, c, h + 2 * pad[0], wd + 2 * pad[1]))
    dx_scale = np.zeros_like(dx)
    oh, ow = out.shape[2:]
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            rows = slice(i, i + stride[0] * (oh - 1) + 1, stride[0])
            cols = slice(j, j + stride[1] * (ow - 1) + 1, stride[1])
            dx[:, :, rows, cols] += share[..., i, j].transpose(0, 3, 1, 2)
            dx_scale[:, :, rows, cols] += share_abs[..., i, j].transpose(0, 3, 1, 2)
    crop = (slice(None), slice(None), slice(pad[0], pad[0] + h), slice(pad[1], pad[1] + wd))
    return (out, dx[crop], dw), (out_scale, dx_scale[crop], dw_scale)


def _run_conv(x, weight, up, stride, pad, native: bool, bf16: bool = False, groups: int = 1,
              bf16_input: bool = False, bf16_output: bool = False, channels_last: bool = False):
    """out, dx, dw of sum(conv(x, weight) * up) in a static program: the oneDNN op (multiplying
    in bfloat16 with ``bf16``, on x cast to a bfloat16 tensor with ``bf16_input``, writing a
    bfloat16 output cast back to float32 with ``bf16_output``; with ``channels_last`` on NHWC
    tensors, x and the output converted by to_channels_last / to_channels_first) or Paddle's
    conv2d (nn.Conv2D). All in NCHW."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        xv = paddle.static.data("x", x.shape, "float32")
        xv.stop_gradient = False
        layer = paddle.nn.Conv2D(x.shape[1], weight.shape[0], weight.shape[2:], stride, pad, groups=groups,
                                 bias_attr=False)
        operand = paddle.cast(xv, "bfloat16") if bf16_input else xv
        if native:
            if channels_last:
                operand = onednn_ops.to_channels_last(operand)
            out = onednn_ops.conv2d(operand, layer.weight, stride, pad, bf16=bf16, groups=groups,
                                    bf16_output=bf16_output, channels_last=channels_last)
            if channels_last:
                assert list(out.shape)[-1] == weight.shape[0], out.shape
                out = onednn_ops.to_channels_first(out)
            out = paddle.cast(out, "float32") if bf16_output else out
        else:
            out = layer(xv)
        upv = paddle.static.data("up", out.shape, "float32")
        dx, dw = pir_grad(paddle.sum(out * upv), [xv, layer.weight])
    ops = [op.name() for op in main.global_block().ops]
    assert any("pfc_conv2d" in name for name in ops) == native, ops
    assert any(name in ("pd_op.conv2d", "pd_op.depthwise_conv2d") for name in ops) != native, ops
    exe = paddle.static.Executor(paddle.CPUPlace())
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        scope.find_var(layer.weight.name).get_tensor().set(weight, paddle.CPUPlace())
        return exe.run(main, feed={"x": x, "up": up}, fetch_list=[out, dx, dw])


CASES = [  # x shape, out channels, kernel, stride, padding
    ([2, 3, 9, 8], 5, (3, 3), (1, 1), (1, 1)),
    ([2, 4, 9, 9], 6, (3, 3), (2, 2), (1, 1)),    # iresnet's down-sampling conv2
    ([3, 5, 7, 7], 4, (1, 1), (1, 1), (0, 0)),    # mobilefacenet's 1x1 convs
    ([2, 6, 11, 7], 3, (1, 1), (2, 2), (0, 0)),   # iresnet's down-sampling shortcut, odd sizes
    ([1, 16, 13, 10], 32, (3, 3), (2, 2), (0, 0)),
    ([2, 3, 6, 11], 4, (3, 5), (2, 1), (2, 0)),   # rectangular kernel, unequal strides and padding
    ([4, 512, 24, 24], 8, (3, 3), (1, 1), (1, 1)),  # below AVX-512 on NHWC: d w from 3 chunks of patches (910 a chunk)
]


GROUPED_CASES = [  # x shape, out channels, kernel, stride, padding, groups
    ([2, 16, 9, 9], 16, (3, 3), (1, 1), (1, 1), 16),   # mobilefacenet's depthwise convolutions
    ([2, 32, 9, 8], 32, (3, 3), (2, 2), (1, 1), 32),   # ... down-sampling
    ([3, 16, 7, 7], 16, (7, 7), (1, 1), (0, 0), 16),   # ... its global depthwise head
    ([2, 3, 6, 11], 3, (3, 5), (2, 1), (2, 0), 3),     # odd shapes, few channels
    ([2, 8, 7, 7], 12, (3, 3), (1, 1), (1, 1), 4),     # grouped, two inputs and three outputs a group
]


@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("shape, out_c, kernel, stride, pad, groups",
                         [(*case, 1) for case in CASES] + GROUPED_CASES,
                         ids=[f"dense{i}" for i in range(len(CASES))]
                         + [f"grouped{i}" for i in range(len(GROUPED_CASES))])
def test_conv_matches_paddle_and_float64(shape, out_c, kernel, stride, pad, groups, channels_last, static_mode):
    """NCHW, or NHWC tensors (``channels_last``: oneDNN's kernels on them as they are)."""
    rng = np.random.default_rng(shape[1] * 31 + out_c + kernel[1])
    x = rng.standard_normal(shape).astype(np.float32)
    weight = rng.standard_normal([out_c, shape[1] // groups, *kernel]).astype(np.float32)
    oh = (shape[2] + 2 * pad[0] - kernel[0]) // stride[0] + 1
    ow = (shape[3] + 2 * pad[1] - kernel[1]) // stride[1] + 1
    up = rng.standard_normal([shape[0], out_c, oh, ow]).astype(np.float32)
    ours = _run_conv(x, weight, up, stride, pad, native=True, groups=groups, channels_last=channels_last)
    paddles = _run_conv(x, weight, up, stride, pad, native=False, groups=groups)
    refs, scales = _reference(x.astype(np.float64), weight.astype(np.float64), up.astype(np.float64), stride, pad,
                              groups)
    for name, got, theirs, ref, scale in zip(("out", "dx", "dw"), ours, paddles, refs, scales):
        assert got.shape == ref.shape and got.dtype == np.float32, name
        # float32 summation of terms whose absolute values add up to `scale`: a few ulps of it
        bound = 4 * np.finfo(np.float32).eps * scale + 1e-30
        assert np.all(np.abs(got - ref) <= bound), (name, np.max(np.abs(got - ref) / bound))
        assert np.all(np.abs(theirs - ref) <= bound), (name, "paddle")
        np.testing.assert_allclose(got, theirs, rtol=0, atol=float(np.max(2 * bound)))


def test_conv_below_avx512_matches_float64(static_mode):
    """oneDNN capped at AVX2 (``ONEDNN_MAX_CPU_ISA``, read at its first use: a fresh process), so
    that CPUs with AVX-512 also check what AVX2-only ones run: d w of dense NHWC convolutions from
    chunks of patches (csrc/onednn_ops.cc, WeightsGradientFromPatches)."""
    if onednn_ops.onednn_cpu_isa() & _ISA_AVX512_CORE != _ISA_AVX512_CORE:
        pytest.skip("oneDNN runs below AVX-512 here already: test_conv_matches_paddle_and_float64 covers it")
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k",
                          "test_conv_matches_paddle_and_float64 and True and dense"], env=env, capture_output=True,
                         text=True, cwd=Path(__file__).parent, timeout=600)
    summary = re.search(r"^(\d+) passed", run.stdout, re.MULTILINE)  # pytest -q: "7 passed, 64 deselected in ..."
    assert run.returncode == 0 and summary and int(summary.group(1)) == len(CASES), \
        run.stdout[-3000:] + run.stderr[-3000:]


def _need_bfloat16():
    reason = onednn_ops.bfloat16_unsupported()
    if reason is not None:
        pytest.skip(f"no native bfloat16 here: {reason}")


@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("shape, out_c, kernel, stride, pad, depthwise",
                         [(*case, False) for case in CASES[1:5]] + [(*GROUPED_CASES[0][:5], True),
                                                                    (*GROUPED_CASES[2][:5], True)])
def test_conv_bfloat16_products_match_float64_of_rounded_operands(shape, out_c, kernel, stride, pad, depthwise,
                                                                  channels_last, static_mode):
    """bf16=True: each product takes bfloat16-rounded operands — (x, w) forward, (d out, w) for
    d x, (x, d out) for d w — and sums in float32: float64 on the rounded operands within a few
    float32 ulps of the absolute sums, while the unrounded float64 result lies outside that. NCHW
    and NHWC tensors; dense and (stride-1, as mobilefacenet multiplies them in bfloat16)
    depthwise convolutions."""
    _need_bfloat16()
    rng = np.random.default_rng(shape[1] * 7 + out_c)
    # 16+ channels so that every case reaches oneDNN's blocked bfloat16 kernels
    shape = [shape[0], shape[1] * 4, *shape[2:]]
    groups = shape[1] if depthwise else 1
    x = rng.standard_normal(shape).astype(np.float32)
    weight = rng.standard_normal([out_c * 4, shape[1] // groups, *kernel]).astype(np.float32)
    oh = (shape[2] + 2 * pad[0] - kernel[0]) // stride[0] + 1
    ow = (shape[3] + 2 * pad[1] - kernel[1]) // stride[1] + 1
    up = rng.standard_normal([shape[0], out_c * 4, oh, ow]).astype(np.float32)
    ours = _run_conv(x, weight, up, stride, pad, native=True, bf16=True, groups=groups, channels_last=channels_last)
    rounded, scales = _reference(_bfloat16(x), _bfloat16(weight), _bfloat16(up), stride, pad, groups)
    exact, _ = _reference(x.astype(np.float64), weight.astype(np.float64), up.astype(np.float64), stride, pad, groups)
    for name, got, ref, unrounded, scale in zip(("out", "dx", "dw"), ours, rounded, exact, scales):
        assert got.shape == ref.shape and got.dtype == np.float32, name
        bound = 4 * np.finfo(np.float32).eps * scale + 1e-30
        assert np.all(np.abs(got - ref) <= bound), (name, np.max(np.abs(got - ref) / bound))
        assert np.any(np.abs(got - unrounded) > bound), (name, "no bfloat16 rounding seen")


@pytest.mark.parametrize("bf16_input, bf16_output, channels_last", [(True, False, False), (False, True, False),
                                                                  (True, True, False), (True, True, True)])
@pytest.mark.parametrize("shape, out_c, kernel, stride, pad", CASES[1:5])
def test_conv_bfloat16_tensors_match_their_float32_copies(shape, out_c, kernel, stride, pad, bf16_input, bf16_output,
                                                         channels_last, static_mode):
    """A bfloat16 x (from a native batch norm) and / or a bfloat16 output (for one): against
    float32 tensors holding the same values, with the same bfloat16 products, the results are the
    same, but a bfloat16 output (and a bfloat16 x's d x) comes rounded (within one bfloat16 step)."""
    _need_bfloat16()
    rng = np.random.default_rng(shape[1] * 11 + out_c)
    shape = [shape[0], shape[1] * 4, *shape[2:]]
    x = _bfloat16(rng.standard_normal(shape)).astype(np.float32)
    weight = rng.standard_normal([out_c * 4, shape[1], *kernel]).astype(np.float32)
    oh = (shape[2] + 2 * pad[0] - kernel[0]) // stride[0] + 1
    ow = (shape[3] + 2 * pad[1] - kernel[1]) // stride[1] + 1
    up = _bfloat16(rng.standard_normal([shape[0], out_c * 4, oh, ow])).astype(np.float32)
    got = _run_conv(x, weight, up, stride, pad, native=True, bf16=True, bf16_input=bf16_input, bf16_output=bf16_output,
                    channels_last=channels_last)
    want = _run_conv(x, weight, up, stride, pad, native=True, bf16=True, channels_last=channels_last)
    for name, g, w, rounded in zip(("out", "dx", "dw"), got, want, (bf16_output, bf16_input, False)):
        if rounded:
            assert np.all(np.abs(g - w) <= 2.0**-8 * np.abs(w) + 1e-30), (name, np.max(np.abs(g - w)))
            assert np.array_equal(g, _bfloat16(g)) and np.any(g != w), (name, "not rounded to bfloat16")
        else:
            np.testing.assert_allclose(g, w, rtol=0, atol=1e-6 * np.abs(w).max(), err_msg=name)


def test_conv_refuses_bfloat16_input_without_bfloat16_products(static_mode):
    with paddle.static.program_guard(paddle.static.Program(), paddle.static.Program()):
        x = paddle.cast(paddle.static.data("x", [1, 8, 4, 4], "float32"), "bfloat16")
        weight = paddle.static.data("w", [8, 8, 1, 1], "float32")
        with pytest.raises(ValueError, match="bfloat16 x or output needs bf16=True"):
            onednn_ops.conv2d(x, weight, (1, 1), (0, 0))
        with pytest.raises(ValueError, match="bfloat16 x or output needs bf16=True"):
            onednn_ops.conv2d(paddle.cast(x, "float32"), weight, (1, 1), (0, 0), bf16_output=True)


def _bfloat16_training_program(backbone: str):
    """(main program, model, layers set): ``backbone``'s training program on [2, 3, 32, 32] images
    after :func:`use_bfloat16_convolutions` (skips where the CPU has no native bfloat16)."""
    _need_bfloat16()
    from paddle_pfc.backbones.native_layers import use_bfloat16_convolutions

    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [2, 3, 32, 32], "float32")
        net = build_backbone(backbone, embedding_size=16, input_size=32)
        net.train()
        count = use_bfloat16_convolutions(net)
        net(x)
    return main, net, count


def test_use_bfloat16_convolutions_sets_the_backbone(static_mode):
    """Every native Conv2D of a backbone gets bf16=True in its training program's ops; the stem
    (Paddle's conv2d) and the eval program stay float32; the embedding stays near float32's."""
    main, net, count = _bfloat16_training_program("r18")
    convs = [op for op in main.global_block().ops if "pfc_conv2d" in op.name()]
    assert count == len([m for m in net.sublayers() if isinstance(m, Conv2D)]) > len(convs) > 0
    assert all(op.attrs()["bf16"] is True for op in convs)


def test_mobilefacenet_training_program_runs_channels_last_with_bfloat16_depthwise(static_mode):
    """mobilefacenet's training program: every convolution after the stem on NHWC tensors; with
    bfloat16 convolutions all of them multiply in bfloat16: oneDNN's stride-1 depthwise ones and
    the channels-last kernel's first grouped layer, strided depthwise layers and GDC; the eval
    program has none of them."""
    main, _, _ = _bfloat16_training_program("mbf")
    ops = main.global_block().ops
    convs = [op.attrs() for op in ops if op.name() == "custom_op.pfc_conv2d"]
    assert convs and all(attrs["channels_last"] and attrs["bf16"] for attrs in convs)
    assert {attrs["stride_h"] for attrs in convs if attrs["groups"] > 1} == {1}
    native = [(op.attrs(), op.operand_source(0).shape, op.operand_source(1).shape) for op in ops
              if op.name() == "custom_op.pfc_depthwise_conv2d"]
    assert all(attrs["bf16"] for attrs, _, _ in native)
    grouped = [x for _, x, w in native if w[1] == 2]  # the first block: 64 groups of 2 channels, NHWC
    strided = [w for attrs, _, w in native if w[1] == 1 and attrs["stride_h"] == 2]
    gdc = [w for attrs, _, w in native if w[1] == 1 and attrs["stride_h"] == 1]
    assert len(grouped) == 1 and grouped[0][3] == 128 and len(strided) == 3 and len(gdc) == 1, native
    relayouts = [op.name() for op in ops if op.name() in ("custom_op.pfc_to_nhwc", "custom_op.pfc_to_nchw")]
    assert relayouts == ["custom_op.pfc_to_nhwc", "custom_op.pfc_to_nchw"], relayouts


def test_conv_without_input_gradient(static_mode):
    """Input with stop_gradient (images): d weight still exact; no d x is asked for or computed."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal([2, 8, 9, 9]).astype(np.float32)
    weight = rng.standard_normal([16, 8, 3, 3]).astype(np.float32)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        xv = paddle.static.data("x", x.shape, "float32")
        layer = paddle.nn.Conv2D(8, 16, 3, 2, 1, bias_attr=False)
        out = onednn_ops.conv2d(xv, layer.weight, (2, 2), (1, 1))
        upv = paddle.static.data("up", out.shape, "float32")
        (dw,) = pir_grad(paddle.sum(out * upv), [layer.weight])
    grad_ops = [op for op in main.global_block().ops if op.name().endswith("pfc_conv2d_grad")]
    assert len(grad_ops) == 1 and grad_ops[0].attrs()["input_grad"] is False
    up = rng.standard_normal(out.shape).astype(np.float32)
    exe = paddle.static.Executor(paddle.CPUPlace())
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        scope.find_var(layer.weight.name).get_tensor().set(weight, paddle.CPUPlace())
        got_out, got_dw = exe.run(main, feed={"x": x, "up": up}, fetch_list=[out, dw])
    (ref_out, _, ref_dw), (out_scale, _, dw_scale) = _reference(x.astype(np.float64), weight.astype(np.float64),
                                                                up.astype(np.float64), (2, 2), (1, 1))
    eps = 4 * np.finfo(np.float32).eps
    assert np.all(np.abs(got_out - ref_out) <= eps * out_scale)
    assert np.all(np.abs(got_dw - ref_dw) <= eps * dw_scale)


def test_conv_dynamic_batch_and_shape_cache(static_mode):
    """One program, batch -1, run with two batch sizes and again with the first (cached primitives)."""
    rng = np.random.default_rng(5)
    weight = rng.standard_normal([8, 4, 3, 3]).astype(np.float32)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        xv = paddle.static.data("x", [-1, 4, 10, 10], "float32")
        xv.stop_gradient = False
        layer = Conv2D(4, 8, 3, 2, 1)
        out = layer(xv)
        assert list(out.shape) == [-1, 8, 5, 5]
        dx, dw = pir_grad(paddle.sum(out * out), [xv, layer.weight])
    exe = paddle.static.Executor(paddle.CPUPlace())
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        scope.find_var(layer.weight.name).get_tensor().set(weight, paddle.CPUPlace())
        runs = []
        for n in (3, 1, 3):
            x = np.random.default_rng(n).standard_normal([n, 4, 10, 10]).astype(np.float32)
            got = exe.run(main, feed={"x": x}, fetch_list=[out, dx, dw])
            (ref_out, _, _), (scale, _, _) = _reference(x.astype(np.float64), weight.astype(np.float64),
                                                         np.zeros([n, 8, 5, 5]), (2, 2), (1, 1))
            assert got[0].shape == (n, 8, 5, 5)
            assert np.all(np.abs(got[0] - ref_out) <= 4 * np.finfo(np.float32).eps * scale)
            runs.append(got)
    for a, b in zip(runs[0], runs[2]):
        np.testing.assert_array_equal(a, b)  # same shape, same primitive: bit-identical



def test_conv_concurrent_branches(static_mode):
    """Paddle's PIR executor runs independent CPU ops on several threads at once (measured: 8
    independent ops of one program on 4 threads). Eight independent convolutions of one input —
    four of one shape (one cached primitive used by concurrent threads), four of other shapes
    (primitives built concurrently) — forward and backward, with a new batch size each run (new
    cache entries each time): every result matches float64."""
    rng = np.random.default_rng(11)
    specs = [(12, (3, 3), (1, 1), (1, 1))] * 4 + [(8, (1, 1), (2, 2), (0, 0)), (6, (3, 3), (2, 2), (1, 1)),
                                                   (10, (5, 5), (1, 1), (2, 2)), (4, (3, 1), (1, 2), (1, 0))]
    weights = [rng.standard_normal([o, 8, *k]).astype(np.float32) for o, k, _, _ in specs]
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        xv = paddle.static.data("x", [-1, 8, 12, 12], "float32")
        xv.stop_gradient = False
        layers = [Conv2D(8, o, k, s, p) for o, k, s, p in specs]
        outs = [layer(xv) for layer in layers]
        loss = paddle.add_n([paddle.sum(out * out) * (i + 1) for i, out in enumerate(outs)])
        grads = pir_grad(loss, [xv] + [layer.weight for layer in layers])
    assert sum(op.name().endswith("pfc_conv2d") for op in main.global_block().ops) == len(specs)
    exe = paddle.static.Executor(paddle.CPUPlace())
    scope = paddle.static.Scope()
    eps = 4 * np.finfo(np.float32).eps
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        for layer, weight in zip(layers, weights):
            scope.find_var(layer.weight.name).get_tensor().set(weight, paddle.CPUPlace())
        for n in (2, 3, 1, 4, 2, 3):
            x = np.random.default_rng(n).standard_normal([n, 8, 12, 12]).astype(np.float32)
            got = exe.run(main, feed={"x": x}, fetch_list=outs + grads)
            dx_ref, dx_scale = np.zeros(x.shape), np.zeros(x.shape)
            for i, ((o, k, s, p), weight) in enumerate(zip(specs, weights)):
                out64 = got[i].astype(np.float64)  # d loss / d out_i = 2 (i + 1) out_i
                (ref, dx, dw), (scale, dxs, dws) = _reference(x.astype(np.float64), weight.astype(np.float64),
                                                              2 * (i + 1) * out64, s, p)
                assert np.all(np.abs(got[i] - ref) <= eps * scale + 1e-30), (n, i, "out")
                dw_got = got[len(specs) + 1 + i]
                assert np.all(np.abs(dw_got - dw) <= 2 * eps * dws + 1e-30), (n, i, "dw")
                dx_ref += dx
                dx_scale += dxs
            assert np.all(np.abs(got[len(specs)] - dx_ref) <= 2 * eps * dx_scale + 1e-30), (n, "dx")

@pytest.mark.parametrize("channels, native", [(3, False), (7, False), (8, True), (64, True)])
def test_layer_routing(channels, native, static_mode):
    """Conv2D in a CPU training program: oneDNN from 8 input channels on; an image stem keeps
    Paddle's conv2d (its conv2d_grad skips the unneeded input gradient)."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [-1, channels, 16, 16], "float32")
        layer = Conv2D(channels, 16, 3, 1, 1)
        layer.train()
        layer(x)
    ops = [op.name() for op in main.global_block().ops]
    assert any("pfc_conv2d" in n for n in ops) == native and ("pd_op.conv2d" in ops) != native, ops


def test_eval_program_has_no_custom_op(static_mode):
    """Exported and validation programs (eval mode) keep Paddle's conv2d: no custom-op library."""
    for name in ("r18", "mbf"):
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [-1, 3, 32, 32], "float32")
            net = build_backbone(name, embedding_size=16, input_size=32)
            net.eval()
            net(x)
        ops = [op.name() for op in main.global_block().ops]
        assert "pd_op.conv2d" in ops and not any(n.startswith("custom_op") or "pfc_" in n for n in ops), name


def test_conv_rejects_bad_inputs(static_mode):
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [2, 3, 8, 8], "float32")
        w = paddle.static.data("w", [4, 5, 3, 3], "float32")  # 5 input channels for x's 3
        out = onednn_ops.conv2d(x, w, (1, 1), (1, 1))
    exe = paddle.static.Executor(paddle.CPUPlace())
    with pytest.raises(Exception):  # Paddle 3.3 re-raises custom-op errors as a bare std::exception
        exe.run(main, feed={"x": np.ones([2, 3, 8, 8], np.float32), "w": np.ones([4, 5, 3, 3], np.float32)},
                fetch_list=[out])


def _backbone_step(name, x, values, native: bool, monkeypatch):
    """Embedding, loss and parameter gradients of one training forward/backward of backbone
    ``name`` (parameters set to ``values`` in creation order, or taken from its startup if None)."""
    monkeypatch.setenv("PADDLE_PFC_NATIVE", "auto" if native else "off")
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        xv = paddle.static.data("x", list(x.shape), "float32")
        net = build_backbone(name, embedding_size=16, input_size=x.shape[2])
        net.train()
        emb = net(xv)
        loss = paddle.mean(paddle.square(emb - 0.5))
        params = [p for p in net.parameters() if not p.stop_gradient]
        grads = pir_grad(loss, params)
    ops = [op.name() for op in main.global_block().ops]
    assert any("pfc_conv2d" in n for n in ops) == native, name
    exe = paddle.static.Executor(paddle.CPUPlace())
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        if values is None:
            values = [np.asarray(scope.find_var(p.name).get_tensor()) for p in params]
        for p, v in zip(params, values):
            scope.find_var(p.name).get_tensor().set(v, paddle.CPUPlace())
        fetched = exe.run(main, feed={"x": x}, fetch_list=[emb, loss, *grads])
    return fetched, values


@pytest.mark.parametrize("name", ["r18", "mbf"])
def test_backbone_training_native_matches_off(name, static_mode, monkeypatch):
    """One training forward/backward: the embedding agrees to float32 rounding; the parameter
    gradients (through train-mode batch norms, where they cancel heavily) differ between the two
    convolution paths no more than Paddle's own path differs from itself when the input moves by
    one float32 ulp."""
    x = np.random.default_rng(3).standard_normal([4, 3, 32, 32]).astype(np.float32)
    ours, values = _backbone_step(name, x, None, True, monkeypatch)
    theirs, _ = _backbone_step(name, x, values, False, monkeypatch)
    nudged, _ = _backbone_step(name, x * np.float32(1 + 2.0 ** -23), values, False, monkeypatch)

    def relative(a, b):
        a = np.concatenate([np.ravel(v) for v in a]).astype(np.float64)
        b = np.concatenate([np.ravel(v) for v in b]).astype(np.float64)
        return np.linalg.norm(a - b) / np.linalg.norm(b)

    assert relative(ours[:1], theirs[:1]) < 1e-4
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-4)
    ours_diff, floor = relative(ours[2:], theirs[2:]), relative(nudged[2:], theirs[2:])
    assert ours_diff <= 4 * floor + 1e-5, (ours_diff, floor)
    for got, ref in zip(ours[2:], theirs[2:]):
        assert got.shape == ref.shape and np.isfinite(got).all()


@pytest.mark.parametrize("m, k, n, transpose_a, transpose_b", [
    (256, 512, 2048, False, True),   # the head's forward: unit features x centers^T
    (64, 300, 96, False, False),     # its d features: d logits x centers
    (300, 64, 96, True, False),      # its d centers: d logits^T x features
    (5, 7, 3, True, True),
])
def test_matmul_bfloat16_products_match_float64_of_rounded_operands(m, k, n, transpose_a, transpose_b, static_mode):
    """pfc_matmul with bf16: the float64 product of the bfloat16-rounded operands within a few
    float32 ulps of the absolute sums (what a bfloat16 GEMM with float32 accumulation computes);
    strict float32 without bf16 likewise against the unrounded operands."""
    _need_bfloat16()
    rng = np.random.default_rng(m + k + n)
    a = rng.standard_normal((k, m) if transpose_a else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if transpose_b else (k, n)).astype(np.float32)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        av, bv = paddle.static.data("a", a.shape, "float32"), paddle.static.data("b", b.shape, "float32")
        outs = [onednn_ops.matmul(av, bv, transpose_a, transpose_b, bf16=bf16) for bf16 in (True, False)]
    got_bf16, got_f32 = paddle.static.Executor(paddle.CPUPlace()).run(main, feed={"a": a, "b": b}, fetch_list=outs)
    for got, rounding in ((got_bf16, _bfloat16), (got_f32, lambda x: x.astype(np.float64))):
        left, right = rounding(a), rounding(b)
        left, right = (left.T if transpose_a else left), (right.T if transpose_b else right)
        ref, scale = left @ right, np.abs(left) @ np.abs(right)
        assert got.shape == (m, n) and got.dtype == np.float32
        assert np.all(np.abs(got - ref) <= 4 * np.finfo(np.float32).eps * scale)
    assert np.abs(got_bf16 - got_f32).max() > 1e-3  # the bfloat16 rounding is real
