"""paddle-pfc-launch: a multi-rank command prints our lines only and writes no log/ into the working folder."""
from __future__ import annotations

import subprocess
import sys

import pytest

from launcher import REPO
from paddle_pfc.cli import launch


def test_launch_options_are_checked(capsys):
    with pytest.raises(SystemExit):
        launch.parse_args(["--nproc-per-node", "0", "train"])
    assert "--nproc-per-node must be >= 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        launch.parse_args(["no_such_thing"])
    assert "no_such_thing: neither a command (train, " in capsys.readouterr().err
    args = launch.parse_args(["train", "-c", "x.yaml", "-o", "a=1"])
    command = launch.launcher_command(args, "/tmp/logs")
    assert command[1:9] == ["-m", "paddle.distributed.launch", "--log_level", "WARNING", "--log_dir", "/tmp/logs",
                            "--nproc_per_node", "2"]
    assert command[9].endswith("paddle_pfc/cli/entry.py") and command[10:] == ["train", "-c", "x.yaml", "-o", "a=1"]


@pytest.mark.multirank
def test_two_ranks_print_only_our_lines(tmp_path):
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "launch.py"), "--log-dir", str(tmp_path / "logs"),
                           "train", "-c", str(REPO / "tests" / "train_tiny.yaml"), "-o", "train.max_steps=1",
                           "-o", f"train.output_dir={tmp_path / 'run'}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert proc.stdout.startswith(f"launch: 2 rank(s) of train; each rank's log in {tmp_path / 'logs'}\n")
    assert "finished: 1 steps" in proc.stdout
    for noise in ("LAUNCH INFO", "Modified FLAGS", "distributed strategy initialized", "Warning", "ccache"):
        assert noise not in proc.stdout + proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs", "run"]
    assert "Modified FLAGS" not in (tmp_path / "logs" / "workerlog.1").read_text()
