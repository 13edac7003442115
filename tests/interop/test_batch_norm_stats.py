"""paddle_pfc.interop.batch_norm_stats: the batch norms an exporter folded into their convolutions
(the identity after conversion) get their inputs' statistics; the eval-mode model is unchanged, and
training mode (Paddle's own batch norm on the batch's statistics) then computes what eval mode does."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import paddle
import pytest

onnx = pytest.importorskip("onnx")

from helpers.interop_onnx_graphs import GraphWriter  # noqa: E402
from paddle_pfc.interop.torch_reader import read_torch_state  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = a.astype(np.float64), b.astype(np.float64)
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def _train_mode(converted, state, images: np.ndarray) -> np.ndarray:
    """Embeddings with every batch norm but the stored last one (trained on other data) on the
    batch's statistics (Paddle's dygraph layers)."""
    from paddle_pfc.backbones import build_backbone

    paddle.disable_static()
    net = build_backbone(converted.backbone, converted.embedding_size, converted.input_size)
    net.set_state_dict({k: paddle.to_tensor(np.asarray(v)) for k, v in state.items()})
    net.train()
    net.features.layers[3].eval()
    with paddle.no_grad():
        return net(paddle.to_tensor(images)).numpy()


def test_folded_batch_norms_take_their_inputs_statistics(tmp_path):
    from paddle_pfc.deploy.export import EvalProgram
    from paddle_pfc.interop.batch_norm_stats import calibrate_identity_batch_norms, identity_batch_norms
    from paddle_pfc.interop.convert import convert

    path = tmp_path / "mbf.onnx"
    onnx.save(GraphWriter(read_torch_state(FIXTURES / "mbf128_fp16.pt")).mobilefacenet(), path)
    converted = convert(path)
    folded = identity_batch_norms(converted.state)
    assert len(folded) == 49 and "features.layers.3" not in folded  # the stored BatchNorm1d is kept
    rng = np.random.default_rng(0)
    faces = np.load(FIXTURES / "mbf128_images.npy").astype(np.float32)
    images = np.concatenate([faces, faces[:, :, ::-1], rng.uniform(0, 255, (10, 112, 112, 3)).astype(np.float32)])
    images = ((images - 127.5) / 128).transpose(0, 3, 1, 2).copy()

    state, changed = calibrate_identity_batch_norms(converted.state, converted.backbone, converted.embedding_size,
                                                    converted.input_size,
                                                    lambda: (images[i:i + 5] for i in (0, 5, 10, 15)))
    assert changed == 49 and identity_batch_norms(state) == []
    before = EvalProgram(converted.backbone, converted.embedding_size, converted.input_size, converted.state)(images)
    after = EvalProgram(converted.backbone, converted.embedding_size, converted.input_size, state)(images)
    assert np.abs(after - before).max() <= 1e-5 * np.abs(before).max()
    # training mode on the images the statistics came from: the eval model; the identity norms were not
    assert _cosines(_train_mode(converted, state, images), after).min() >= 0.9999
    assert np.median(_cosines(_train_mode(converted, converted.state, images), before)) < 0.9
    untouched = [k for k in state if k.rpartition(".")[0] not in folded]
    for key in untouched:
        np.testing.assert_array_equal(state[key], converted.state[key], err_msg=key)
