"""The vectorized IJB meta reader against a line-by-line reference reader (the straightforward
parse of the release's three files), on a generated protocol, and its errors naming the line."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from paddle_pfc.evaluation import ijb


def write_meta(root: Path, faces: int = 300, templates: int = 40, pairs: int = 2000, seed: int = 0,
               sep: str = " ") -> None:
    rng = np.random.default_rng(seed)
    meta = root / "meta"
    meta.mkdir(parents=True)
    ids = np.sort(rng.choice(np.arange(5, 10 * templates), templates, replace=False))
    template_of = np.sort(np.r_[np.arange(templates), rng.integers(0, templates, faces - templates)])
    medias = template_of * 4 + rng.integers(0, 3, faces) + 7000
    names = [f"img_{i}.jpg" if i % 3 else f"{i}.jpg" for i in range(faces)]
    (meta / "ijbc_face_tid_mid.txt").write_text(
        "".join(f"{n}{sep}{ids[t]}{sep}{m}\n" for n, t, m in zip(names, template_of, medias)))
    points = rng.uniform(10, 100, (faces, 10))
    scores = rng.uniform(0.3, 1.0, faces)
    lines = [f"{n} " + " ".join(f"{v:.3f}" for v in p) + f" {s:.4f}\n" for n, p, s in zip(names, points, scores)]
    (meta / "ijbc_name_5pts_score.txt").write_text("".join(lines[i] for i in rng.permutation(faces)))
    a, b = rng.integers(0, templates, (2, pairs))
    label = (rng.random(pairs) < 0.1).astype(int)
    label[:2] = [0, 1]
    (meta / "ijbc_template_pair_label.txt").write_text(
        "".join(f"{ids[x]} {ids[y]} {z}\n" for x, y, z in zip(a, b, label)) + "\n")


def reference_read(root: Path):
    """The files parsed line by line in plain Python (the reader before vectorization)."""
    meta = root / "meta"
    face_rows = [line.split() for line in (meta / "ijbc_face_tid_mid.txt").read_text().splitlines() if line.split()]
    marks = {}
    for line in (meta / "ijbc_name_5pts_score.txt").read_text().splitlines():
        if line.split():
            parts = line.split()
            marks[parts[0]] = ([float(v) for v in parts[1:11]], float(parts[11]))
    pair_rows = [line.split() for line in (meta / "ijbc_template_pair_label.txt").read_text().splitlines()
                 if line.split()]
    images = [r[0] for r in face_rows]
    return {"images": images,
            "templates": np.array([int(r[1]) for r in face_rows], np.int64),
            "medias": np.array([int(r[2]) for r in face_rows], np.int64),
            "landmarks": np.array([marks[n][0] for n in images]).reshape(-1, 5, 2),
            "scores": np.array([marks[n][1] for n in images]),
            "pairs": np.array([[int(r[0]), int(r[1])] for r in pair_rows], np.int64),
            "labels": np.array([int(r[2]) for r in pair_rows], np.int64)}


@pytest.mark.parametrize("sep", [" ", "\t", "  "])
def test_vectorized_reader_equals_line_reader(tmp_path, sep):
    write_meta(tmp_path, sep=sep)
    got = ijb.read_protocol(tmp_path)
    want = reference_read(tmp_path)
    assert got.images.tolist() == want["images"]
    for key in ("templates", "medias", "landmarks", "scores", "pairs", "labels"):
        np.testing.assert_array_equal(getattr(got, key), want[key], err_msg=key)
    assert got.templates.dtype == got.medias.dtype == got.pairs.dtype == np.int64
    assert got.landmarks.dtype == got.scores.dtype == np.float64


def test_reader_names_the_bad_line(tmp_path):
    write_meta(tmp_path)
    pairs = tmp_path / "meta" / "ijbc_template_pair_label.txt"
    lines = pairs.read_text().splitlines()
    pairs.write_text("\n".join(lines[:4] + [lines[4].replace(" 0", " 0.5").replace(" 1", " 1.5")] + lines[5:]))
    with pytest.raises(ijb.IJBError, match=r"ijbc_template_pair_label.txt:5: column \d is not an integer"):
        ijb.read_protocol(tmp_path)
    pairs.write_text("\n".join(lines[:6] + [lines[6].rsplit(" ", 1)[0] + " 2"] + lines[7:]))
    with pytest.raises(ijb.IJBError, match=r"ijbc_template_pair_label.txt:7: label must be 0 or 1, got 2"):
        ijb.read_protocol(tmp_path)
    pairs.write_text("\n".join(lines))
    lmk = tmp_path / "meta" / "ijbc_name_5pts_score.txt"
    marks = lmk.read_text().splitlines()
    lmk.write_text("\n".join(marks[:8] + [marks[8].rsplit(" ", 1)[0] + " nan"] + marks[9:]))
    with pytest.raises(ijb.IJBError, match=r"ijbc_name_5pts_score.txt:9: column 12 is not finite"):
        ijb.read_protocol(tmp_path)
    lmk.write_text("\n".join(marks + [marks[3]]))
    with pytest.raises(ijb.IJBError, match=rf"ijbc_name_5pts_score.txt:{len(marks) + 1}: image .* listed twice"):
        ijb.read_protocol(tmp_path)
