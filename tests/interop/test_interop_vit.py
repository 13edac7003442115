"""arcface_torch's ``VisionTransformer`` tensors as paddle_pfc's: eval embeddings, the train-mode forward,
every parameter's gradient (without and with patch masking) and the BatchNorm running statistics after
a train step equal torch's; ``vit_map.detect`` names the full-size variants from tensor shapes.

Fixtures: tests/interop/fixtures/vit_small.pt / vit_small.npz, written by
tests/interop/make_vit_fixtures.py (torch 2.13.0, arcface_torch's ``VisionTransformer`` class at
width 32, depth 2, 8 heads, embedding 16, its LayerNorms / BatchNorms / position embedding randomized).
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from helpers.vit_small import DEPTH, DIM, EMBEDDING, HEADS, small_vit_layout
from paddle_pfc.interop import vit_map
from paddle_pfc.interop.common import INPUT_SCALE, ConversionError
from paddle_pfc.interop.convert import read_source
from paddle_pfc.interop.mapping import layer_layout, map_state
from paddle_pfc.interop.vit_map import FIRST_CONV, detect

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# float32 through 2 blocks and the feature head, each framework with its own kernels: relative to the
# largest value of the compared tensor
RTOL = 2e-5
COS = 0.999999
# gradients that are zero in exact arithmetic (a shift of every sample alike ahead of a train-mode
# BatchNorm: norm.bias and feature.1.bias without masking) are rounding noise in both frameworks
ZERO_GRAD = 1e-5


def _check_grad(name: str, ours: np.ndarray, theirs: np.ndarray) -> None:
    if np.abs(theirs).max() < ZERO_GRAD:
        assert np.abs(ours).max() < ZERO_GRAD, name
        return
    cos, rel = _close(ours, theirs, rtol=1e-4)
    assert cos >= 0.99999 and rel <= 1e-4, (name, cos, rel)


def _close(ours: np.ndarray, theirs: np.ndarray, rtol: float = RTOL) -> tuple[float, float]:
    ours, theirs = np.asarray(ours, np.float64).ravel(), np.asarray(theirs, np.float64).ravel()
    cos = float(ours @ theirs / (np.linalg.norm(ours) * np.linalg.norm(theirs)))
    rel = float(np.abs(ours - theirs).max() / np.abs(theirs).max())
    return cos, rel


@pytest.fixture(scope="module")
def torch_run() -> dict[str, np.ndarray]:
    return dict(np.load(FIXTURES / "vit_small.npz"))


@pytest.fixture(scope="module")
def converted() -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The fixture's state mapped onto paddle_pfc's ViT of its size (the checked mapping of every
    converted model, the input scale folded into the patch convolution)."""
    return map_state(read_source(FIXTURES / "vit_small.pt"), "small ViT", EMBEDDING, (112, 112), FIRST_CONV,
                     layout=small_vit_layout())


def _net(state, mask_ratio: float = 0.0):
    from paddle_pfc.backbones.vit import VisionTransformer

    net = VisionTransformer(DIM, DEPTH, HEADS, embedding_size=EMBEDDING, mask_ratio=mask_ratio)
    net.set_state_dict({k: v.copy() for k, v in state.items()})
    return net


def _images(torch_run) -> np.ndarray:
    """paddle_pfc's input of the fixture's images: ``(x - 127.5) / 128``."""
    return ((torch_run["images"].astype(np.float32) - 127.5) / 128.0).transpose(0, 3, 1, 2).copy()


def _torch_grad(name: str, grad: np.ndarray, layout) -> np.ndarray:
    """Our gradient of ``name`` in torch's layout and parametrisation: Linear weights transposed; the
    patch convolution's weight is torch's times INPUT_SCALE (the input scale folded in), so its
    gradient is torch's divided by it."""
    if layout[name][1] == "linear":
        grad = grad.T
    return grad * INPUT_SCALE if name == FIRST_CONV else grad


def test_mapping_reads_every_tensor(converted):
    state, ignored = converted
    assert set(ignored) == {f"feature.{i}.num_batches_tracked" for i in (1, 3)}
    assert len(state) == 2 + 2 + DEPTH * 11 + 2 + 2 + 4 + 4  # pos/mask, patch, blocks, norm, linears, 2 BN


def test_eval_embeddings_equal_torch_dygraph_and_static(converted, torch_run):
    import paddle

    state, _ = converted
    x = _images(torch_run)
    net = _net(state)
    net.eval()
    cos, rel = _close(net(paddle.to_tensor(x)).numpy(), torch_run["eval"])
    assert cos >= COS and rel <= RTOL, (cos, rel)
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.scope_guard(paddle.static.Scope()):
            with paddle.static.program_guard(main, startup):
                static_net = _static_net(state)
                static_net.eval()
                emb = static_net(paddle.static.data("x", [-1, 3, 112, 112], "float32"))
            exe = _run_startup(startup, static_net, state)
            out = exe.run(main, feed={"x": x}, fetch_list=[emb])[0]
    finally:
        paddle.disable_static()
    cos, rel = _close(out, torch_run["eval"])
    assert cos >= COS and rel <= RTOL, (cos, rel)


def _static_net(state):
    from paddle_pfc.backbones.vit import VisionTransformer

    return VisionTransformer(DIM, DEPTH, HEADS, embedding_size=EMBEDDING)


def _run_startup(startup, net, state):
    import paddle

    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    scope = paddle.static.global_scope()
    for key, value in net.state_dict().items():
        scope.var(value.name).get_tensor().set(np.ascontiguousarray(state[key]), paddle.CPUPlace())
    return exe


def test_static_train_step_equals_torch(converted, torch_run):
    """The training program (static PIR, as the trainer builds it): train-mode embeddings, every
    parameter's gradient of ``(emb * w).sum()`` and the BatchNorm running statistics it leaves."""
    import paddle

    import paddle_pfc

    state, _ = converted
    layout = layer_layout(_net(state), extra=vit_map.parameter_kind)
    paddle_pfc.configure_process()
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.scope_guard(paddle.static.Scope()):
            with paddle.static.program_guard(main, startup):
                net = _static_net(state)
                net.train()
                emb = net(paddle.static.data("x", [-1, 3, 112, 112], "float32"))
                loss = (emb * paddle.to_tensor(torch_run["loss_weights"])).sum()
                params = {k: v for k, v in net.named_parameters() if not v.stop_gradient}
                grads = dict(zip(params, paddle.static.gradients([loss], list(params.values()))))
            assert grads.pop("mask_token") is None  # no masking: unused, as in torch (no gradient there)
            exe = _run_startup(startup, net, state)
            fetched = exe.run(main, feed={"x": _images(torch_run)}, fetch_list=[emb, *grads.values()])
            scope = paddle.static.global_scope()
            stats = {key: np.array(scope.var(v.name).get_tensor()) for key, v in net.state_dict().items()
                     if key.endswith(("._mean", "._variance"))}
    finally:
        paddle.disable_static()
    cos, rel = _close(fetched[0], torch_run["train"])
    assert cos >= COS and rel <= RTOL, ("train", cos, rel)
    compared = 0
    for name, grad in zip(grads, fetched[1:]):
        _check_grad(name, _torch_grad(name, grad, layout), torch_run[f"grad.{name}"])
        compared += 1
    assert compared == len([k for k in torch_run if k.startswith("grad.")])
    _check_running_stats(stats, state, torch_run)


def _check_running_stats(stats, state, torch_run) -> None:
    n = len(torch_run["images"])
    for bn in ("feature.1", "feature.3"):
        np.testing.assert_allclose(stats[f"{bn}._mean"], torch_run[f"{bn}.running_mean"], rtol=1e-5, atol=1e-6)
        # torch moves the running variance towards the batch's unbiased variance (n - 1), Paddle towards
        # the biased one (n): the same step, the increment scaled by (n - 1) / n
        old = state[f"{bn}._variance"].astype(np.float64)
        expected = 0.9 * old + (torch_run[f"{bn}.running_var"] - 0.9 * old) * (n - 1) / n
        np.testing.assert_allclose(stats[f"{bn}._variance"], expected, rtol=1e-5)


def test_masked_train_step_equals_torch(converted, torch_run):
    """With masking (ratio 0.1: 129 of 144 tokens kept) and torch's noise: the same embeddings and
    gradients, ``mask_token``'s included (the masked places filled after the final norm)."""
    import paddle

    state, _ = converted
    net = _net(state, mask_ratio=0.1)
    layout = layer_layout(net, extra=vit_map.parameter_kind)
    net.train()
    emb = net(paddle.to_tensor(_images(torch_run)), noise=paddle.to_tensor(torch_run["noise"]))
    (emb * paddle.to_tensor(torch_run["loss_weights"])).sum().backward()
    cos, rel = _close(emb.numpy(), torch_run["train_masked"])
    assert cos >= COS and rel <= RTOL, ("train_masked", cos, rel)
    names = [k[len("masked_grad."):] for k in torch_run if k.startswith("masked_grad.")]
    assert "mask_token" in names and len(names) == len(layout) - 4 - 2  # BN statistics, feature Linears
    params = dict(net.named_parameters())
    for name in names:
        _check_grad(name, _torch_grad(name, params[name].grad.numpy(), layout), torch_run[f"masked_grad.{name}"])


def _shapes(dim: int, depth: int, embedding: int, tokens: int = 144, kernel: int = 9, hidden: int | None = None):
    """arcface_torch ViT tensors (shapes only: read-only zero views)."""
    def t(*shape):
        return np.broadcast_to(np.float32(0), shape)

    tensors = {"pos_embed": t(1, tokens, dim), "mask_token": t(1, 1, dim), FIRST_CONV: t(dim, 3, kernel, kernel),
               "norm.weight": t(dim), "feature.0.weight": t(dim, tokens * dim), "feature.2.weight": t(embedding, dim)}
    for i in range(depth):
        tensors[f"blocks.{i}.attn.qkv.weight"] = t(3 * dim, dim)
        tensors[f"blocks.{i}.mlp.fc1.weight"] = t(hidden or 4 * dim, dim)
    return tensors


@pytest.mark.parametrize("name,dim,depth", [("vit_t", 256, 12), ("vit_s", 512, 12), ("vit_b", 512, 24),
                                            ("vit_l", 768, 24)])
def test_detect_names_the_variant(name, dim, depth):
    assert detect(_shapes(dim, depth, 512), "torch", "m.pt") == (name, 512, (112, 112))


def test_detect_refuses_what_paddle_pfc_has_not():
    assert detect({"conv1.weight": np.zeros((64, 3, 3, 3))}, "torch", "m.pt") is None
    for tensors, words in [(_shapes(384, 12, 512), "width 384 and depth 12"),
                           (_shapes(256, 12, 512, kernel=16), "patches of [16, 16]"),
                           (_shapes(256, 12, 512, hidden=512), "MLP of 4 x 256"),
                           (_shapes(256, 12, 512, tokens=140), "not a square"),
                           (_shapes(256, 12, 512, tokens=4), "no input size")]:
        with pytest.raises(ConversionError, match=re.escape(words)):
            detect(tensors, "torch", "m.pt")
