"""tools/train.py as a user runs it: real data formats, bad configs and bad data (one rank)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from launcher import REPO

TINY = ["-c", str(REPO / "tests" / "train_tiny.yaml")]


def train(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "tools/train.py", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout)


def test_trains_on_image_folder_and_recordio(small_folder, small_lfw, tmp_path):
    common = [*TINY, "-o", "data.num_classes=10", "-o", "train.batch_size=2", "-o", "train.max_steps=3",
              "-o", f"validation.sets=[{{name: lfw, path: {small_lfw}}}]",
              "-o", "validation.nrof_folds=2"]
    folder = train(*common, "-o", "data.kind=folder", "-o", f"data.root={small_folder}",
                   "-o", f"train.output_dir={tmp_path / 'folder'}")
    assert folder.returncode == 0, folder.stdout[-2000:] + folder.stderr[-2000:]
    assert "[lfw][3] accuracy" in folder.stdout
    rec_dir = tmp_path / "rec"
    conv = subprocess.run([sys.executable, "tools/im2rec.py", "--root", str(small_folder), "--output", str(rec_dir)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert conv.returncode == 0, conv.stderr[-2000:]
    rec = train(*common, "-o", "data.kind=rec", "-o", f"data.root={rec_dir}",
                "-o", f"train.output_dir={tmp_path / 'rec_run'}")
    assert rec.returncode == 0, rec.stdout[-2000:] + rec.stderr[-2000:]
    meta = json.loads((tmp_path / "rec_run" / "checkpoints" / "step_000000003" / "meta.json").read_text())
    assert meta["global_step"] == 3 and meta["config"]["data"]["kind"] == "rec"


@pytest.mark.parametrize("override, key", [
    ("train.bogus=1", "train.bogus"),
    ("train.batch_size=zero", "train.batch_size"),
    ("classifier.sample_ratio=1.5", "classifier.sample_ratio"),
    ("train.amp=fp16_o1", "train.amp"),              # backbone AMP needs a GPU
    ("train.amp=bf16", "train.amp"),
    ("classifier.dtype=float16", "classifier.dtype"),  # float16 needs a GPU (bfloat16 works on CPU)
    ("classifier.center_dtype=float16", "classifier.center_dtype"),
    ("train.loss_scaling=sometimes", "train.loss_scaling"),
])
def test_bad_config_names_the_key_before_starting(override, key, tmp_path):
    proc = train(*TINY, "-o", override, "-o", f"train.output_dir={tmp_path}", timeout=120)
    assert proc.returncode == 2 and key in proc.stderr, proc.stderr[-2000:]
    assert not (tmp_path / "checkpoints").exists()


def test_out_of_range_label_in_data_names_file_and_line(small_folder, tmp_path):
    proc = train(*TINY, "-o", "data.kind=folder", "-o", f"data.root={small_folder}", "-o", "data.num_classes=5",
                 "-o", f"train.output_dir={tmp_path}", timeout=120)
    assert proc.returncode != 0
    assert "label.txt" in proc.stderr and "line 6" in proc.stderr, proc.stderr[-2000:]
