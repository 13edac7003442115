"""Ranks that arrive at a collective far apart: gloo gives up after 30 s, the package's barrier
(on the TCP store, train.collective_timeout) lets them meet first."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from launcher import REPO, free_port, launch_env, start_launch, worker_logs

WORKER = REPO / "tests" / "workers" / "barrier_worker.py"
ALONE = 40.0  # seconds rank 0 stays out of collectives: longer than gloo's fixed 30 s


def start_jobs(folder: Path) -> dict[str, subprocess.Popen]:
    """The two 2-rank jobs, without and with the barrier, started at once: {name: launcher}."""
    jobs = {}
    for name, extra in (("plain", []), ("met", ["--barrier"])):
        (folder / name).mkdir()
        jobs[name] = start_launch(WORKER, 2, ["--out", str(folder / name), "--alone", str(ALONE), *extra],
                                  folder / name / "log")
    return jobs


@pytest.mark.multirank
@pytest.mark.starts_early.with_args(start_jobs)  # with_args: a lone function would be decorated
def test_rank_working_alone_longer_than_gloo_timeout(request, started_early):
    """Without the barrier rank 1 waits inside gloo's all-gather and the job fails; with
    it both ranks wait as long as needed and the collective then works. The jobs mostly sleep:
    they start before the first test (``started_early``) and are only checked here."""
    tmp_path, jobs = started_early[request.node.nodeid]
    codes = {name: job.wait(timeout=300) for name, job in jobs.items()}
    plain_logs = worker_logs(tmp_path / "plain" / "log")
    assert codes["plain"] != 0 and not (tmp_path / "plain" / "rank1.npz").exists(), plain_logs
    assert "Timed out" in plain_logs or "std::exception" in plain_logs
    assert codes["met"] == 0, worker_logs(tmp_path / "met" / "log")
    for rank in range(2):
        result = np.load(tmp_path / "met" / f"rank{rank}.npz")
        np.testing.assert_array_equal(result["gathered"], [[0.0, 0.0], [1.0, 1.0]])
    assert float(np.load(tmp_path / "met" / "rank1.npz")["waited"]) > 30.0  # rank 1 really waited that long


BARRIER_RANK = ("import os, sys, time\n"
                "from paddle.base import core\n"
                "from paddle_pfc.runtime.barrier import StoreBarrier\n"
                "rank, world, port = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])\n"
                "store = core.TCPStore('127.0.0.1', port, rank == 0, world, 30)\n"
                "if rank == 0:\n"
                "    time.sleep(1.0)  # the others wait for it, polling ever more slowly\n"
                "StoreBarrier(rank, world, timeout=60, store=store).wait('the last one')\n"
                "print('left', flush=True)\n"
                "os._exit(0)  # at once, as a rank of a finished job does (the store it hosts goes with it)\n")


@pytest.mark.parametrize("world_size", [2, 3])
def test_the_store_host_leaves_a_barrier_after_every_other_rank(world_size):
    """Rank 0 hosts the job's store: it leaves a barrier only once the others no longer need the
    store for it, so a job's last barrier never ends in another rank's 'connection reset'."""
    port = free_port()
    ranks = [subprocess.Popen([sys.executable, "-c", BARRIER_RANK, str(rank), str(world_size), str(port)],
                              env=launch_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for rank in range(world_size)]
    outputs = [rank.communicate(timeout=120)[0] for rank in ranks]
    for rank, (proc, output) in enumerate(zip(ranks, outputs)):
        assert proc.returncode == 0 and output.rstrip().endswith("left"), f"rank {rank}:\n{output}"
