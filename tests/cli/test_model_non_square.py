"""The policy that makes images square follows the model: training records ``data.non_square``,
export carries it into ``export.json``, and validate / infer / ``FaceEmbedder`` apply it unless told
otherwise (a model served with another policy than it learnt with is silently worse)."""
from __future__ import annotations

import json
import subprocess
import sys

import cv2
import numpy as np

from launcher import REPO
from paddle_pfc.backbones.state import random_state
from paddle_pfc.cli import infer, validate
from paddle_pfc.deploy.export import export_backbone
from paddle_pfc.deploy.inference import FaceEmbedder
from paddle_pfc.evaluation.bin_set import write_bin

SIZE = 32


def non_square_faces(folder):
    """Three 30x40 (W x H) faces as files and a .bin of their 6 pairs."""
    rng = np.random.default_rng(3)
    faces = [cv2.GaussianBlur(rng.integers(0, 256, (40, 30, 3), dtype=np.uint8), (5, 5), 0) for _ in range(3)]
    paths = []
    for k, face in enumerate(faces):
        paths.append(str(folder / f"face{k}.png"))
        cv2.imwrite(paths[-1], face)
    order = [(0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (2, 0)]
    encoded = [cv2.imencode(".png", f)[1].tobytes() for f in faces]
    write_bin(str(folder / "set.bin"), [encoded[i] for pair in order for i in pair], [a == b for a, b in order])
    return paths


def test_an_export_that_records_its_policy_is_served_by_it(tmp_path, capsys):
    model = export_backbone("mobilefacenet", 16, SIZE, random_state("mobilefacenet", 16, SIZE, seed=2), tmp_path / "m")
    meta = json.loads((model / "export.json").read_text())
    assert "non_square" not in meta  # exported from weights alone: not known
    paths = non_square_faces(tmp_path)
    assert FaceEmbedder(model).non_square == "stretch"
    meta["non_square"] = "pad"
    (model / "export.json").write_text(json.dumps(meta))
    embedder = FaceEmbedder(model)
    assert embedder.non_square == "pad"
    served = embedder.embed(paths)
    assert np.array_equal(served, FaceEmbedder(model, non_square="pad").embed(paths))
    assert not np.allclose(served, FaceEmbedder(model, non_square="stretch").embed(paths), atol=1e-4)
    assert FaceEmbedder(model, non_square="crop").non_square == "crop"
    assert validate.main(["--model", str(model), "--bin", str(tmp_path / "set.bin"), "--nrof-folds", "2"]) == 0
    out = capsys.readouterr().out
    assert "non-square images made square by pad: the policy the model was trained with" in out
    assert "non-square -> padded" in out
    assert validate.main(["--model", str(model), "--bin", str(tmp_path / "set.bin"), "--nrof-folds", "2",
                          "--non-square", "stretch"]) == 0
    out = capsys.readouterr().out
    assert "the policy the model was trained with" not in out and "non-square -> stretched to square" in out
    assert infer.main(["--model", str(model), "--images", paths[0]]) == 0
    out = capsys.readouterr().out
    assert "(non_square: pad)" in out and "made square by pad: the policy the model was trained with" in out


def test_training_records_its_policy_and_export_and_validate_follow_it(tmp_path):
    run = tmp_path / "run"
    proc = subprocess.run([sys.executable, "tools/train.py", "-c", "tests/train_tiny.yaml", "-o", "train.max_steps=1",
                           "-o", "data.non_square=pad", "-o", f"train.output_dir={run}"],
                          cwd=REPO, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    non_square_faces(tmp_path)
    checked = subprocess.run([sys.executable, "tools/validate.py", "--checkpoint", str(run / "checkpoints"), "--bin",
                              str(tmp_path / "set.bin"), "--nrof-folds", "2"],
                             cwd=REPO, capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr[-2000:]
    assert "non-square images made square by pad: the policy the model was trained with" in checked.stdout
    assert "non-square -> padded" in checked.stdout
    export = subprocess.run([sys.executable, "tools/export.py", "--checkpoint", str(run / "checkpoints"), "--out",
                             str(tmp_path / "model")], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert export.returncode == 0, export.stdout[-2000:] + export.stderr[-2000:]
    assert "non-square images: made square by pad, as training did" in export.stdout
    assert json.loads((tmp_path / "model" / "export.json").read_text())["non_square"] == "pad"
    assert FaceEmbedder(tmp_path / "model").non_square == "pad"
