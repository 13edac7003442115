"""SIGTERM (a scheduler's preemption) stops training in order: every rank stops after one common
step, which is checkpointed; the status is documented; ``--resume auto`` then ends bit for bit
as the uninterrupted run."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from launcher import REPO, children, launch, launch_env, metrics_losses, start_launch, worker_logs
from paddle_pfc.engine import checkpoint as ckpt
from paddle_pfc.utils.npz_state import load_state

TRAIN = REPO / "tools" / "train.py"
CONFIG = REPO / "tests" / "train_tiny.yaml"
STEPS = 12
#: What Paddle's C++ SIGTERM handler prints (a crash trace): never for an orderly stop.
CRASH_MARKS = ("C++ Traceback", "SIGTERM (@", "Termination signal", "FatalError")


def command(output_dir: Path, *extra: str) -> list[str]:
    return ["-c", str(CONFIG), "-o", f"train.max_steps={STEPS}", "-o", f"train.output_dir={output_dir}",
            "-o", "train.checkpoint_every_steps=0", "--resume", "auto", *extra]


def checkpoint_tensors(folder: Path) -> dict[str, np.ndarray]:
    """Every tensor of a checkpoint folder: backbone, other states and center shards."""
    tensors = {f"backbone/{k}": np.asarray(v) for k, v in load_state(folder / "backbone.npz").items()}
    tensors.update({f"states/{k}": np.asarray(v) for k, v in load_state(folder / "states.npz").items()})
    for path in sorted((folder / "centers").glob("*.npy")):
        tensors[f"centers/{path.name}"] = np.load(path)
    return tensors


def assert_same_tensors(folder: Path, reference: Path) -> None:
    got, expected = checkpoint_tensors(folder), checkpoint_tensors(reference)
    assert sorted(got) == sorted(expected)
    for name, value in expected.items():
        assert got[name].dtype == value.dtype and np.array_equal(got[name], value), name


def newest_logged_step(output_dir: Path) -> int:
    try:
        lines = (output_dir / "metrics.jsonl").read_text().splitlines()
    except FileNotFoundError:
        return 0
    steps = [json.loads(line)["step"] for line in lines if line.endswith("}")]
    return max(steps, default=0)


@pytest.mark.multirank
def test_sigterm_to_the_launcher_checkpoints_the_step_and_resume_ends_bit_exactly(tmp_path, tiny_two_rank_run,
                                                                                   tiny_two_rank_losses):
    run = tmp_path / "run"
    launcher = start_launch(TRAIN, 2, command(run), tmp_path / "log_preempted")
    deadline = time.monotonic() + 240
    while launcher.poll() is None and time.monotonic() < deadline and newest_logged_step(run) < 3:
        time.sleep(0.02)
    workers = children(launcher.pid)
    assert launcher.poll() is None and len(workers) == 2, worker_logs(tmp_path / "log_preempted")
    signalled = time.monotonic()
    launcher.send_signal(signal.SIGTERM)
    status = launcher.wait(timeout=120)
    print(f"SIGTERM to launcher exit: {time.monotonic() - signalled:.2f} s")
    logs = worker_logs(tmp_path / "log_preempted")
    assert status == 15, logs  # paddle.distributed.launch's own status after SIGTERM
    lines = [line for line in (run / "train.log").read_text().splitlines() if "preempted at step" in line]
    assert len(lines) == 1, logs
    step = int(lines[0].split("preempted at step ")[1].split(":")[0])
    folder = ckpt.step_dir(run / "checkpoints", step)
    assert lines[0].endswith(f"preempted at step {step}: checkpoint saved to {folder}; resume with --resume auto "
                             f"({lines[0].rsplit('(', 1)[1]}")
    assert 3 <= step < STEPS
    assert ckpt.latest_checkpoint(run / "checkpoints") == folder and ckpt.read_meta(folder)["global_step"] == step
    assert newest_logged_step(run) == step  # every rank stopped after that step: none ran another
    for mark in CRASH_MARKS:
        assert mark not in logs, logs
    assert not list(run.glob("error_rank*.txt"))

    launch(TRAIN, 2, command(run), tmp_path / "log_resumed")
    assert f"resumed from {folder}" in (run / "train.log").read_text()
    assert metrics_losses(run) == tiny_two_rank_losses
    assert_same_tensors(ckpt.step_dir(run / "checkpoints", STEPS), tiny_two_rank_run / "checkpoints" / "step_000000012")


def start_one_rank(output_dir: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(TRAIN), *command(output_dir, *extra)], cwd=REPO, env=launch_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_sigterm_on_one_rank_exits_143_with_the_step_checkpointed(tmp_path):
    run = tmp_path / "run"
    proc = start_one_rank(run, "-o", "train.max_steps=200")
    deadline = time.monotonic() + 240
    while proc.poll() is None and time.monotonic() < deadline and newest_logged_step(run) < 2:
        time.sleep(0.02)
    assert proc.poll() is None
    proc.send_signal(signal.SIGTERM)
    output = proc.communicate(timeout=120)[0]
    assert proc.returncode == 143, output
    step = newest_logged_step(run)
    folder = ckpt.step_dir(run / "checkpoints", step)
    assert f"preempted at step {step}: checkpoint saved to {folder}; resume with --resume auto" in output
    assert ckpt.latest_checkpoint(run / "checkpoints") == folder
    for mark in CRASH_MARKS:
        assert mark not in output, output


def test_sigterm_before_the_first_step_stops_with_nothing_to_save(tmp_path):
    run = tmp_path / "run"
    proc = start_one_rank(run)
    deadline = time.monotonic() + 240
    while proc.poll() is None and time.monotonic() < deadline and not (run / "train.log").exists():
        time.sleep(0.01)  # the log is opened before the trainer is built: the signal arrives during set-up
    proc.send_signal(signal.SIGTERM)
    output = proc.communicate(timeout=120)[0]
    assert proc.returncode == 143, output
    assert "preempted at step 0: no step since the start, nothing new to save; resume with --resume auto" in output
    assert ckpt.latest_checkpoint(run / "checkpoints") is None


def test_grace_running_out_exits_1_naming_what_is_lost(tmp_path):
    run = tmp_path / "run"
    proc = start_one_rank(run, "-o", "train.max_steps=200", "-o", "train.preempt_grace=0.001")
    deadline = time.monotonic() + 240
    while proc.poll() is None and time.monotonic() < deadline and newest_logged_step(run) < 2:
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)  # a step and a checkpoint take far longer than 1 ms
    output = proc.communicate(timeout=120)[0]
    assert proc.returncode == 1, output
    assert ("[rank 0] preempted: no checkpoint within train.preempt_grace=0.001 s of SIGTERM (at global step "
            in output) and "the work since the newest complete checkpoint is lost; resume with --resume auto" in output
    assert "preempted at step" not in output
