"""Fine-tuning a public model (served (x - 127.5) / 127.5) and exporting it: the export takes the
source's normalization again, and on raw pixels gives the embeddings the checkpoint gives on the
training input (x - 127.5) / 128."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from helpers.interop_onnx_graphs import GraphWriter, torch_named  # noqa: E402
from launcher import REPO  # noqa: E402


def test_export_of_a_fine_tuned_public_model_takes_the_source_normalization(tmp_path):
    from paddle_pfc.backbones.state import random_state
    from paddle_pfc.deploy.export import EvalProgram
    from paddle_pfc.deploy.inference import FaceEmbedder
    from paddle_pfc.engine.checkpoint import model_from_checkpoint

    source = tmp_path / "public.onnx"
    onnx.save(GraphWriter(torch_named(random_state("mobilefacenet", 32, 32, seed=5))).mobilefacenet(
        embedding_size=32, input_size=32), source)
    run = tmp_path / "run"
    proc = subprocess.run([sys.executable, "tools/train.py", "-c", "tests/train_tiny.yaml", "--pretrained", str(source),
                           "-o", "train.max_steps=1", "-o", "validation.synthetic_pairs=20",
                           "-o", "validation.nrof_folds=2", "-o", f"train.output_dir={run}"],
                          cwd=REPO, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "the source model takes (x / 255 - 0.5) / 0.5" in proc.stdout
    meta = json.loads((run / "best" / "meta.json").read_text())
    assert meta["input_normalization"]["std"] == 127.5
    export = subprocess.run([sys.executable, "tools/export.py", "--checkpoint", str(run / "best"), "--out",
                             str(tmp_path / "model")], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert export.returncode == 0, export.stdout[-2000:] + export.stderr[-2000:]
    assert "model input: float32 NCHW RGB normalized (x / 255 - 0.5) / 0.5 (not inside the model), as the model " \
           "it was fine-tuned from" in export.stdout
    normalization = json.loads((tmp_path / "model" / "export.json").read_text())["normalization"]
    assert (normalization["mean"], normalization["std"]) == (127.5, 127.5)
    pixels = np.random.default_rng(0).integers(0, 256, (3, 32, 32, 3), dtype=np.uint8)
    served = FaceEmbedder(tmp_path / "model").embed(list(pixels), normalize=False).astype(np.float64)
    model, state = model_from_checkpoint(run / "best")
    trained = EvalProgram("mobilefacenet", 32, 32, state)(
        ((pixels.astype(np.float32) - 127.5) / 128.0).transpose(0, 3, 1, 2).copy()).astype(np.float64)
    assert np.abs(served - trained).max() <= 1e-4 * np.abs(trained).max()
