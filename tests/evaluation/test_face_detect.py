"""SCRFD decoding, suppression and alignment, on a tiny ONNX graph whose outputs are fixed SCRFD-shaped
tensors (no real detector needed): boxes and landmarks computed by hand."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from paddle_pfc.evaluation.face_align import ARCFACE_TEMPLATE  # noqa: E402
from paddle_pfc.evaluation.face_detect import FaceDetector, non_max_suppression  # noqa: E402
from paddle_pfc.utils.errors import InputDataError  # noqa: E402

SIDE = 64  # the network input the fixed outputs belong to: (64 / stride)^2 cells x 2 anchors
COUNTS = {8: 128, 16: 32, 32: 8}


def fake_scrfd(path, outputs: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]], drop_one: bool = False) -> str:
    """An ONNX model ignoring its input and returning ``outputs[stride] = (scores, boxes, kps)``
    as SCRFD's nine outputs [1, n, c] (scores of strides 8, 16, 32, then boxes, then landmarks)."""
    names, nodes, infos = [], [], []
    for j, what in enumerate(("score", "bbox", "kps")):
        for stride in (8, 16, 32):
            name = f"{what}_{stride}"
            value = outputs[stride][j].astype(np.float32)[None]
            nodes.append(helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value, name + "_v")))
            infos.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(value.shape)))
            names.append(name)
    if drop_one:
        nodes, infos = nodes[:-1], infos[:-1]
    graph = helper.make_graph(nodes, "fake_scrfd",
                              [helper.make_tensor_value_info("input.1", TensorProto.FLOAT, [1, 3, None, None])], infos)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return str(path)


def empty_outputs() -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    return {s: (np.zeros((n, 1)), np.zeros((n, 4)), np.zeros((n, 10))) for s, n in COUNTS.items()}


def anchor(stride: int, row: int, col: int, k: int) -> tuple[int, np.ndarray]:
    """Index of anchor ``k`` of cell (row, col) and the cell's corner (x, y) in input pixels."""
    return (row * (SIDE // stride) + col) * 2 + k, np.array([col * stride, row * stride], np.float64)


def test_decoding_and_suppression(tmp_path):
    out = empty_outputs()
    i, c = anchor(16, 1, 2, 1)  # corner (32, 16)
    out[16][0][i] = 0.9
    out[16][1][i] = [1, 1, 2, 2]  # distances in strides: box (32-16, 16-16, 32+32, 16+32)
    out[16][2][i] = np.arange(10) * 0.1
    j, _ = anchor(16, 1, 2, 0)  # the same box, lower score: suppressed
    out[16][0][j], out[16][1][j] = 0.7, [1, 1, 2, 2]
    m, cm = anchor(8, 6, 1, 0)  # corner (8, 48): another face, kept
    out[8][0][m], out[8][1][m] = 0.6, [0.5, 0.5, 1, 1]
    low, _ = anchor(32, 0, 0, 0)
    out[32][0][low], out[32][1][low] = 0.3, [1, 1, 1, 1]  # under the score threshold
    detector = FaceDetector(fake_scrfd(tmp_path / "det.onnx", out), (SIDE, SIDE), score_threshold=0.5)
    faces = detector.detect(np.zeros((SIDE, SIDE, 3), np.uint8))
    assert [f.score for f in faces] == pytest.approx([0.9, 0.6])
    np.testing.assert_allclose(faces[0].box, [16, 0, 64, 48])
    np.testing.assert_allclose(faces[0].landmarks, c + np.arange(10).reshape(5, 2) * 0.1 * 16, atol=1e-5)
    np.testing.assert_allclose(faces[1].box, cm[[0, 1, 0, 1]] + [-4, -4, 8, 8])
    # a larger photo is shrunk into the input: boxes come back in its pixels
    big = detector.detect(np.zeros((2 * SIDE, 2 * SIDE, 3), np.uint8))
    np.testing.assert_allclose(big[0].box, 2 * np.array([16, 0, 64, 48]))


def test_nms_keeps_the_best_of_overlapping_boxes():
    boxes = np.array([[0, 0, 9, 9], [1, 1, 10, 10], [20, 20, 29, 29], [0, 0, 9, 4]], np.float64)
    scores = np.array([0.5, 0.9, 0.8, 0.7])
    # IoU(0, 1) = 81 / 119 > 0.4; IoU(1, 3) = 36 / 114 < 0.4 (areas in whole pixels)
    assert non_max_suppression(boxes, scores, 0.4) == [1, 2, 3]


def test_detect_then_align_writes_the_template_crop(tmp_path):
    from paddle_pfc.cli import align

    points = ARCFACE_TEMPLATE + [4.0, 6.0]  # where the face's five points lie in a 128x128 photo
    out = empty_outputs()
    i, corner = anchor(32, 1, 1, 0)
    out[32][0][i], out[32][1][i] = 0.95, [0.5, 0.5, 0.5, 0.5]
    out[32][2][i] = ((points / 2 - corner) / 32).ravel()  # the photo is shrunk by 2 into the 64x64 input
    model = fake_scrfd(tmp_path / "det.onnx", out)
    y, x = np.mgrid[:128, :128]
    photo = np.stack([2 * x, 2 * y, x + y], axis=-1).astype(np.uint8)  # smooth: JPEG keeps it within a few levels
    cv2.imwrite(str(tmp_path / "photo.png"), cv2.cvtColor(photo, cv2.COLOR_RGB2BGR))
    assert align.main(["--detector", model, "--detector-size", str(SIDE), "--images", str(tmp_path / "photo.png"),
                       "--output", str(tmp_path / "aligned")]) == 0
    crop = cv2.cvtColor(cv2.imread(str(tmp_path / "aligned" / "photo.jpg")), cv2.COLOR_BGR2RGB)
    # the points sit at the template moved by (4, 6): the crop is the photo moved back (JPEG-exact enough)
    assert np.abs(crop.astype(int) - photo[6:118, 4:116].astype(int)).mean() < 2
    line = (tmp_path / "aligned" / "landmarks.txt").read_text().split()
    np.testing.assert_allclose(np.array(line[1:], float).reshape(5, 2), points, atol=0.01)
    # the same crop from the written landmarks (the --landmarks format)
    assert align.main(["--landmarks", str(tmp_path / "aligned" / "landmarks.txt"), "--images",
                       str(tmp_path / "photo.png"), "--output", str(tmp_path / "again")]) == 0
    again = cv2.imread(str(tmp_path / "again" / "photo.jpg"))
    assert np.abs(again.astype(int) - cv2.imread(str(tmp_path / "aligned" / "photo.jpg")).astype(int)).max() <= 1


def test_a_model_that_is_no_scrfd_is_refused_naming_it(tmp_path):
    model = fake_scrfd(tmp_path / "eight.onnx", empty_outputs(), drop_one=True)
    with pytest.raises(InputDataError, match=r"eight\.onnx: has 8 outputs; an SCRFD detector with landmarks"):
        FaceDetector(model)
    wrong = fake_scrfd(tmp_path / "det.onnx", empty_outputs())
    with pytest.raises(InputDataError, match=r"scores at stride 8 hold 128 values, expected 512 anchors"):
        FaceDetector(wrong, (128, 128)).detect(np.zeros((128, 128, 3), np.uint8))
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    with pytest.raises(InputDataError, match=r"junk\.onnx: not a readable ONNX model"):
        FaceDetector(tmp_path / "junk.onnx")


def test_crops_of_photos_with_the_same_name_get_their_folder_in_theirs():
    from paddle_pfc.cli.align import _unique_names

    assert _unique_names(["a/x.jpg", "b/y.png"]) == ["x", "y"]
    assert _unique_names(["s1/1.pgm", "s2/1.pgm", "s2/2.pgm"]) == ["s1_1", "s2_1", "s2_2"]
    assert _unique_names(["s1/1.pgm", "s1/1.png"]) == ["s1_1", "s1_1~2"]


def test_a_folder_per_person_is_mirrored_in_the_output(tmp_path, capsys):
    """--images of one sub-folder per person: each crop lands in the person's sub-folder of
    --output (the layout paddle-pfc-pairs reads), the photo aligned on its landmarks."""
    from paddle_pfc.cli import align

    points = ARCFACE_TEMPLATE + [4.0, 6.0]
    y, x = np.mgrid[:128, :128]
    photo = np.stack([2 * x, 2 * y, x + y], axis=-1).astype(np.uint8)
    lines = []
    for person in ("bob", "alice"):
        (tmp_path / "photos" / person).mkdir(parents=True)
        for name in ("1.png", "2.png"):
            cv2.imwrite(str(tmp_path / "photos" / person / name), cv2.cvtColor(photo, cv2.COLOR_RGB2BGR))
            lines.append(f"photos/{person}/{name} " + " ".join(map(str, points.ravel())))
    (tmp_path / "points.txt").write_text("\n".join(lines) + "\n")
    assert align.main(["--landmarks", str(tmp_path / "points.txt"), "--images", str(tmp_path / "photos"),
                       "--output", str(tmp_path / "my_faces")]) == 0
    crops = sorted(str(p.relative_to(tmp_path / "my_faces")) for p in (tmp_path / "my_faces").rglob("*.jpg"))
    assert crops == ["alice/1.jpg", "alice/2.jpg", "bob/1.jpg", "bob/2.jpg"]
    crop = cv2.cvtColor(cv2.imread(str(tmp_path / "my_faces" / "bob" / "2.jpg")), cv2.COLOR_BGR2RGB)
    assert np.abs(crop.astype(int) - photo[6:118, 4:116].astype(int)).mean() < 2
    assert "aligned 4 face(s) of 4 of 4 image(s)" in capsys.readouterr().out
    assert len((tmp_path / "my_faces" / "landmarks.txt").read_text().splitlines()) == 4
