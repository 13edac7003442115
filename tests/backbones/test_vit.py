"""paddle_pfc.backbones.vit: arcface_torch's ViT sizes, patch masking and drop path (training only,
reproducible from Paddle's seed), static PIR train and eval programs. Equality with arcface_torch's
own forward, gradients and masking is in tests/interop/test_interop_vit.py."""
from __future__ import annotations

import numpy as np
import pytest

import paddle_pfc
from paddle_pfc.utils.errors import UsageError

# vit_t: sum(p.numel() for p in get_model("vit_t", num_features=512).parameters()) of insightface's
# arcface_torch (recognition/arcface_torch/backbones, master) under torch 2.13.0; the other sizes are
# in tests/backbones/test_backbones.py's TORCH_PARAMS_112
VIT_T_TORCH_PARAMETERS = 19_137_792
DEPTHS = {"vit_t": 12, "vit_s": 12, "vit_b": 24, "vit_l": 24}
DIM, HEADS = 32, 8


def _small(depth: int = 1, **kwargs):
    from paddle_pfc.backbones.vit import VisionTransformer

    return VisionTransformer(DIM, depth, HEADS, embedding_size=8, **kwargs)


def test_vit_t_parameter_count_equals_arcface_torchs():
    from paddle_pfc.backbones import build_backbone, count_parameters

    assert count_parameters(build_backbone("vit_t")) == VIT_T_TORCH_PARAMETERS


@pytest.mark.parametrize("name", list(DEPTHS))
def test_sizes_are_arcface_torchs(name):
    import paddle

    from paddle_pfc.backbones import build_backbone

    with paddle.LazyGuard():
        net = build_backbone(name)
    assert len(net.blocks) == DEPTHS[name] and net.num_patches == 144
    assert all(block.attn.num_heads == 8 for block in net.blocks)


def test_builder_defaults_are_arcface_torchs():
    import paddle

    from paddle_pfc.backbones import vit_l, vit_t

    with paddle.LazyGuard():
        t, large = vit_t(), vit_l(drop_path_rate=0.0)
    assert (t.drop_path_rate, t.mask_ratio, t.len_keep) == (pytest.approx(0.1), 0.1, 129)
    assert (large.drop_path_rate, large.mask_ratio) == (0.0, 0.1)
    rates = [b.drop_path_rate for b in t.blocks]  # torch.linspace(0, 0.1, 12)
    np.testing.assert_allclose(rates, np.linspace(0, 0.1, 12), rtol=1e-6)


@pytest.mark.parametrize("ratio,kept", [(0.1, 129), (0.05, 136), (0.25, 108), (0.5, 72)])
def test_masking_keeps_int_of_the_tokens_of_smallest_noise(ratio, kept):
    """``int(L * (1 - ratio))`` tokens, those of the smallest noise in its order; restored, the kept
    tokens are back in their places and ``mask_token`` fills the others (numpy reference)."""
    import paddle

    net = _small(mask_ratio=ratio)
    assert net.len_keep == kept == int(144 * (1 - ratio))
    rng = np.random.default_rng(0)
    x, noise = rng.standard_normal((3, 144, DIM)).astype(np.float32), rng.random((3, 144)).astype(np.float32)
    kept_x, ids_restore = net.random_masking(paddle.to_tensor(x), paddle.to_tensor(noise))
    order = np.argsort(noise, axis=1)[:, :kept]
    np.testing.assert_array_equal(kept_x.numpy(), np.take_along_axis(x, order[:, :, None], axis=1))
    restored = net.restore(kept_x, ids_restore).numpy()
    expected = np.broadcast_to(net.mask_token.numpy(), x.shape).copy()
    np.put_along_axis(expected, order[:, :, None], np.take_along_axis(x, order[:, :, None], axis=1), axis=1)
    np.testing.assert_array_equal(restored, expected)


def test_masking_draws_from_paddles_seed():
    import paddle

    net = _small(mask_ratio=0.1)
    x = paddle.to_tensor(np.random.default_rng(1).standard_normal((4, 144, DIM)).astype(np.float32))

    def ids(seed):
        paddle.seed(seed)
        return net.random_masking(x)[1].numpy()

    first = ids(5)
    np.testing.assert_array_equal(ids(5), first)
    assert not np.array_equal(ids(6), first)
    assert sorted(first[0].tolist()) == list(range(144))


def test_drop_path_keeps_or_drops_whole_samples():
    import paddle

    from paddle_pfc.backbones.vit import drop_path

    paddle.seed(0)
    x = paddle.ones([4000, 3, 2])
    out = drop_path(x, 0.3, training=True).numpy()
    per_sample = out.reshape(4000, -1)
    assert np.all(per_sample == per_sample[:, :1])  # one draw a sample
    assert set(np.unique(per_sample).tolist()) == {0.0, np.float32(1 / 0.7)}
    assert abs((per_sample[:, 0] == 0).mean() - 0.3) < 0.04  # binomial std 0.007
    np.testing.assert_array_equal(drop_path(x, 0.3, training=False).numpy(), x.numpy())


def test_drop_path_and_masking_in_training_only():
    import paddle

    net = _small(depth=2, drop_path_rate=0.5, mask_ratio=0.2)
    x = paddle.to_tensor(np.random.default_rng(2).standard_normal((4, 3, 112, 112)).astype(np.float32))
    outputs = {}
    for mode in ("train", "eval"):
        getattr(net, mode)()
        for seed in (1, 1, 2):
            paddle.seed(seed)
            outputs.setdefault(mode, []).append(net.forward_features(x).numpy())
    train, evaluation = outputs["train"], outputs["eval"]
    np.testing.assert_array_equal(train[0], train[1])
    assert not np.allclose(train[0], train[2])
    np.testing.assert_array_equal(evaluation[0], evaluation[2])
    assert not np.allclose(train[0], evaluation[0])


def _programs(**kwargs):
    """A static training program (SGD step) of a small ViT and its eval program sharing the parameters."""
    import paddle

    from paddle_pfc.backbones import bind_parameters

    main, startup, eval_prog = paddle.static.Program(), paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        net = _small(**kwargs)
        net.train()
        emb = net(paddle.static.data("x", [-1, 3, 112, 112], "float32"))
        paddle.optimizer.SGD(0.1).minimize((emb * emb).mean())
    net.eval()
    with paddle.static.program_guard(eval_prog, paddle.static.Program()), bind_parameters(net, startup):
        eval_emb = net(paddle.static.data("x", [-1, 3, 112, 112], "float32"))
    return net, (main, emb), (eval_prog, eval_emb), startup


def test_static_programs_train_with_randomness_eval_without(static_mode):
    import paddle

    paddle_pfc.configure_process()  # the serial executor: random ops draw in program order
    with paddle.static.scope_guard(paddle.static.Scope()):
        net, (main, emb), (eval_prog, eval_emb), startup = _programs(depth=2, drop_path_rate=0.3, mask_ratio=0.1)
        ops = {name: {op.name() for op in prog.global_block().ops} for name, prog in
               (("train", main), ("eval", eval_prog))}
        assert {"pd_op.argsort", "pd_op.dropout"} <= ops["train"]
        assert not {"pd_op.argsort", "pd_op.dropout", "pd_op.uniform"} & ops["eval"]
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        x = np.random.default_rng(3).standard_normal((4, 3, 112, 112)).astype(np.float32)
        before = exe.run(eval_prog, feed={"x": x}, fetch_list=[eval_emb])[0]
        np.testing.assert_array_equal(exe.run(eval_prog, feed={"x": x}, fetch_list=[eval_emb])[0], before)
        state = {k: np.array(paddle.static.global_scope().var(v.name).get_tensor())
                 for k, v in net.state_dict().items()}
        runs = []
        for seed in (7, 7, 8):
            for key, value in net.state_dict().items():  # the same weights before each step
                paddle.static.global_scope().var(value.name).get_tensor().set(state[key], paddle.CPUPlace())
            paddle.seed(seed)
            runs.append(exe.run(main, feed={"x": x}, fetch_list=[emb])[0])
        after = exe.run(eval_prog, feed={"x": x}, fetch_list=[eval_emb])[0]
    assert runs[0].shape == (4, 8)
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.allclose(runs[0], runs[2])
    assert not np.allclose(after, before)  # the SGD steps changed the weights the eval program reads


@pytest.mark.parametrize("kwargs,arg", [({"mask_ratio": 1.0}, "mask_ratio"), ({"mask_ratio": -0.1}, "mask_ratio"),
                                        ({"mask_ratio": True}, "mask_ratio"),
                                        ({"drop_path_rate": 1.0}, "drop_path_rate"),
                                        ({"dropout": 1.5}, "dropout"), ({"embedding_size": 0}, "embedding_size"),
                                        ({"input_size": 100}, "input_size")])
def test_bad_arguments_name_the_argument(kwargs, arg):
    import paddle

    with paddle.LazyGuard(), pytest.raises(UsageError, match=arg):
        _small(**kwargs) if "embedding_size" not in kwargs else _small_with_embedding(kwargs["embedding_size"])


def _small_with_embedding(size):
    from paddle_pfc.backbones.vit import VisionTransformer

    return VisionTransformer(DIM, 1, HEADS, embedding_size=size)


def test_input_of_another_size_is_refused():
    import paddle

    from paddle_pfc.backbones.vit import VisionTransformer

    net = VisionTransformer(DIM, 1, HEADS, embedding_size=8, input_size=96)
    assert net.num_patches == 100
    with pytest.raises(UsageError, match="input_size"):
        net(paddle.zeros([1, 3, 112, 112]))


def _train_step(native: bool, monkeypatch):
    """Embeddings and every parameter's gradient of one training forward of a small ViT with drop path
    and masking, in a static program on the native ops or (PADDLE_PFC_NATIVE=off) Paddle's."""
    import paddle

    monkeypatch.setenv("PADDLE_PFC_NATIVE", "on" if native else "off")
    paddle_pfc.configure_process()  # the serial executor: random ops draw in program order
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.scope_guard(paddle.static.Scope()), paddle.static.program_guard(main, startup):
        paddle.seed(11)
        net = _small(depth=2, drop_path_rate=0.5, mask_ratio=0.1)
        net.train()
        emb = net(paddle.static.data("x", [4, 3, 112, 112], "float32"))
        params = [p for p in net.parameters() if not p.stop_gradient]
        grads = paddle.static.gradients([(emb * emb).sum()], params)
        names = {op.name() for op in main.global_block().ops}
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        x = np.random.default_rng(5).standard_normal((4, 3, 112, 112)).astype(np.float32)
        paddle.seed(3)
        fetched = exe.run(main, feed={"x": x}, fetch_list=[emb, *grads])
    return names, fetched


def test_native_training_program_equals_paddles_ops(static_mode, monkeypatch):
    """With drop path and masking on: the native block ops (bias + drop path + residual, token
    gathers, attention) give Paddle's ops' embeddings and gradients, drawing the same random values."""
    native_names, native = _train_step(True, monkeypatch)
    paddle_names, reference = _train_step(False, monkeypatch)
    assert {"custom_op.pfc_bias_residual", "custom_op.pfc_gather_tokens"} <= native_names
    assert not any(name.startswith("custom_op.") for name in paddle_names)
    for got, want in zip(native, reference):
        scale = np.abs(want).max()
        if scale < 1e-5:  # the feature BatchNorms' biases: zero in exact arithmetic, rounding noise in both
            assert np.abs(got).max() < 1e-5
            continue
        np.testing.assert_allclose(got / scale, want / scale, rtol=0, atol=1e-4)  # float32 through 2 blocks
