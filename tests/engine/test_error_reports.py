"""Error files are whole or absent (a full disk), a failed TCP-store request is named as another
rank's consequence, and the job's first error is found among the ranks' files."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from launcher import REPO, launch_env
from paddle_pfc.engine.errors import error_summary, first_error

WRITE_UNDER_LIMIT = """
import resource, signal, sys
from paddle_pfc.engine.errors import report_error
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    raise ValueError("bad record 17 in /data/train.rec")
except ValueError as exc:
    report_error(exc, 1, sys.argv[1])
"""


def write_under_limit(folder, limit: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WRITE_UNDER_LIMIT, str(folder), str(limit)], env=launch_env(),
                          cwd=REPO, capture_output=True, text=True, timeout=60)


def test_error_file_on_a_full_disk_is_the_summary_or_absent_never_empty(tmp_path):
    proc = write_under_limit(tmp_path / "none_fits", 0)
    assert "[rank 1] ValueError: bad record 17" in proc.stderr
    assert "could not write" in proc.stderr and "error_rank1.txt" in proc.stderr
    assert list((tmp_path / "none_fits").iterdir()) == []  # no empty file, no temporary left

    proc = write_under_limit(tmp_path / "summary_fits", 150)  # the summary line fits, the traceback does not
    text = (tmp_path / "summary_fits" / "error_rank1.txt").read_text()
    assert text.count("\n") == 1 and "[rank 1] ValueError: bad record 17 in /data/train.rec (at <string>:" in text
    assert list((tmp_path / "summary_fits").iterdir()) == [tmp_path / "summary_fits" / "error_rank1.txt"]


@pytest.mark.parametrize("kind", [RuntimeError, OSError])
def test_failed_store_request_is_named_as_another_ranks_consequence(kind):
    try:
        raise kind("(PreconditionNotMet) TCP receive error. Details: Connection reset by peer.")
    except kind as exc:
        summary = error_summary(exc, 1)
    assert summary.startswith(f"[rank 1] {kind.__name__}: (PreconditionNotMet) TCP receive error")
    assert "most likely because another rank stopped first" in summary and "TCP store" in summary


def test_first_error_is_the_earliest_of_this_jobs_files(tmp_path):
    (tmp_path / "error_rank3.txt").write_text("2026-11-27 10:00:00.000 [rank 3] old run\n")
    os.utime(tmp_path / "error_rank3.txt", (time.time() - 3600, time.time() - 3600))
    since = time.time()
    (tmp_path / "error_rank1.txt").write_text("2026-11-27 12:00:00.250 [rank 1] RuntimeError: consequence\n")
    (tmp_path / "error_rank0.txt").write_text("2026-11-27 12:00:00.120 [rank 0] ValueError: cause\n\nTraceback\n")
    assert first_error(tmp_path, since) == ("error_rank0.txt", "2026-11-27 12:00:00.120 [rank 0] ValueError: cause")
    assert first_error(tmp_path / "nothing", since) is None
