"""What ``train.max_bad_steps`` counts with loss scaling is what its messages say; nonsensical logit
scales are refused by the config."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from launcher import REPO, launch_env
from paddle_pfc.engine.config import ConfigError, load_config

TRAIN = REPO / "tools" / "train.py"
CONFIG = REPO / "tests" / "train_tiny.yaml"


def test_max_bad_steps_message_matches_its_count_with_loss_scaling(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, str(TRAIN), "-c", str(CONFIG), "-o", "train.lr=1e6",
                           "-o", "train.loss_scaling=on", "-o", "train.init_loss_scaling=8",
                           "-o", "train.max_bad_steps=2", "-o", f"train.output_dir={out}"],
                          cwd=REPO, env=launch_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0
    log = (out / "train.log").read_text()
    skipped = re.findall(r"step (\d+) skipped \(nothing updated\).*loss scale now ([\d.e+-]+); (\d+) skipped in a row "
                         r"\((\d+) of them counted by train\.max_bad_steps=2\)", log)
    assert len(skipped) >= 3, log  # overflows lower the scale from 8 before any counts
    steps = [int(step) for step, _, _, _ in skipped]
    assert steps == list(range(steps[0], steps[0] + len(steps)))
    assert [int(row) for _, _, row, _ in skipped] == list(range(1, len(steps) + 1))
    counted = [int(c) for _, _, _, c in skipped]
    assert counted[-1] == 2 and counted[-2] == 1 and set(counted[:-2]) == {0}
    assert all(float(scale) == 1.0 for _, scale, _, c in skipped if int(c) > 0)
    error = (out / "error_rank0.txt").read_text().splitlines()[0]
    assert (f"NonFiniteTrainingError: step {steps[-1]}: {len(steps)} consecutive steps skipped, the last 2 with the "
            "loss scale at its floor of 1 or a non-finite loss (train.max_bad_steps=2 counts only those") in error


@pytest.mark.parametrize("value", ["1e-30", "0.5", "-3", "2000"])
def test_nonsensical_logit_scale_is_a_config_error(value):
    with pytest.raises(ConfigError, match=re.escape("loss.scale") + r".*\[1\.0, 1024\.0\]"):
        load_config(None, ["data.num_classes=10", f"loss.scale={value}"])
    for fine in ("1", "30", "64", "1024"):
        assert load_config(None, ["data.num_classes=10", f"loss.scale={fine}"]).loss.scale == float(fine)


def test_train_refuses_a_tiny_logit_scale_before_anything_runs(tmp_path):
    proc = subprocess.run([sys.executable, str(TRAIN), "-c", str(CONFIG), "-o", "loss.scale=1e-30",
                           "-o", f"train.output_dir={tmp_path / 'run'}"],
                          cwd=REPO, env=launch_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.startswith("config error: ") and "loss.scale" in proc.stderr and "1e-30" in proc.stderr
    assert not (tmp_path / "run").exists()
