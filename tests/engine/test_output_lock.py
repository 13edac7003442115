"""One training job per output folder: a second job is refused naming the first, before it writes
anything; a lock left by a dead process does not block."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from launcher import REPO, children, free_port, launch, launch_env, metrics_losses, start_launch, worker_logs
from paddle_pfc.engine import output_lock
from paddle_pfc.engine.output_lock import LOCK_NAME, OutputDirLockedError

TRAIN = REPO / "tools" / "train.py"
CONFIG = REPO / "tests" / "train_tiny.yaml"

HOLD = ("import sys, time\n"
        "from paddle_pfc.engine.output_lock import acquire\n"
        "acquire(sys.argv[1])\n"
        "print('locked', flush=True)\n"
        "time.sleep(600)\n")


def hold_lock(folder: Path) -> subprocess.Popen:
    """Another process that holds ``folder``'s lock (until it is killed)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_lock_held_by_a_live_process_is_refused_naming_it(tmp_path):
    holder = hold_lock(tmp_path)
    try:
        with pytest.raises(OutputDirLockedError) as info:
            output_lock.acquire(tmp_path)
        message = str(info.value)
        assert f"is in use by another training job: pid {holder.pid} on host " in message
        assert "started 20" in message and "command: python" in message and str(tmp_path / LOCK_NAME) in message
    finally:
        holder.kill()
        holder.wait()


def test_lock_of_a_dead_process_does_not_block(tmp_path):
    holder = hold_lock(tmp_path)
    holder.send_signal(signal.SIGKILL)  # dies holding it: no clean-up ran
    holder.wait()
    assert json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == holder.pid  # the file stays, naming it
    assert output_lock.acquire(tmp_path) == tmp_path / LOCK_NAME
    assert json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == os.getpid()


def test_stale_lock_file_naming_a_dead_pid_does_not_block(tmp_path):
    (tmp_path / LOCK_NAME).write_text(json.dumps({"pid": 999999999, "host": "gone", "started": "then",
                                                   "command": "train"}))
    assert output_lock.acquire(tmp_path) == tmp_path / LOCK_NAME
    assert json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == os.getpid()


RANK = ("import socket, sys, time\n"
        "from paddle.base import core\n"
        "from paddle_pfc.engine.output_lock import OutputDirLockedError, lock_for_job\n"
        "rank, port, folder = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]\n"
        "store = core.TCPStore('127.0.0.1', port, rank == 0, 2, 30)\n"
        "if rank == 1:\n"
        "    time.sleep(1.5)  # reads the outcome well after rank 0 published it\n"
        "try:\n"
        "    lock_for_job(folder, rank, 2, store=store)\n"
        "except OutputDirLockedError as exc:\n"
        "    print('refused:', exc, flush=True)\n"
        "    sys.exit(2)\n")


def test_every_rank_of_a_refused_job_reads_the_refusal_before_rank_0_ends(tmp_path):
    """Rank 0 hosts the job's store: it stays up until the slowest rank has read the refusal."""
    holder = hold_lock(tmp_path)
    try:
        port = free_port()
        ranks = [subprocess.Popen([sys.executable, "-c", RANK, str(rank), str(port), str(tmp_path)], env=launch_env(),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for rank in (0, 1)]
        outputs = [rank.communicate(timeout=120)[0] for rank in ranks]
        for rank, output in zip(ranks, outputs):
            assert rank.returncode == 2, output
            assert f"refused: train.output_dir {tmp_path} is in use by another training job: pid {holder.pid}" \
                in output, output
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.multirank
def test_second_job_into_a_running_jobs_folder_is_refused_and_the_first_finishes_intact(tmp_path,
                                                                                       tiny_two_rank_losses):
    run = tmp_path / "run"
    steps = 36  # train_tiny.yaml: 3 epochs of 12 steps
    job = ["-c", str(CONFIG), "-o", f"train.max_steps={steps}", "-o", f"train.output_dir={run}",
           "-o", "train.checkpoint_every_steps=0", "--resume", "auto"]
    first = start_launch(TRAIN, 2, job, tmp_path / "log_first")
    try:
        deadline = time.monotonic() + 240
        while first.poll() is None and time.monotonic() < deadline and not (run / "train.log").exists():
            time.sleep(0.05)
        holder = json.loads((run / LOCK_NAME).read_text())
        assert first.poll() is None and holder["pid"] in children(first.pid), worker_logs(tmp_path / "log_first")

        second = launch(TRAIN, 2, job, tmp_path / "log_second", check=False)
        assert first.poll() is None, "the first job ended before the second one was refused: make it longer"
        assert second.returncode == 2, second.stdout + second.stderr
        refusals = [(tmp_path / "log_second" / f"workerlog.{r}").read_text() for r in range(2)]
        for rank, text in enumerate(refusals):
            assert (f"error: [rank {rank}] train.output_dir {run} is in use by another training job: "
                    f"pid {holder['pid']} on host {holder['host']}, "
                    f"started {holder['started']}, command: ") in text, text
        assert first.wait(timeout=300) == 0, worker_logs(tmp_path / "log_first")
    finally:
        if first.poll() is None:
            first.kill()
    losses = metrics_losses(run)  # each step once: only the first job wrote metrics
    assert sorted(losses) == list(range(1, steps + 1))
    assert {step: losses[step] for step in tiny_two_rank_losses} == tiny_two_rank_losses
    log = (run / "train.log").read_text()
    assert log.count("world_size 2,") == 1 and "is in use by another training job" not in log
    assert not list(run.glob("error_rank*.txt"))
    assert json.loads((run / LOCK_NAME).read_text())["pid"] == holder["pid"]
