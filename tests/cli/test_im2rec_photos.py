"""paddle-pfc-im2rec on real-photo shapes: grey and 92x112 images converted by the one policy and said in one
line; --landmarks aligns each image on the ArcFace template first."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from paddle_pfc.cli import im2rec
from paddle_pfc.data.recordio import RecordDataset
from paddle_pfc.evaluation.face_align import ARCFACE_TEMPLATE


def smooth(rng, shape) -> np.ndarray:
    return cv2.GaussianBlur(rng.integers(0, 256, shape, dtype=np.uint8), (9, 9), 0)


@pytest.fixture
def folder(tmp_path):
    rng = np.random.default_rng(1)
    root = tmp_path / "faces"
    root.mkdir()
    images = {"a.pgm": smooth(rng, (112, 92)), "b.pgm": smooth(rng, (112, 92)), "c.png": smooth(rng, (150, 150, 3))}
    for name, img in images.items():
        cv2.imwrite(str(root / name), img)
    (root / "label.txt").write_text("a.pgm\t0\nb.pgm\t0\nc.png\t1\n")
    return root, images


def decoded(out) -> list[np.ndarray]:
    ds = RecordDataset(root=str(out), image_size=None)
    return [ds[i][0] for i in range(len(ds))]


def test_grey_and_non_square_images_are_converted_and_said_once(folder, tmp_path, capsys):
    root, images = folder
    assert im2rec.main(["--root", str(root), "--output", str(tmp_path / "rec"), "--image-size", "112",
                        "--workers", "0", "--quality", "100", "--non-square", "pad"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("im2rec: images:")]
    assert len(lines) == 1
    assert lines[0].startswith(f"im2rec: images: 2 grey (first: {root / 'a.pgm'}), 2 not square (first: "
                               f"{root / 'a.pgm'} 92x112), 1 resized to 112x112 (first: {root / 'c.png'} 150x150)")
    a = decoded(tmp_path / "rec")[0]
    expected = cv2.copyMakeBorder(images["a.pgm"], 0, 0, 10, 10, cv2.BORDER_REPLICATE)
    assert a.shape == (112, 112, 3) and np.abs(a.astype(int) - expected[:, :, None].astype(int)).mean() < 1.5


def test_landmarks_align_each_image_first(folder, tmp_path, capsys):
    root, images = folder
    shift = np.array([3.0, -4.0])  # every face's points: the template moved by (3, -4)
    lines = [f"faces/{name} " + " ".join(f"{v:g}" for v in (ARCFACE_TEMPLATE + shift).ravel()) for name in images]
    (tmp_path / "points.txt").write_text("\n".join(lines[:2]) + "\n")
    assert im2rec.main(["--root", str(root), "--output", str(tmp_path / "missing"), "--workers", "0",
                        "--landmarks", str(tmp_path / "points.txt")]) == 2
    assert "c.png: no line of the --landmarks file names this image" in capsys.readouterr().err
    (tmp_path / "points.txt").write_text("\n".join(lines) + "\n")  # paths relative to the file's folder
    assert im2rec.main(["--root", str(root), "--output", str(tmp_path / "rec"), "--workers", "0", "--quality", "100",
                        "--landmarks", str(tmp_path / "points.txt")]) == 0
    c = decoded(tmp_path / "rec")[2]
    reference = np.zeros((112, 112, 3), np.uint8)  # the photo moved by (-3, +4), black where it has no pixel
    reference[4:, :] = images["c.png"][:108, 3:115][:, :, ::-1]
    error = np.abs(c.astype(int) - reference.astype(int))[5:-1, 1:-1].mean()
    unmoved = np.abs(c.astype(int) - images["c.png"][:112, :112, ::-1].astype(int))[5:-1, 1:-1].mean()
    assert c.shape == (112, 112, 3) and error < 3 < 3 * error < unmoved  # JPEG's error, far from a wrong shift


@pytest.mark.parametrize("non_square, said", [("crop", "centre-cropped to square"),
                                              ("stretch", "stretched to square (aspect ratio not kept)")])
def test_non_square_chooses_how_a_photo_becomes_square(folder, tmp_path, capsys, non_square, said):
    root, images = folder
    assert im2rec.main(["--root", str(root), "--output", str(tmp_path / "rec"), "--image-size", "92",
                        "--workers", "0", "--quality", "100", "--non-square", non_square]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("im2rec: images:")]
    assert len(lines) == 1 and f"non-square -> {said}, then resized (non_square: {non_square})" in lines[0]
    a = decoded(tmp_path / "rec")[0]
    if non_square == "crop":  # the centre 92x92 of the 92x112 face, no resize
        expected = images["a.pgm"][10:102]
    else:
        expected = cv2.resize(images["a.pgm"], (92, 92), interpolation=cv2.INTER_LINEAR)
    assert a.shape == (92, 92, 3) and np.abs(a.astype(int) - expected[:, :, None].astype(int)).mean() < 1.5


def test_an_unknown_non_square_policy_is_a_usage_error(folder, tmp_path, capsys):
    root, _ = folder
    with pytest.raises(SystemExit) as exit_:
        im2rec.main(["--root", str(root), "--output", str(tmp_path / "rec"), "--non-square", "squash"])
    assert exit_.value.code == 2 and "--non-square: invalid choice: 'squash'" in capsys.readouterr().err
