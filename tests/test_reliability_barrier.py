"""Ranks that arrive at a collective far apart: gloo gives up after 30 s, the package's barrier
(on the TCP store, train.collective_timeout) lets them meet first."""
from __future__ import annotations

import numpy as np
import pytest

from launcher import REPO, start_launch, worker_logs

WORKER = REPO / "tests" / "workers" / "barrier_worker.py"
ALONE = 36.0  # seconds rank 0 works alone: longer than gloo's fixed 30 s


@pytest.mark.multirank
def test_rank_working_alone_longer_than_gloo_timeout(tmp_path):
    """Both jobs run at once (the test's time is one job's): without the barrier rank 1 waits
    inside gloo's all-gather and the job fails (issue 9); with it both ranks wait as long as
    needed and the collective then works."""
    jobs = {}
    for name, extra in (("plain", []), ("met", ["--barrier"])):
        (tmp_path / name).mkdir()
        jobs[name] = start_launch(WORKER, 2, ["--out", str(tmp_path / name), "--alone", str(ALONE), *extra],
                                  tmp_path / name / "log")
    codes = {name: job.wait(timeout=300) for name, job in jobs.items()}
    plain_logs = worker_logs(tmp_path / "plain" / "log")
    assert codes["plain"] != 0 and not (tmp_path / "plain" / "rank1.npz").exists(), plain_logs
    assert "Timed out" in plain_logs or "std::exception" in plain_logs
    assert codes["met"] == 0, worker_logs(tmp_path / "met" / "log")
    for rank in range(2):
        result = np.load(tmp_path / "met" / f"rank{rank}.npz")
        np.testing.assert_array_equal(result["gathered"], [[0.0, 0.0], [1.0, 1.0]])
    assert float(np.load(tmp_path / "met" / "rank1.npz")["waited"]) > 30.0  # rank 1 really waited that long
