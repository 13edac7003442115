"""paddle-pfc-convert writes an exported model that FaceEmbedder runs to the source's embeddings of the
same images (export.json records the source and its normalization); --pretrained takes the source
file and the converted folder, and fine-tuning starts from exactly the converted backbone."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from helpers.interop_onnx_graphs import GraphWriter, torch_named  # noqa: E402
from helpers.side_by_side import side_by_side  # noqa: E402
from launcher import REPO  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures"
WORKER = REPO / "tests" / "workers" / "train_worker.py"
CONFIG = REPO / "tests" / "train_tiny.yaml"  # mobilefacenet, embedding 32, input 32


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
                GLOG_minloglevel="2")


@pytest.fixture(scope="module")
def tiny_onnx(tmp_path_factory):
    """An arcface_torch-style MobileFaceNet ONNX (embedding 32, input 32, random weights)."""
    from paddle_pfc.backbones.state import random_state

    state = torch_named(random_state("mobilefacenet", 32, 32, seed=5))
    path = tmp_path_factory.mktemp("tiny") / "mbf32.onnx"
    onnx.save(GraphWriter(state).mobilefacenet(embedding_size=32, input_size=32), path)
    return path


def test_convert_cli_embeds_images_as_the_source(tmp_path):
    """The torch fixture through the command; FaceEmbedder on uint8 images (normalized as export.json
    says) gives torch's embeddings."""
    from paddle_pfc.deploy.inference import FaceEmbedder

    out = tmp_path / "converted"
    convert = [sys.executable, str(REPO / "tools" / "convert.py"), str(FIXTURES / "mbf128_fp16.pt")]
    proc, bad = side_by_side(  # a conversion and a refused one, independent
        partial(subprocess.run, [*convert, "--backbone", "mbf", "--output", str(out)], cwd=REPO, env=_env(),
                capture_output=True, text=True, timeout=300),
        partial(subprocess.run, [*convert, "--backbone", "r100", "--output", str(tmp_path / "x")], cwd=REPO,
                env=_env(), capture_output=True, text=True, timeout=300))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "mobilefacenet (embedding 128, input 112x112)" in proc.stdout
    meta = json.loads((out / "export.json").read_text())
    assert meta["backbone"] == "mobilefacenet" and meta["embedding_size"] == 128
    assert meta["source"]["format"] == "torch"
    assert meta["source"]["normalization"]["formula"] == "(x / 255 - 0.5) / 0.5"
    images = np.load(FIXTURES / "mbf128_images.npy")
    emb = FaceEmbedder(out).embed(list(images), normalize=False).astype(np.float64)
    ref = np.load(FIXTURES / "mbf128_emb.npy").astype(np.float64)
    cos = (emb * ref).sum(1) / (np.linalg.norm(emb, axis=1) * np.linalg.norm(ref, axis=1))
    assert cos.min() >= 0.99999 and np.abs(emb - ref).max() / np.abs(ref).max() <= 1e-4

    assert bad.returncode == 2 and "holds a mobilefacenet backbone, but --backbone r100" in bad.stderr


def test_finetune_from_a_converted_model(tiny_onnx, tmp_path):
    """--pretrained the .onnx itself: the run starts from exactly the converted backbone (its
    parameters, its eval embeddings); a few steps train; the converted folder reads back the same
    backbone."""
    from paddle_pfc.deploy.export import EvalProgram
    from paddle_pfc.engine.pretrained import read_pretrained
    from paddle_pfc.interop.convert import convert

    converted = convert(tiny_onnx)
    assert (converted.backbone, converted.embedding_size, converted.input_size) == ("mobilefacenet", 32, (32, 32))
    pre = read_pretrained(tiny_onnx)
    assert (pre.kind == "converted onnx"
            and (pre.backbone, pre.embedding_size, pre.input_size) == ("mobilefacenet", 32, 32))
    assert pre.normalization["std"] == 127.5 and pre.normalization["mean"] == 127.5  # kept for its exports

    def run(name: str, *overrides: str) -> dict:
        out = tmp_path / name
        out.mkdir()
        cmd = [sys.executable, str(WORKER), "--config", str(CONFIG), "--out", str(out),
               "-o", f"train.output_dir={tmp_path / 'runs' / name}", "-o", f"model.pretrained={tiny_onnx}",
               "-o", "train.checkpoint_every_steps=0"]
        for item in overrides:
            cmd += ["-o", item]
        proc = subprocess.run(cmd, cwd=REPO, env=_env(),
                              capture_output=True, text=True, timeout=400)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        said = proc.stdout + proc.stderr  # the measurement is announced before it runs, then its result
        assert said.index("measuring their inputs' statistics on") < said.index("(the eval-mode model unchanged)")
        return dict(np.load(out / "rank0.npz"))

    # two steps with the backbone frozen (its BatchNorm statistics too): the backbone is the converted one,
    # but for the batch norms its exporter folded away, which have their inputs' statistics (the eval
    # embeddings unchanged)
    from paddle_pfc.interop.batch_norm_stats import identity_batch_norms

    folder = tmp_path / "converted"
    start, tuned, proc = side_by_side(  # three independent commands, two at a time
        partial(run, "start", "train.max_steps=2", "train.freeze_backbone_steps=2"),
        partial(run, "tuned", "train.max_steps=3"),
        partial(subprocess.run, [sys.executable, str(REPO / "tools" / "convert.py"), str(tiny_onnx), "--output",
                                 str(folder)], cwd=REPO, env=_env(), capture_output=True, text=True, timeout=300))
    folded = identity_batch_norms(converted.state)
    assert len(folded) == 49
    offset = 0
    for key, value in converted.state.items():
        got = start["backbone"][offset:offset + value.size].reshape(value.shape)
        offset += value.size
        if key.rpartition(".")[0] not in folded:
            np.testing.assert_array_equal(got, value, err_msg=key)
        elif key.endswith("._variance"):
            assert not np.any(got == value), key  # no longer the identity's 1 - epsilon
    expected = EvalProgram("mobilefacenet", 32, 32, converted.state)(start["probe_images"])
    np.testing.assert_allclose(start["eval_embedding"], expected, rtol=1e-4, atol=1e-5)

    assert len(tuned["loss"]) == 3 and np.all(np.isfinite(tuned["loss"]))
    assert not np.allclose(tuned["eval_embedding"], start["eval_embedding"])

    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "converted vs onnxruntime on the source: min cosine" in proc.stdout and "FAILED" not in proc.stdout
    from_folder = read_pretrained(folder)
    assert from_folder.normalization["std"] == 127.5
    for key, value in converted.state.items():
        np.testing.assert_array_equal(from_folder.state[key], value, err_msg=key)
