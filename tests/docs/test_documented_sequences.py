"""Documented command sequences run in the order given (short settings)."""
from __future__ import annotations

import re
import subprocess
import sys

from launcher import REPO

TINY = ["-c", str(REPO / "tests" / "train_tiny.yaml")]


def _run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout)


def test_training_md_one_rank_commands_run_in_order(tmp_path):
    """The trap: the two one-rank demo lines of docs/training.md, run back to back, had the second
    refuse the first's checkpoints. They are taken from the page, with fewer steps and a tmp folder."""
    text = (REPO / "docs" / "training.md").read_text()
    lines = [line.strip() for line in text.splitlines()
             if line.strip().startswith(("python tools/train.py -c configs/demo_cpu.yaml", "paddle-pfc-train -c"))]
    assert len(lines) == 2, lines
    out = tmp_path / "demo_1rank"
    steps = iter(("2", "3"))
    for line in lines:
        command = line.split("#")[0].split()
        command = ["tools/train.py" if word == "paddle-pfc-train" else word for word in command]
        if command[0] == "python":
            command = command[1:]
        step = next(steps)
        command = [re.sub(r"^train\.max_steps=\d+$", f"train.max_steps={step}", word) for word in command]
        command = [re.sub(r"^train\.output_dir=.*$", f"train.output_dir={out}", word) for word in command]
        command += ["-o", "validation.synthetic_pairs=40", "-o", "validation.nrof_folds=2"]
        proc = _run(*command)
        assert proc.returncode == 0, (command, proc.stderr[-3000:])
    assert (out / "checkpoints" / "step_000000003").is_dir()


def test_export_after_a_run_without_validation_sets(tmp_path):
    """The trap: docs said export best/, which a run with validation.sets: [] never writes; the
    error did not say why. Now export names the cause and the checkpoints to export instead."""
    out = tmp_path / "run"
    trained = _run("tools/train.py", *TINY, "-o", "train.max_steps=2", "-o", f"train.output_dir={out}")
    assert trained.returncode == 0, trained.stderr[-2000:]
    best = _run("tools/export.py", "--checkpoint", str(out / "best"), "--out", str(tmp_path / "m"))
    assert best.returncode == 2
    assert "validation.sets: []" in best.stderr and f"--checkpoint {out / 'checkpoints'}" in best.stderr, best.stderr
    newest = _run("tools/export.py", "--checkpoint", str(out / "checkpoints"), "--out", str(tmp_path / "m"))
    assert newest.returncode == 0, newest.stderr[-2000:]
    # a resumed run with more epochs says how the lr schedule changes
    resumed = _run("tools/train.py", *TINY, "-o", "train.max_steps=3", "-o", "train.epochs=6", "--resume", "auto",
                   "-o", f"train.output_dir={out}")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert re.search(r"resumed with train\.epochs 3 -> 6: the learning-rate schedule is recomputed .* at this step "
                     r"the rate is [0-9.]+ \(the checkpoint's run: [0-9.]+\)", resumed.stdout), resumed.stdout[-2000:]
