"""tools/validate.py checks every --bin before it embeds the first set."""
from __future__ import annotations

import subprocess
import sys

from launcher import REPO, launch_env


def run_validate(tmp_path, *bins: str) -> subprocess.CompletedProcess:
    from paddle_pfc.backbones.state import random_state
    from paddle_pfc.data.synthetic import make_verification_set
    from paddle_pfc.deploy.export import export_backbone
    from paddle_pfc.evaluation.bin_set import write_bin

    bins_, issame = make_verification_set(6, 20, 32, seed=1)
    write_bin(str(tmp_path / "good.bin"), bins_, issame)
    export_backbone("mobilefacenet", 16, 32, random_state("mobilefacenet", 16, 32, seed=2), tmp_path / "model")
    return subprocess.run([sys.executable, str(REPO / "tools" / "validate.py"), "--model", str(tmp_path / "model"),
                           "--bin", *bins, "--nrof-folds", "2", "--progress-every", "0"],
                          cwd=REPO, env=launch_env(), capture_output=True, text=True, timeout=300)


def test_missing_later_bin_fails_before_the_first_set_is_embedded(tmp_path):
    missing = tmp_path / "missing.bin"
    proc = run_validate(tmp_path, str(tmp_path / "good.bin"), str(missing))
    assert proc.returncode == 2
    assert f"--bin {missing}: not found" in proc.stderr
    assert "validate good" not in proc.stdout and "model:" not in proc.stdout  # nothing was embedded


def test_two_sets_of_one_name_are_refused(tmp_path):
    (tmp_path / "other").mkdir()
    proc = run_validate(tmp_path, str(tmp_path / "good.bin"), str(tmp_path / "other" / "good.bin"), str(tmp_path))
    assert proc.returncode == 2
    assert f"{tmp_path / 'other' / 'good.bin'}: not found" in proc.stderr and f"{tmp_path}: not a file" in proc.stderr
    assert "several sets named good" in proc.stderr
