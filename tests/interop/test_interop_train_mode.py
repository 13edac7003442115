"""An arcface_torch ``.pt`` given to ``model.pretrained`` (itself or converted) trains from the network torch has: the
training program's first step embeds a batch as torch's ``train()`` does (BatchNorms on the batch's
statistics), its eval program as torch's ``eval()``, and that step moves every BatchNorm's running
statistics as torch's one train-mode forward does (with Paddle's biased batch variance).

Fixture: tests/interop/fixtures/mbf128_train.npz, written by tests/interop/make_interop_fixtures.py
(torch 2.13.0, arcface_torch's ``get_mbf``, the network of ``mbf128_fp16.pt``)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import paddle_pfc
from paddle_pfc.interop.torch_reader import read_torch_state

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MBF = FIXTURES / "mbf128_fp16.pt"
BATCH = 8
# float32 through ~50 layers, each framework with its own kernels: relative to the largest value
RTOL = 1e-4


def _agreement(emb: np.ndarray, ref: np.ndarray) -> tuple[float, float]:
    emb, ref = emb.astype(np.float64), ref.astype(np.float64)
    cos = (emb * ref).sum(1) / (np.linalg.norm(emb, axis=1) * np.linalg.norm(ref, axis=1))
    return float(cos.min()), float(np.abs(emb - ref).max() / np.abs(ref).max())


@pytest.fixture(scope="module")
def torch_run() -> dict[str, np.ndarray]:
    return dict(np.load(FIXTURES / "mbf128_train.npz"))


@pytest.fixture(scope="module", params=["pt", "converted folder"])
def source(request, tmp_path_factory) -> Path:
    """What ``model.pretrained`` names: the ``.pt`` itself, or the folder ``paddle-pfc-convert`` wrote."""
    if request.param == "pt":
        return MBF
    from paddle_pfc.cli.convert import main as convert_main

    out = tmp_path_factory.mktemp("converted") / "mbf128"
    assert convert_main([str(MBF), "--output", str(out)]) == 0
    return out


@pytest.fixture()
def first_step(static_mode, tmp_path, torch_run, source):
    """The training programs of a run with ``model.pretrained`` = ``source``, initialised as a fresh
    run initialises them: eval embeddings before the first step, that step's embeddings, and the
    backbone's tensors after it."""
    import paddle

    from launcher import REPO
    from paddle_pfc.engine.builder import build_programs
    from paddle_pfc.engine.config import load_config
    from paddle_pfc.engine.pretrained import init_from_pretrained

    paddle_pfc.init_distributed()
    cfg = load_config(str(REPO / "tests" / "train_tiny.yaml"),
                      ["model.embedding_size=128", "model.input_size=112", f"model.pretrained={source}",
                       f"train.batch_size={BATCH}", "data.num_classes=4", f"train.output_dir={tmp_path}"])
    x = ((torch_run["images"].astype(np.float32) - 127.5) / 128.0).transpose(0, 3, 1, 2).copy()
    with paddle.static.scope_guard(paddle.static.Scope()):
        programs = build_programs(cfg, 0, 1, 0.1, 10, sync=lambda phase: 0.0)
        init_from_pretrained(cfg, programs, [], 0)
        before = programs.embed(x)
        feature = programs.head.input_dict["feature"]
        labels = np.arange(BATCH, dtype=np.int64) % 4
        train = programs.exe.run(programs.main, feed={"images": x, "labels": labels}, fetch_list=[feature])[0]
        after = {key: programs.read(name) for key, name in programs.backbone_names.items()}
    return before, train, after


def test_first_training_step_embeds_as_torch_train_mode(first_step, torch_run):
    before, train, after = first_step
    cos, rel = _agreement(before, torch_run["eval"])
    assert cos >= 0.99999 and rel <= RTOL, ("eval", cos, rel)
    cos, rel = _agreement(train, torch_run["train"])
    assert cos >= 0.99999 and rel <= RTOL, ("train", cos, rel)
    # the two modes differ on this network (its stored statistics are not this batch's)
    assert _agreement(torch_run["train"], torch_run["eval"])[0] < 0.5

    names = [key[: -len(".count")] for key in torch_run if key.endswith(".count")]
    assert len(names) == 50
    stored = read_torch_state(MBF)
    for name in names:
        np.testing.assert_allclose(after[f"{name}._mean"], torch_run[f"{name}.running_mean"], rtol=1e-4, atol=1e-6,
                                   err_msg=name)
        # torch moves the running variance towards the batch's unbiased variance (n - 1), Paddle towards
        # the biased one (n): the same step, the increment scaled by (n - 1) / n
        n, old = int(torch_run[f"{name}.count"]), stored[f"{name}.running_var"].astype(np.float64)
        expected = 0.9 * old + (torch_run[f"{name}.running_var"] - 0.9 * old) * (n - 1) / n
        np.testing.assert_allclose(after[f"{name}._variance"], expected, rtol=1e-4, err_msg=name)
