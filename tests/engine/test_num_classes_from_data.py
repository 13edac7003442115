"""data.num_classes: null takes the count from the data (the .rec header, the label file); a given
count the data contradicts is refused in one line, no traceback."""
from __future__ import annotations

import subprocess
import sys

import cv2
import numpy as np
import pytest

from launcher import REPO
from paddle_pfc.data.recordio import write_insightface_rec


@pytest.fixture(scope="module")
def rec(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rec")
    rng = np.random.default_rng(0)
    items = [(c, cv2.imencode(".png", rng.integers(0, 256, (32, 32, 3), dtype=np.uint8))[1].tobytes())
             for c in range(6) for _ in range(8)]
    write_insightface_rec(str(folder / "rec"), items)
    return folder / "rec"


def train(rec, out, num_classes: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "tools/train.py", "-c", "tests/train_tiny.yaml", "-o", "data.kind=rec",
                           "-o", f"data.root={rec}", "-o", f"data.num_classes={num_classes}", "-o", "train.max_steps=1",
                           "-o", f"train.output_dir={out}"], cwd=REPO, capture_output=True, text=True, timeout=300)


def test_null_reads_the_count_from_the_rec_header(rec, tmp_path):
    proc = train(rec, tmp_path / "run", "null")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"data.num_classes: 6, from the data ({rec})" in proc.stdout
    assert "num_classes: 6" in (tmp_path / "run" / "config.yaml").read_text()


def test_a_count_below_the_labels_is_one_line(rec, tmp_path):
    proc = train(rec, tmp_path / "run", "4")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stdout + proc.stderr
    assert f"{rec / 'train.rec'}: num_classes=4, but the header lists 6 identities and the last image (record 48) " \
           "has label 5: give num_classes >= 6 (data.num_classes), or null (the header's count)" in proc.stderr
