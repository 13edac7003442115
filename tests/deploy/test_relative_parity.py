"""Export parity checks are relative: a correct model with large embeddings passes."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from paddle_pfc.backbones.state import random_state
from paddle_pfc.cli import export as export_cli
from paddle_pfc.deploy.parity import agreement, relative_difference

needs_onnx = pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("paddle2onnx", "onnxruntime")),
                                reason="paddle2onnx / onnxruntime not installed")

SIZE, EMB = 32, 64


def test_relative_difference():
    ref = np.array([[600.0, -300.0], [1.0, 2.0]])
    assert relative_difference(ref + 0.003, ref) == pytest.approx(0.003 / 600.0)
    assert relative_difference(ref, ref) == 0.0
    assert relative_difference(np.zeros(3), np.zeros(3)) == 0.0
    assert relative_difference(np.ones(3), np.zeros(3)) == float("inf")
    assert np.isnan(relative_difference(np.array([np.nan]), np.array([1.0])))
    with pytest.raises(ValueError, match="shapes differ"):
        relative_difference(np.zeros(2), np.zeros(3))



def test_agreement_is_the_smallest_cosine_and_the_relative_difference():
    reference = np.array([[3.0, 4.0], [1.0, 0.0]])
    actual = np.array([[3.0, 4.0], [1.0, 1.0]], dtype=np.float32)  # image 1 turned by 45 degrees
    cosine, relative = agreement(actual, reference)
    assert cosine == pytest.approx(np.sqrt(0.5), rel=1e-12)
    assert relative == pytest.approx(1.0 / 4.0, rel=1e-12)
    assert agreement(reference * 2.0, reference) == (pytest.approx(1.0, rel=1e-12), pytest.approx(1.0, rel=1e-12))

@needs_onnx
def test_onnx_export_of_large_embeddings_passes(tmp_path, capsys):
    """A random-init iresnet whose embeddings reach ~600 (the fc scaled): onnxruntime and Paddle
    Inference agree to float32 rounding, which in absolute terms exceeds 1e-4."""
    state = random_state("iresnet18", EMB, SIZE, seed=0)
    state["fc.weight"] = state["fc.weight"] * 400.0
    weights = tmp_path / "big.npz"
    np.savez(weights, **state)
    out = tmp_path / "model"
    rc = export_cli.main(["--weights", str(weights), "--backbone", "iresnet18", "--embedding-size", str(EMB),
                          "--input-size", str(SIZE), "--out", str(out), "--format", "onnx"])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "onnxruntime vs Paddle Inference" in text and "FAILED" not in text

    from paddle_pfc.deploy.predictor import EmbeddingModel

    x = np.random.RandomState(0).uniform(-1, 1, (4, 3, SIZE, SIZE)).astype(np.float32)
    paddle_out = EmbeddingModel(out)(x)
    onnx_out = EmbeddingModel(out / "model.onnx")(x)
    assert np.abs(paddle_out).max() > 300  # large outputs: the case an absolute tolerance got wrong
    assert relative_difference(onnx_out, paddle_out) <= 1e-4
