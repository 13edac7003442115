"""tools/im2rec.py with worker processes: byte-identical output, progress lines, bad images."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from launcher import REPO


def make_folder(root: Path, corrupt: bool = False) -> None:
    """An insightface image folder of synthetic faces, labels listed out of order, mixed sizes."""
    from paddle_pfc.data.synthetic import SyntheticFaces

    faces = SyntheticFaces(9, samples_per_class=23, image_size=40, seed=4)
    rng = np.random.default_rng(0)
    lines = []
    for i in rng.permutation(len(faces)):
        image, label = faces[int(i)]
        if i % 5 == 0:
            image = cv2.resize(image, (36, 36))
        rel = f"id{label}/{i}.png" if i % 3 else f"id{label}/{i}.jpg"
        (root / f"id{label}").mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(root / rel), cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
        lines.append(f"{rel}\t{label}")
    if corrupt:
        (root / "id3" / "broken.jpg").write_bytes(b"not an image")
        lines.insert(17, "id3/broken.jpg\t3")
    (root / "label.txt").write_text("\n".join(lines) + "\n")


def im2rec(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "tools" / "im2rec.py"), *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.mark.parametrize("resize", [False, True])
def test_workers_write_the_same_bytes(tmp_path, resize):
    from paddle_pfc.data._image import encode_jpeg
    from paddle_pfc.data.image_folder import ImageFolderDataset
    from paddle_pfc.data.recordio import RecordDataset, write_insightface_rec

    root = tmp_path / "folder"
    make_folder(root)
    size = ["--image-size", "32"] if resize else []
    one = im2rec("--root", str(root), "--output", str(tmp_path / "w0"), "--workers", "0", *size)
    three = im2rec("--root", str(root), "--output", str(tmp_path / "w3"), "--workers", "3",
                   "--progress-every", "0", *size)
    assert one.returncode == 0 and three.returncode == 0, one.stderr + three.stderr
    assert files(tmp_path / "w0") == files(tmp_path / "w3")
    # independent reference: the dataset's images, stably sorted by label, through the package writer
    ds = ImageFolderDataset(str(root), image_size=32 if resize else None)
    order = np.argsort(ds.labels, kind="stable")
    write_insightface_rec(str(tmp_path / "ref"), ((int(ds.labels[i]), encode_jpeg(ds[int(i)][0], 95))
                                                  for i in order), presorted=True)
    for name in ("train.rec", "train.idx"):
        assert (tmp_path / "ref" / name).read_bytes() == (tmp_path / "w3" / name).read_bytes()
    assert ((tmp_path / "w3" / "property").exists()) == resize
    rec = RecordDataset(str(tmp_path / "w3"))
    assert len(rec) == 207 and rec.num_classes == 9
    lines = [line for line in three.stdout.splitlines() if line.startswith("im2rec: ")]
    assert any(line.startswith("im2rec: 207/207 (100%)") and "images/s" in line for line in lines), lines
    assert "207 images, 9 classes" in lines[-1] and "images/s with 3 worker(s)" in lines[-1]


def test_bad_image_skipped_or_named(tmp_path):
    root = tmp_path / "folder"
    make_folder(root, corrupt=True)
    failed = im2rec("--root", str(root), "--output", str(tmp_path / "fail"), "--workers", "2")
    assert failed.returncode == 2 and "broken.jpg" in failed.stderr, failed.stderr
    assert not (tmp_path / "fail").exists() or not list((tmp_path / "fail").iterdir())  # no partial pair
    ok = im2rec("--root", str(root), "--output", str(tmp_path / "skip"), "--workers", "2", "--skip-bad")
    serial = im2rec("--root", str(root), "--output", str(tmp_path / "skip0"), "--workers", "0", "--skip-bad")
    assert ok.returncode == 0 and "(1 skipped)" in ok.stdout, ok.stderr
    assert serial.returncode == 0 and "(1 skipped)" in serial.stdout, serial.stderr
    assert files(tmp_path / "skip") == files(tmp_path / "skip0")
    skipped = [line for line in ok.stderr.splitlines() if line.startswith("im2rec: skipped ")]
    assert len(skipped) == 1 and "broken.jpg: cannot decode image" in skipped[0], ok.stderr


def test_a_failed_run_leaves_the_earlier_output(tmp_path):
    """A run that stops on a bad image leaves the output folder's .rec / .idx as they were (no
    partial pair that training would read as the whole set); classes left without an image are
    listed."""
    root = tmp_path / "folder"
    make_folder(root)
    out = tmp_path / "out"
    assert im2rec("--root", str(root), "--output", str(out), "--workers", "0").returncode == 0
    before = files(out)
    (root / "id3" / "broken.jpg").write_bytes(b"not an image")
    lines = (root / "label.txt").read_text().splitlines()
    (root / "label.txt").write_text("\n".join(lines + ["id3/broken.jpg\t3", "id8/0.png\t10"]) + "\n")
    (root / "id8" / "0.png").write_bytes((root / lines[0].split("\t")[0]).read_bytes())
    failed = im2rec("--root", str(root), "--output", str(out), "--workers", "2")
    assert failed.returncode == 2 and "broken.jpg: cannot decode image" in failed.stderr, failed.stderr
    assert files(out) == before
    ok = im2rec("--root", str(root), "--output", str(out), "--workers", "0", "--skip-bad")
    assert ok.returncode == 0 and "im2rec: note: 1 of 11 classes have no image (9)" in ok.stderr, ok.stderr
