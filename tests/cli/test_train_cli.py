"""tools/train.py as a user runs it: real data formats, bad configs and bad data (one rank)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import partial

import pytest

from helpers.side_by_side import side_by_side
from launcher import REPO

TINY = ["-c", str(REPO / "tests" / "train_tiny.yaml")]


def train(*args: str, timeout: float = 300, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "tools/train.py", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, env=None if env is None else {**os.environ, **env})


def test_trains_on_image_folder_and_recordio(small_folder, small_lfw, tmp_path):
    common = [*TINY, "-o", "data.num_classes=10", "-o", "train.batch_size=2", "-o", "train.max_steps=3",
              "-o", f"validation.sets=[{{name: lfw, path: {small_lfw}}}]",
              "-o", "validation.nrof_folds=2"]
    rec_dir = tmp_path / "rec"

    def convert_and_train() -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
        conv = subprocess.run([sys.executable, "tools/im2rec.py", "--root", str(small_folder), "--output",
                               str(rec_dir)], cwd=REPO, capture_output=True, text=True, timeout=120)
        if conv.returncode != 0:
            return conv, conv
        return conv, train(*common, "-o", "data.kind=rec", "-o", f"data.root={rec_dir}",
                           "-o", f"train.output_dir={tmp_path / 'rec_run'}")

    # the folder's run and the conversion then the .rec's run, side by side
    folder, (conv, rec) = side_by_side(
        partial(train, *common, "-o", "data.kind=folder", "-o", f"data.root={small_folder}",
                "-o", f"train.output_dir={tmp_path / 'folder'}"),
        convert_and_train)
    assert folder.returncode == 0, folder.stdout[-2000:] + folder.stderr[-2000:]
    assert "[lfw][3] accuracy" in folder.stdout
    assert ("data: the first image is 112x112 (width x height): resized to 32x32; every image is converted for "
            "model.input_size 32x32 (grey -> 3 equal channels") in folder.stdout
    assert conv.returncode == 0, conv.stderr[-2000:]
    assert rec.returncode == 0, rec.stdout[-2000:] + rec.stderr[-2000:]
    meta = json.loads((tmp_path / "rec_run" / "checkpoints" / "step_000000003" / "meta.json").read_text())
    assert meta["global_step"] == 3 and meta["config"]["data"]["kind"] == "rec"


@pytest.mark.parametrize("override, key", [
    ("train.bogus=1", "train.bogus"),
    ("train.batch_size=zero", "train.batch_size"),
    ("classifier.sample_ratio=1.5", "classifier.sample_ratio"),
    ("train.amp=fp16_o1", "train.amp"),              # float16 AMP needs a GPU
    ("classifier.dtype=float16", "classifier.dtype"),  # float16 needs a GPU (bfloat16 works on CPU)
    ("classifier.center_dtype=float16", "classifier.center_dtype"),
    ("train.loss_scaling=sometimes", "train.loss_scaling"),
    ("data.non_square=squash", "data.non_square: must be one of pad, crop, stretch"),
])
def test_bad_config_names_the_key_before_starting(override, key, tmp_path):
    proc = train(*TINY, "-o", override, "-o", f"train.output_dir={tmp_path}", timeout=120)
    assert proc.returncode == 2 and key in proc.stderr, proc.stderr[-2000:]
    assert not (tmp_path / "checkpoints").exists()


def test_an_empty_option_value_is_an_error_not_null(tmp_path):
    """``--pretrained "$UNSET"`` must not train from scratch (nor ``--resume ""`` start afresh)."""
    proc = train(*TINY, "--pretrained", "", "-o", f"train.output_dir={tmp_path}", timeout=120)
    assert proc.returncode == 2 and "model.pretrained: empty value" in proc.stderr, proc.stderr[-2000:]


def test_a_batch_larger_than_the_data_is_a_usage_error(tmp_path):
    proc = train(*TINY, "-o", "train.batch_size=200", "-o", f"train.output_dir={tmp_path}", timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if "train.batch_size" in line]
    assert lines == ["error: [rank 0] train.batch_size 200 x 1 rank(s) = 200 images a step, more than the 144 "
                     "images of the synthetic data: lower train.batch_size"], proc.stderr[-2000:]
    assert "Traceback" in (tmp_path / "error_rank0.txt").read_text()


def test_bf16_amp_without_native_bfloat16_is_refused(tmp_path):
    """train.amp=bf16 on a CPU whose oneDNN has no native bfloat16 (capped at AVX2 here, as on an
    AVX2-only machine): refused before starting, naming the key and the reason."""
    proc = train(*TINY, "-o", "train.amp=bf16", "-o", f"train.output_dir={tmp_path}", timeout=120,
                 env={"ONEDNN_MAX_CPU_ISA": "AVX2"})
    assert proc.returncode == 2 and "train.amp" in proc.stderr and "AVX512_BF16" in proc.stderr, proc.stderr[-2000:]
    assert not (tmp_path / "checkpoints").exists()


def test_bf16_amp_trains_where_the_cpu_has_it(tmp_path):
    """train.amp=bf16 on a CPU with native bfloat16: a short run with finite losses and a checkpoint."""
    from paddle_pfc.kernels import onednn_ops

    reason = onednn_ops.bfloat16_unsupported()
    if reason is not None:
        pytest.skip(reason)
    proc = train(*TINY, "-o", "train.amp=bf16", "-o", "train.max_steps=3", "-o", f"train.output_dir={tmp_path}")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    meta = json.loads((tmp_path / "checkpoints" / "step_000000003" / "meta.json").read_text())
    assert meta["global_step"] == 3 and meta["config"]["train"]["amp"] == "bf16"


def test_out_of_range_label_in_data_names_file_and_line(small_folder, tmp_path):
    proc = train(*TINY, "-o", "data.kind=folder", "-o", f"data.root={small_folder}", "-o", "data.num_classes=5",
                 "-o", f"train.output_dir={tmp_path}", timeout=120)
    assert proc.returncode != 0
    assert "label.txt" in proc.stderr and "line 6" in proc.stderr, proc.stderr[-2000:]
