"""tools/train.py with ``train.accumulate_steps``: every count in optimizer steps, the epoch's tail,
learning, and ``--resume auto`` repeating the uninterrupted run bit for bit after a stop or a
SIGTERM (one rank)."""
from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from launcher import REPO, metrics_losses

TINY = ["-c", str(REPO / "tests" / "train_tiny.yaml")]  # 144 images: 24 micro-batches of 6 an epoch


def train(output_dir: Path, *overrides: str, resume: bool = False) -> subprocess.CompletedProcess:
    args = [*TINY, "-o", f"train.output_dir={output_dir}"]
    for item in overrides:
        args += ["-o", item]
    proc = subprocess.run([sys.executable, "tools/train.py", *args, *(["--resume", "auto"] if resume else [])],
                          cwd=REPO, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def checkpoint_files(folder: Path) -> dict[str, bytes]:
    """Every tensor file of a checkpoint folder (meta.json, which names the run's folder, left out)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.suffix in (".npy", ".npz")}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> Path:
    """K = 2: 12 optimizer steps an epoch, 3 epochs (36 steps), a checkpoint every 4."""
    out = tmp_path_factory.mktemp("accumulate") / "run"
    train(out, "train.accumulate_steps=2")
    return out


def test_counts_are_optimizer_steps_and_it_learns(uninterrupted):
    log = (uninterrupted / "train.log").read_text()
    assert "12 steps/epoch, 36 steps, global batch 12 (2 micro-batches of 6 a rank)" in log
    losses = metrics_losses(uninterrupted)
    assert sorted(losses) == list(range(1, 37))
    loss = np.array([losses[s] for s in range(1, 37)])
    assert np.isfinite(loss).all() and loss[-12:].mean() < loss[:12].mean() - 0.5, loss
    checkpoints = uninterrupted / "checkpoints"
    assert sorted(p.name for p in checkpoints.glob("step_*")) == [f"step_{s:09d}" for s in range(4, 37, 4)][-10:]
    meta = json.loads((checkpoints / "step_000000016" / "meta.json").read_text())
    assert (meta["global_step"], meta["epoch"], meta["step_in_epoch"]) == (16, 1, 4)
    assert meta["config"]["train"]["accumulate_steps"] == 2
    # no accumulation buffer is saved
    assert not any("accumulat" in name for name in np.load(checkpoints / "step_000000016" / "states.npz").files)


def test_sigterm_stops_after_a_whole_step_and_resume_repeats_the_uninterrupted_run(uninterrupted, tmp_path):
    """A SIGTERM lands between micro-batches too: the run stops after the step (both micro-batches
    and the update), checkpoints it (exit 143), and --resume auto to step 16 gives the uninterrupted
    run's losses and step 16's tensors, bit for bit."""
    run = tmp_path / "run"
    args = [*TINY, "-o", f"train.output_dir={run}", "-o", "train.accumulate_steps=2", "-o", "train.max_steps=16",
            "--resume", "auto"]
    proc = subprocess.Popen([sys.executable, "tools/train.py", *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 240
    while proc.poll() is None and time.monotonic() < deadline and len(_logged_steps(run)) < 2:
        time.sleep(0.01)
    assert proc.poll() is None
    proc.send_signal(signal.SIGTERM)
    output = proc.communicate(timeout=120)[0]
    assert proc.returncode == 143, output
    stopped = max(_logged_steps(run))
    assert 2 <= stopped < 16 and f"preempted at step {stopped}: checkpoint saved to" in output
    train(run, "train.accumulate_steps=2", "train.max_steps=16", resume=True)
    expected = {s: v for s, v in metrics_losses(uninterrupted).items() if s <= 16}
    assert metrics_losses(run) == expected
    name = "checkpoints/step_000000016"
    assert checkpoint_files(run / name) == checkpoint_files(uninterrupted / name)


def _logged_steps(output_dir: Path) -> list[int]:
    try:
        lines = (output_dir / "metrics.jsonl").read_text().splitlines()
    except FileNotFoundError:
        return []
    return [json.loads(line)["step"] for line in lines if line.endswith("}") and '"loss"' in line]


def test_the_tail_of_an_epoch_that_fills_no_step_is_dropped(tmp_path):
    """K = 5: 24 micro-batches an epoch make 4 optimizer steps; the last 4 micro-batches are not
    read, and the next epoch starts at its first."""
    run = tmp_path / "run"
    proc = train(run, "train.accumulate_steps=5", "train.epochs=2", "train.checkpoint_every_steps=0")
    assert "4 steps/epoch, 8 steps, global batch 30" in proc.stdout
    assert sorted(metrics_losses(run)) == list(range(1, 9))
    meta = json.loads((run / "checkpoints" / "step_000000004" / "meta.json").read_text())
    assert (meta["global_step"], meta["epoch"], meta["step_in_epoch"]) == (4, 0, 4)


def test_more_micro_batches_than_the_data_holds_is_a_usage_error(tmp_path):
    proc = subprocess.run([sys.executable, "tools/train.py", *TINY, "-o", "train.accumulate_steps=25",
                           "-o", f"train.output_dir={tmp_path}"], cwd=REPO, capture_output=True, text=True,
                          timeout=200)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "train.accumulate_steps 25" in proc.stdout + proc.stderr


def test_the_rate_scales_with_the_global_batch_of_an_optimizer_step():
    from paddle_pfc.engine.config import load_config
    from paddle_pfc.engine.config.resolve import describe_lr, resolve_lr

    cfg = load_config(None, ["data.num_classes=10", "train.batch_size=64", "train.accumulate_steps=4", "train.lr=0.1",
                             "train.lr_reference_batch=512"])
    assert resolve_lr(cfg, 2) == pytest.approx(0.1 * 64 * 2 * 4 / 512)
    assert "global batch 512" in describe_lr(cfg, 2)
    default = load_config(None, ["data.num_classes=10", "train.batch_size=64", "train.accumulate_steps=4"])
    assert resolve_lr(default, 1) == pytest.approx(0.1 * 256 / 512)


def test_the_pre_flight_plans_the_center_buffer():
    from paddle_pfc.engine.config import load_config
    from paddle_pfc.engine.memory import training_head_spec
    from paddle_pfc.head.planner import plan_spec

    overrides = ["data.num_classes=100000", "classifier.sample_ratio=0.1", "train.batch_size=32"]
    one = plan_spec(training_head_spec(load_config(None, overrides), 2))
    four = plan_spec(training_head_spec(load_config(None, [*overrides, "train.accumulate_steps=4"]), 2))
    assert one.accumulation == 0
    assert four.accumulation == 5000 * 512 * 4  # num_sample rows (more than 4 x 32 x 2 labels), float32
    assert four.total == one.total + four.accumulation


def test_a_nonfinite_step_is_skipped_and_counted_once(tmp_path):
    """A huge rate makes the micro-batches' gradients overflow: each optimizer step whose K
    micro-batches hold an inf/NaN is skipped whole and counted once by train.max_bad_steps."""
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "tools/train.py", *TINY, "-o", "train.lr=1e6", "-o",
                           "train.accumulate_steps=2", "-o", "train.max_bad_steps=2", "-o", f"train.output_dir={out}"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    log = (out / "train.log").read_text()
    skipped = [(int(step), int(row)) for step, row in
               re.findall(r"step (\d+) skipped \(nothing updated\).*; (\d+) skipped in a row", log)]
    assert len(skipped) == 2 and skipped[1] == (skipped[0][0] + 1, 2) and skipped[0][1] == 1, log
    error = (out / "error_rank0.txt").read_text()
    assert f"NonFiniteTrainingError: step {skipped[1][0]}: 2 consecutive steps skipped" in error
