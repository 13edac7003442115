"""Ranks that arrive at a collective far apart: gloo gives up after 30 s, the package's barrier
(on the TCP store, train.collective_timeout) lets them meet first."""
from __future__ import annotations

import numpy as np
import pytest

from launcher import REPO, launch, worker_logs

WORKER = REPO / "tests" / "workers" / "barrier_worker.py"
ALONE = 40.0  # seconds rank 0 works alone: longer than gloo's fixed 30 s


@pytest.mark.multirank
def test_rank_working_alone_longer_than_gloo_timeout(tmp_path):
    # Without the barrier, rank 1 waits inside gloo's all-gather and the job fails (issue 9).
    plain = tmp_path / "plain"
    plain.mkdir()
    proc = launch(WORKER, 2, ["--out", str(plain), "--alone", str(ALONE)], plain / "log", check=False,
                  timeout=300)
    assert proc.returncode != 0 and not (plain / "rank1.npz").exists()
    assert "Timed out" in worker_logs(plain / "log") or "std::exception" in worker_logs(plain / "log")
    # With it, both ranks wait as long as needed and the collective then works.
    met = tmp_path / "met"
    met.mkdir()
    launch(WORKER, 2, ["--out", str(met), "--alone", str(ALONE), "--barrier"], met / "log", timeout=300)
    for rank in range(2):
        result = np.load(met / f"rank{rank}.npz")
        np.testing.assert_array_equal(result["gathered"], [[0.0, 0.0], [1.0, 1.0]])
    assert float(np.load(met / "rank1.npz")["waited"]) > 30.0  # rank 1 really waited that long
