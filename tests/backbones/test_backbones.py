"""Tests for paddle_pfc.backbones (iresnet18..200, mobilefacenet; parameter counts of the ViTs too) in dygraph
and static PIR."""
from __future__ import annotations

import contextlib

import numpy as np
import paddle
import pytest

from paddle_pfc.backbones import BACKBONES, bind_parameters, build_backbone, count_parameters
from paddle_pfc.backbones.state import random_state

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

# Reference parameter counts: insightface arcface_torch's own definitions
# (recognition/arcface_torch/backbones/iresnet.py, mobilefacenet.py:get_mbf with
# its defaults) replicated in a scratch PyTorch 2.13 (CPU) script and counted
# with `sum(p.numel() for p in model.parameters())` (this includes the frozen
# BatchNorm1d scale of iresnet, excludes BatchNorm running statistics).
# 112x112 input, 512-d embedding:
TORCH_PARAMS_112 = {
    "iresnet18": 24_025_600,
    "iresnet34": 34_139_328,
    "iresnet50": 43_590_848,
    "iresnet100": 65_156_160,
    "iresnet200": 118_833_920,
    "mobilefacenet": 2_059_520,
    # insightface's released w600k_mbf.onnx (buffalo_s): its convolutions, biases, PReLU slopes, Gemm
    # and final BatchNorm scale and shift (3,399,424), plus one BatchNorm shift per channel of the
    # convolutions its exporter folded a BatchNorm into (10,944)
    "mobilefacenet_fc": 3_410_368,
    # arcface_torch's get_model(name, num_features=512) itself (backbones/vit.py; timm's three helpers
    # supplied as tests/interop/make_vit_fixtures.py does), counted under torch 2.13.0; vit_l is
    # get_model("vit_l_dp005_mask_005"), the one ViT-L it builds
    "vit_t": 19_137_792,
    "vit_s": 76_023_296,
    "vit_b": 113_833_472,
    "vit_l": 255_684_352,
}
# Same script, other inputs: the FC input (iresnet) / GDC kernel (mobilefacenet)
# follow the (H/16, W/16) final map.  Key: (name, (H, W), embedding_size).
TORCH_PARAMS_OTHER = {
    ("iresnet18", (32, 32), 512): 12_229_120,
    ("iresnet18", (48, 48), 512): 13_539_840,
    ("iresnet18", (64, 64), 512): 15_374_848,
    ("iresnet18", (64, 32), 512): 13_277_696,
    ("iresnet18", (112, 112), 128): 14_390_656,
    ("iresnet18", (32, 32), 128): 11_441_536,
    ("mobilefacenet", (32, 32), 512): 2_036_480,
    ("mobilefacenet", (48, 48), 512): 2_039_040,
    ("mobilefacenet", (64, 64), 512): 2_042_624,
    ("mobilefacenet", (64, 32), 512): 2_038_528,
    ("mobilefacenet", (112, 112), 128): 1_862_144,
}
# trainable = total minus the frozen BatchNorm1d scale (embedding_size) for iresnet.
FROZEN = {"iresnet18": 512, "iresnet34": 512, "iresnet50": 512, "iresnet100": 512,
          "iresnet200": 512, "mobilefacenet": 0, "mobilefacenet_fc": 0,
          "vit_t": 0, "vit_s": 0, "vit_b": 0, "vit_l": 0}


@contextlib.contextmanager
def static_mode():
    paddle.enable_static()
    try:
        with paddle.static.scope_guard(paddle.static.Scope()):
            yield
    finally:
        paddle.disable_static()


def _features_bn(net):
    return net.features if hasattr(net.features, "weight") else net.features.layers[3]


# ---------------------------------------------------------------- parameter counts
@pytest.mark.parametrize("name", BACKBONES)
def test_parameter_count_matches_insightface(name):
    with paddle.LazyGuard():  # shapes only, no initialisation: r200 in ~0.3 s
        net = build_backbone(name)
    assert count_parameters(net) == TORCH_PARAMS_112[name]
    trainable = sum(int(np.prod(p.shape)) for p in net.parameters() if not p.stop_gradient)
    assert trainable == TORCH_PARAMS_112[name] - FROZEN[name]


@pytest.mark.parametrize("key", sorted(TORCH_PARAMS_OTHER))
def test_parameter_count_other_sizes(key):
    name, size, emb = key
    with paddle.LazyGuard():
        net = build_backbone(name, embedding_size=emb, input_size=size)
    assert count_parameters(net) == TORCH_PARAMS_OTHER[key]


def test_parameter_count_same_in_dygraph_and_static():
    assert count_parameters(build_backbone("mbf")) == TORCH_PARAMS_112["mobilefacenet"]
    with static_mode():
        # keep the Programs referenced: PIR Values dangle (segfault) once their program is freed
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            net = build_backbone("r18")
        assert count_parameters(net) == TORCH_PARAMS_112["iresnet18"]


def test_aliases_and_case():
    for alias, name in [("r18", "iresnet18"), ("r34", "iresnet34"), ("r50", "iresnet50"),
                        ("r100", "iresnet100"), ("r200", "iresnet200"), ("mbf", "mobilefacenet"),
                        ("IResNet50", "iresnet50"), ("w600k_mbf", "mobilefacenet_fc")]:
        with paddle.LazyGuard():
            assert count_parameters(build_backbone(alias)) == TORCH_PARAMS_112[name]


# ---------------------------------------------------------------- static PIR forward
@pytest.mark.parametrize("name,size", [("r18", 112), ("mbf", 112), ("r18", 32),
                                       ("r18", 64), ("mbf", 32), ("mbf", 64), ("w600k_mbf", 32)])
def test_static_output_shape_dtype(name, size):
    with static_mode():
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [-1, 3, size, size], "float32")
            net = build_backbone(name, embedding_size=64, input_size=size)
            net.eval()
            emb = net(x)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        xs = np.random.RandomState(0).randn(3, 3, size, size).astype("float32")
        out, = exe.run(main, feed={"x": xs}, fetch_list=[emb])
    assert out.shape == (3, 64)
    assert out.dtype == np.float32
    assert np.isfinite(out).all()


def test_bind_parameters_refuses_a_startup_program_that_does_not_initialise_the_layer():
    """A startup program other than the layer's (Paddle 3.3 would crash reading the parameters):
    a ValueError naming how many are missing and the first of them; the layer is left as it was."""
    with static_mode():
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            net = build_backbone("mbf", embedding_size=32, input_size=32)
        first = net.sublayers()[0]
        before = dict(first.named_parameters())
        total = len({p.name for p in net.parameters()})
        with pytest.raises(ValueError, match=rf"does not initialise {total} of the layer's {total} parameters \('"):
            with paddle.static.program_guard(paddle.static.Program(), paddle.static.Program()), \
                    bind_parameters(net, paddle.static.Program()):
                pass
        with pytest.raises(ValueError, match="must be a paddle.static.Program, got str"):
            with bind_parameters(net, "startup"):
                pass
        assert dict(first.named_parameters()) == before


@pytest.mark.parametrize("name", ["r18", "mbf", "w600k_mbf"])
def test_static_train_vs_eval_batchnorm(name):
    size, n = 32, 8
    with static_mode():
        train_prog, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(train_prog, startup):
            x = paddle.static.data("x", [-1, 3, size, size], "float32")
            net = build_backbone(name, embedding_size=32, input_size=size)
            net.train()
            emb_train = net(x)
        eval_prog = paddle.static.Program()
        net.eval()
        with paddle.static.program_guard(eval_prog, paddle.static.Program()), \
                bind_parameters(net, startup):
            xe = paddle.static.data("x", [-1, 3, size, size], "float32")
            emb_eval = net(xe)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        xs = np.random.RandomState(1).randn(n, 3, size, size).astype("float32")
        ev1, = exe.run(eval_prog, feed={"x": xs}, fetch_list=[emb_eval])
        ev2, = exe.run(eval_prog, feed={"x": xs}, fetch_list=[emb_eval])
        ev_half, = exe.run(eval_prog, feed={"x": xs[:4]}, fetch_list=[emb_eval])
        tr, = exe.run(train_prog, feed={"x": xs}, fetch_list=[emb_train])
        tr_half, = exe.run(train_prog, feed={"x": xs[:4]}, fetch_list=[emb_train])
        ev3, = exe.run(eval_prog, feed={"x": xs}, fetch_list=[emb_eval])
        bn = _features_bn(net)
        mean_after = np.asarray(paddle.static.global_scope().var(bn._mean.name).get_tensor())
    # eval: deterministic and per-sample (running statistics)
    np.testing.assert_array_equal(ev1, ev2)
    np.testing.assert_allclose(ev_half, ev1[:4], rtol=1e-4, atol=1e-4 * np.abs(ev1).max())
    # train: the last BatchNorm1d (scale 1, bias 0 at init) normalises with batch statistics
    np.testing.assert_allclose(tr.mean(axis=0), 0.0, atol=1e-3)
    np.testing.assert_allclose(tr.std(axis=0), 1.0, atol=1e-2)
    assert np.abs(tr - ev1).max() > 1e-2
    assert np.abs(tr_half - tr[:4]).max() > 1e-2  # depends on the other batch members
    # the train runs updated the running statistics, which the eval program reads
    assert np.abs(mean_after).max() > 0
    assert np.abs(ev3 - ev1).max() > 1e-3 * np.abs(ev1).max()


def test_static_frozen_scale_not_trained_but_saved():
    size = 32
    with static_mode():
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [-1, 3, size, size], "float32")
            net = build_backbone("r18", embedding_size=16, input_size=size)
            net.train()
            emb = net(x)
            loss = paddle.mean(emb * paddle.arange(16, dtype="float32"))
            _, params_grads = paddle.optimizer.Momentum(
                learning_rate=0.1, momentum=0.9, weight_decay=5e-4).minimize(loss)
        w, b = net.features.weight, net.features.bias
        assert w.stop_gradient and not w.trainable
        assert w.name not in {p.name for p, _ in params_grads}
        assert b.name in {p.name for p, _ in params_grads}
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        rng = np.random.RandomState(2)
        for _ in range(2):
            exe.run(main, feed={"x": rng.randn(4, 3, size, size).astype("float32")},
                    fetch_list=[loss])
        state = main.state_dict("param")
    assert w.name in state  # still a parameter: saved/loaded with the others
    np.testing.assert_array_equal(np.asarray(state[w.name]), np.ones(16, np.float32))
    assert np.abs(np.asarray(state[b.name])).max() > 0  # the bias did train


# ---------------------------------------------------------------- dygraph
def test_dygraph_frozen_scale_and_modes():
    paddle.seed(3)
    net = build_backbone("r18", embedding_size=16, input_size=(32, 48), dropout=0.5)
    w = net.features.weight
    assert w.stop_gradient and not w.trainable
    opt = paddle.optimizer.Momentum(0.1, parameters=net.parameters(), weight_decay=5e-4)
    x = paddle.to_tensor(np.random.RandomState(4).randn(4, 3, 32, 48).astype("float32"))
    net.train()
    y = net(x)
    assert y.shape == [4, 16] and y.dtype == paddle.float32
    (y * paddle.arange(16, dtype="float32")).mean().backward()
    opt.step()
    assert w.grad is None
    np.testing.assert_array_equal(w.numpy(), np.ones(16, np.float32))
    y1, y2 = net(x).numpy(), net(x).numpy()
    assert not np.allclose(y1, y2)  # train-mode dropout is random
    net.eval()
    e1, e2 = net(x).numpy(), net(x).numpy()
    np.testing.assert_array_equal(e1, e2)
    assert "features.weight" in net.state_dict()


def test_dygraph_mobilefacenet_rectangular():
    net = build_backbone("mobilefacenet", embedding_size=8, input_size=(64, 32))
    net.eval()
    y = net(paddle.randn([2, 3, 64, 32]))
    assert y.shape == [2, 8] and y.dtype == paddle.float32
    assert not _features_bn(net).weight.stop_gradient  # insightface trains mbf's BN1d scale


# ---------------------------------------------------------------- argument checks
@pytest.mark.parametrize("kwargs,arg", [
    (dict(name="resnet18"), "iresnet18"),  # message lists the valid names
    (dict(name="r18", embedding_size=0), "embedding_size"),
    (dict(name="r18", embedding_size=-3), "embedding_size"),
    (dict(name="r18", embedding_size=1.5), "embedding_size"),
    (dict(name="r18", dropout=-0.1), "dropout"),
    (dict(name="mbf", dropout=1.0), "dropout"),
    (dict(name="r18", input_size=100), "input_size"),
    (dict(name="r18", input_size=8), "input_size"),
    (dict(name="r18", input_size=0), "input_size"),
    (dict(name="mbf", input_size=(112, 100)), "input_size"),
    (dict(name="mbf", input_size=(112,)), "input_size"),
    (dict(name="r18", input_size="112"), "input_size"),
])
def test_bad_arguments(kwargs, arg):
    with pytest.raises(ValueError, match=arg):
        build_backbone(**kwargs)


def test_unknown_name_lists_all_valid_names():
    with pytest.raises(ValueError) as info:
        build_backbone("vit_h")
    for name in BACKBONES + ("r18", "r34", "r50", "r100", "r200", "mbf"):
        assert name in str(info.value)


def test_input_size_mismatch_raises():
    net = build_backbone("mbf", input_size=32)
    with pytest.raises(ValueError, match="input_size"):
        net(paddle.randn([1, 3, 64, 64]))


@pytest.mark.parametrize("name", ["r18", "mbf", "w600k_mbf"])
def test_native_inference_program_matches_paddles_eval_program(name, monkeypatch):
    """The eval program built within native_inference() (validation's, tools/validate.py's) runs
    the native forward kernels, channels last, with the norms on their running statistics, and
    embeds a dynamic batch (5 images) as Paddle's eval program does, up to float32 rounding. Norm
    statistics, scales, shifts and PReLU slopes are random (not the initial 0 / 1 / 0.25); the
    bfloat16 flag of the convolutions is for training programs only."""
    from paddle_pfc.backbones.native_layers import native_inference

    monkeypatch.setenv("PADDLE_PFC_NATIVE", "on")
    size = 32
    rng = np.random.default_rng(4)
    with static_mode():
        train_prog, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(train_prog, startup):
            net = build_backbone(name, embedding_size=16, input_size=size)
            net(paddle.static.data("x", [4, 3, size, size], "float32"))
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        scope = paddle.static.global_scope()
        state = random_state(name, 16, size, seed=5)
        for key, value in net.state_dict().items():
            array = state[key]
            if "prelu" in key.lower() or key.endswith("_weight"):  # PReLU slopes: not all 0.25
                array = rng.uniform(0.0, 0.5, array.shape).astype(np.float32)
            scope.find_var(value.name).get_tensor().set(array, paddle.CPUPlace())
        for layer in net.sublayers():
            if hasattr(layer, "bfloat16_products"):
                layer.bfloat16_products = True
        net.eval()
        programs = []
        for context in (contextlib.nullcontext(), native_inference()):
            program = paddle.static.Program()
            with paddle.static.program_guard(program, paddle.static.Program()), bind_parameters(net, startup), \
                    context:
                embedding = net(paddle.static.data("images", [-1, 3, size, size], "float32"))
            programs.append((program, embedding, {op.name() for op in program.global_block().ops}))
        x = rng.standard_normal((5, 3, size, size)).astype(np.float32)
        (paddles, _, paddle_ops), (native, _, native_ops_) = [
            (exe.run(p, feed={"images": x}, fetch_list=[e])[0], e, ops) for p, e, ops in programs]
    assert not any(op.startswith("custom_op.") for op in paddle_ops), paddle_ops
    expected = {"custom_op.pfc_conv2d", "custom_op.pfc_batch_norm_prelu_inference", "custom_op.pfc_to_nhwc"}
    if name in ("mbf", "w600k_mbf"):
        expected.add("custom_op.pfc_depthwise_conv2d")
    assert expected <= native_ops_, native_ops_
    assert not {"custom_op.pfc_batch_norm_", "custom_op.pfc_batch_norm_prelu_"} & native_ops_  # no batch statistics
    convolutions = [op for op in programs[1][0].global_block().ops if op.name() == "custom_op.pfc_conv2d"]
    assert convolutions and not any(op.attrs()["bf16"] for op in convolutions)
    assert np.abs(paddles[0] - paddles[1]).max() > 0.05 * np.abs(paddles).max()  # embeddings that tell images apart
    np.testing.assert_allclose(native, paddles, rtol=1e-4, atol=1e-5 * np.abs(paddles).max())
