"""validate --model X.onnx without export.json: fed as the field's models are ((x - 127.5) / 127.5,
what FaceEmbedder does), without a warning about the missing export.json."""
from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest

pytest.importorskip("paddle2onnx")
pytest.importorskip("onnxruntime")


def test_a_bare_onnx_model_is_validated_quietly_as_the_field_feeds_it(tmp_path, capsys):
    from paddle_pfc.backbones.state import random_state
    from paddle_pfc.cli import validate
    from paddle_pfc.data._image import decode_rgb
    from paddle_pfc.data.synthetic import make_verification_set
    from paddle_pfc.deploy.export import export_backbone
    from paddle_pfc.deploy.inference import FaceEmbedder
    from paddle_pfc.deploy.onnx_export import export_onnx
    from paddle_pfc.evaluation.bin_set import write_bin

    bins, issame = make_verification_set(4, 20, 32, seed=3)
    write_bin(str(tmp_path / "syn.bin"), bins, issame)
    model = export_backbone("mobilefacenet", 16, 32, random_state("mobilefacenet", 16, 32, seed=4), tmp_path / "m")
    (tmp_path / "bare").mkdir()
    shutil.copyfile(export_onnx(model), tmp_path / "bare" / "public.onnx")
    onnx = str(tmp_path / "bare" / "public.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        assert validate.main(["--model", onnx, "--bin", str(tmp_path / "syn.bin"), "--nrof-folds", "2",
                              "--json", str(tmp_path / "out.json")]) == 0
    out = capsys.readouterr()
    assert "export.json" not in out.out + out.err
    import json

    xnorm = json.loads((tmp_path / "out.json").read_text())["sets"]["syn"]["xnorm"]
    images = np.stack([decode_rgb(b, f"image {i}") for i, b in enumerate(bins)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        embedder = FaceEmbedder(onnx)
    raw = embedder.embed(images, normalize=False)
    flipped = embedder.embed(np.ascontiguousarray(images[:, :, ::-1]), normalize=False)
    want = float(np.mean(np.linalg.norm(np.concatenate([raw, flipped]).astype(np.float64), axis=1)))
    assert xnorm == pytest.approx(want, rel=1e-4)
    assert out.out.strip().splitlines()[-1].startswith("verdict: syn: ")
