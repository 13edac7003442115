"""One threshold language: validate reports and records a cosine threshold of flip-summed embeddings,
embedding each distinct image once; infer flip-sums the same way and defaults to the recorded threshold."""
from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from paddle_pfc.backbones.state import random_state
from paddle_pfc.cli import infer, validate
from paddle_pfc.deploy.export import export_backbone
from paddle_pfc.deploy.inference import FaceEmbedder
from paddle_pfc.evaluation.bin_set import write_bin
from paddle_pfc.evaluation.verification import evaluate_pairs

SIZE = 32


@pytest.fixture(scope="module")
def model_and_set(tmp_path_factory):
    """An export and a .bin of 12 pairs drawn from 6 images (grey and 92x112-shaped ones among them)."""
    folder = tmp_path_factory.mktemp("thresholds")
    state = random_state("mobilefacenet", 16, SIZE, seed=5)
    model = export_backbone("mobilefacenet", 16, SIZE, state, folder / "model")
    rng = np.random.default_rng(0)
    faces = [cv2.GaussianBlur(rng.integers(0, 256, (SIZE, SIZE, 3), dtype=np.uint8), (5, 5), 0) for _ in range(4)]
    faces.append(np.repeat(rng.integers(0, 256, (SIZE, SIZE, 1), dtype=np.uint8), 3, axis=2))  # grey
    faces.append(cv2.GaussianBlur(rng.integers(0, 256, (40, 30, 3), dtype=np.uint8), (5, 5), 0))  # 30x40 (WxH)
    encoded = [cv2.imencode(".png", f)[1].tobytes() for f in faces]
    order = [(0, 1), (2, 3), (4, 5), (0, 2), (1, 3), (5, 0), (1, 1), (2, 2), (3, 4), (4, 4), (5, 5), (0, 0)]
    issame = [a == b for a, b in order]
    write_bin(str(folder / "pairs.bin"), [encoded[i] for pair in order for i in pair], issame)
    paths = []
    for k, f in enumerate(faces):
        paths.append(str(folder / f"face{k}.png"))
        cv2.imwrite(paths[-1], f)
    return folder, str(model), paths


def test_validate_embeds_distinct_images_once_and_records_a_cosine_threshold(model_and_set, capsys):
    folder, model, _ = model_and_set
    assert validate.main(["--model", model, "--bin", str(folder / "pairs.bin"), "--nrof-folds", "3", "--record",
                          "--json", str(folder / "out.json")]) == 0
    out = capsys.readouterr().out
    assert "pairs: embedded 6 distinct images of 24" in out
    assert "pairs: images: 4 grey (first: " in out and "4 not square (first: " in out  # of the 24 pair members
    result = json.loads((folder / "out.json").read_text())["sets"]["pairs"]
    # reference: every image of every pair embedded, flip-summed, through the library's loader
    from paddle_pfc.evaluation.validation import load_pairs

    images, issame = load_pairs(folder / "pairs.bin", SIZE)
    embedder = FaceEmbedder(model)
    summed = embedder.forward(images) + embedder.forward(np.ascontiguousarray(images[:, :, :, ::-1]))
    ref = evaluate_pairs(summed, issame, 3)
    assert result["threshold"] == pytest.approx(1 - ref.threshold / 2) and result["accuracy"] == ref.accuracy
    assert result["distinct_images"] == 6 and result["images"] == 24
    record = json.loads((folder / "model" / "validation.json").read_text())
    assert record["threshold"] == result["threshold"] and record["threshold_kind"] == "cosine similarity"
    assert f"recorded threshold {result['threshold']:.3f} (cosine, pairs)" in out


def test_infer_uses_the_recorded_threshold_and_flip_sums(model_and_set, capsys):
    folder, model, paths = model_and_set
    assert validate.main(["--model", model, "--bin", str(folder / "pairs.bin"), "--nrof-folds", "3", "--record"]) == 0
    recorded = json.loads((folder / "model" / "validation.json").read_text())["threshold"]
    capsys.readouterr()
    assert infer.main(["--model", model, "--compare", paths[0], paths[5]]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    embedder = FaceEmbedder(model)
    rgb = [cv2.cvtColor(cv2.imread(p), cv2.COLOR_BGR2RGB) for p in (paths[0], paths[5])]
    flipped = embedder.embed(rgb, normalize=False, flip=True)
    unit = flipped / np.linalg.norm(flipped, axis=1, keepdims=True)
    cosine = float(unit[0] @ unit[1])
    verdict = "SAME" if cosine >= recorded else "DIFFERENT"
    assert line.startswith(f"{verdict}: cosine similarity {cosine:.4f}")
    assert f"threshold {recorded:.3f} (recorded by validation in {folder / 'model' / 'validation.json'} (pairs, " \
           f"12 pairs); flip-summed)" in line
    assert infer.main(["--model", model, "--compare", paths[0], paths[5], "--threshold", "0.2", "--no-flip"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    plain = embedder.embed(rgb, flip=False)
    assert f"cosine similarity {float(plain[0] @ plain[1]):.4f}" in line
    assert "threshold 0.200 (--threshold; no flip)" in line


def test_infer_without_a_threshold_says_how_to_get_one(tmp_path, model_and_set, capsys):
    _, _, paths = model_and_set
    bare = export_backbone("mobilefacenet", 16, SIZE, random_state("mobilefacenet", 16, SIZE, seed=6), tmp_path / "m")
    assert infer.main(["--model", str(bare), "--compare", paths[0], paths[1]]) == 2
    err = capsys.readouterr().err
    assert "has no validation record: give --threshold COSINE, or record one with paddle-pfc-validate --model MODEL " \
           "--bin SET.bin --record" in err
    (tmp_path / "m" / "validation.json").write_text('{"threshold": 1.7, "threshold_kind": "cosine similarity"}')
    assert infer.main(["--model", str(bare), "--compare", paths[0], paths[1]]) == 2
    assert "validation.json: holds no cosine-similarity \"threshold\" in [-1, 1]" in capsys.readouterr().err


def test_infer_aligns_on_landmarks(model_and_set, tmp_path, capsys):
    from paddle_pfc.evaluation.face_align import ARCFACE_TEMPLATE, align_face

    _, model, _ = model_and_set
    rng = np.random.default_rng(3)
    photo = cv2.GaussianBlur(rng.integers(0, 256, (150, 130, 3), dtype=np.uint8), (7, 7), 0)
    cv2.imwrite(str(tmp_path / "photo.png"), photo)
    points = ARCFACE_TEMPLATE * 1.1 + [5.0, 9.0]
    (tmp_path / "points.txt").write_text("photo.png " + " ".join(repr(float(v)) for v in points.ravel()) + "\n")
    assert infer.main(["--model", model, "--images", str(tmp_path / "photo.png"), "--landmarks",
                       str(tmp_path / "points.txt")]) == 0
    out = capsys.readouterr().out
    crop = align_face(photo[:, :, ::-1], points)  # RGB, 112x112, then resized to the model's 32x32
    raw = FaceEmbedder(model).embed([crop], normalize=False, flip=True)
    assert f"norm {np.linalg.norm(raw[0]):.4f}" in out
    assert "images: 1 resized to 32x32 (first: images[0] 112x112)" in out
    assert infer.main(["--model", model, "--images", str(tmp_path / "photo.png"), str(tmp_path / "points.txt"),
                       "--landmarks", str(tmp_path / "points.txt")]) == 2
    assert "no line for " in capsys.readouterr().err
