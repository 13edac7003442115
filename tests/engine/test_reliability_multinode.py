"""The documented multi-node command, simulated on one machine: two ``paddle.distributed.launch``
processes (one rank each) meeting over 127.0.0.1, train, then resume — the same losses as one
node with two ranks."""
from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import pytest

from launcher import REPO, start_launch, worker_logs
from launcher import metrics_losses as losses

TRAIN = REPO / "tools" / "train.py"
CONFIG = REPO / "tests" / "train_tiny.yaml"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def two_nodes(tmp: Path, tag: str, args: list[str]) -> None:
    """Both nodes' launchers, as a user would start them on two machines; both must succeed."""
    master = f"127.0.0.1:{free_port()}"
    nodes = [start_launch(TRAIN, 1, args, tmp / f"log_{tag}_node{rank}",
                          extra=["--master", master, "--nnodes", "2", "--rank", str(rank)])
             for rank in range(2)]
    try:
        codes = [node.wait(timeout=400) for node in nodes]
    except subprocess.TimeoutExpired:
        for node in nodes:
            node.kill()
        raise
    logs = "\n".join(worker_logs(tmp / f"log_{tag}_node{r}") + (tmp / f"log_{tag}_node{r}" / "launcher.out")
                     .read_text()[-2000:] for r in range(2))
    assert codes == [0, 0], logs


@pytest.mark.multirank
def test_two_nodes_over_loopback_train_and_resume(tmp_path, tiny_two_rank_losses):
    common = ["-c", str(CONFIG), "-o", "train.checkpoint_every_steps=3"]
    run = tmp_path / "run"  # shared by both "nodes", as checkpoints need
    two_nodes(tmp_path, "first", [*common, "-o", "train.max_steps=6", "-o", f"train.output_dir={run}",
                                  "--resume", "auto"])
    meta = json.loads((run / "checkpoints" / "step_000000006" / "meta.json").read_text())
    assert meta["world_size"] == 2 and meta["global_step"] == 6
    two_nodes(tmp_path, "resumed", [*common, "-o", "train.max_steps=8", "-o", f"train.output_dir={run}",
                                    "--resume", "auto"])
    assert "resumed from" in (run / "train.log").read_text()
    # steps 1-8, bit for bit, as one node with two ranks gives them
    assert losses(run) == {step: loss for step, loss in tiny_two_rank_losses.items() if step <= 8}
