"""Killing ``paddle.distributed.launch`` itself (kill -9) stops its workers: no orphans."""
from __future__ import annotations

import os
import signal
import time

import pytest

from launcher import REPO, alive, children, start_launch

TRAIN = REPO / "tools" / "train.py"
CONFIG = REPO / "tests" / "train_tiny.yaml"


@pytest.mark.multirank
def test_killed_launcher_leaves_no_worker_running(tmp_path):
    out = tmp_path / "run"
    launcher = start_launch(TRAIN, 2, ["-c", str(CONFIG), "-o", "train.epochs=50", "-o", f"train.output_dir={out}"],
                            tmp_path / "log")
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and launcher.poll() is None:
            if (out / "train.log").exists() and "step 2/" in (out / "train.log").read_text():
                break
            time.sleep(0.2)
        workers = children(launcher.pid)
        assert launcher.poll() is None and len(workers) == 2, (tmp_path / "log" / "launcher.out").read_text()
        os.kill(launcher.pid, signal.SIGKILL)
        launcher.wait()
        deadline = time.monotonic() + 10  # "promptly": a few seconds at most
        while time.monotonic() < deadline and any(alive(pid) for pid in workers):
            time.sleep(0.1)
        survivors = [pid for pid in workers if alive(pid)]
        assert not survivors, f"workers {survivors} outlived their launcher"
    finally:
        for pid in [launcher.pid, *workers, *children(launcher.pid)]:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
