"""tools/validate.py feeds an exported model as its export.json says (not the training
normalization): its xnorm equals FaceEmbedder's embeddings of the decoded .bin images."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from launcher import REPO


def test_validate_uses_export_json_normalization(tmp_path):
    from paddle_pfc.backbones.state import random_state
    from paddle_pfc.data._image import decode_rgb
    from paddle_pfc.data.synthetic import make_verification_set
    from paddle_pfc.deploy.export import export_backbone
    from paddle_pfc.deploy.inference import FaceEmbedder
    from paddle_pfc.evaluation.bin_set import write_bin

    bins, issame = make_verification_set(4, 20, 32, seed=7)
    write_bin(str(tmp_path / "syn.bin"), bins, issame)
    model = export_backbone("mobilefacenet", 16, 32, random_state("mobilefacenet", 16, 32, seed=8), tmp_path / "m")
    meta = json.loads((model / "export.json").read_text())
    meta["normalization"] = {"inside_model": False, "formula": "x / 255", "mean": 0.0, "std": 255.0}
    (model / "export.json").write_text(json.dumps(meta))
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "validate.py"), "--model", str(model), "--bin",
                           str(tmp_path / "syn.bin"), "--nrof-folds", "2", "--json", str(tmp_path / "out.json")],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    xnorm = json.loads((tmp_path / "out.json").read_text())["sets"]["syn"]["xnorm"]
    images = np.stack([decode_rgb(b, f"image {i}") for i, b in enumerate(bins)])
    embedder = FaceEmbedder(model)
    raw = embedder.embed(images, normalize=False)
    flipped = embedder.embed(np.ascontiguousarray(images[:, :, ::-1]), normalize=False)
    want = float(np.mean(np.linalg.norm(np.concatenate([raw, flipped]).astype(np.float64), axis=1)))
    assert xnorm == pytest.approx(want, rel=1e-4)
