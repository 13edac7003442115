"""tools/bench_scale.py at its smallest size: one JSON line per size with what it measured."""
from __future__ import annotations

import json
import subprocess
import sys

from launcher import REPO


def test_small_size_reports_build_and_worker_memory(tmp_path):
    proc = subprocess.run([sys.executable, "tools/bench_scale.py", "--sizes", "small", "--workers", "1",
                           "--batches", "2", "--batch-size", "8", "--folder", str(tmp_path)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert "cpu" in lines[0] and len(lines) == 2
    result = lines[1]
    assert (result["size"], result["records"], result["classes"], result["layout"]) == ("small", 10_000, 100, "sparse")
    assert result["peak_rss"] >= result["rss_after_build"] > 0 and len(result["workers"]) == 1
    assert result["workers"][0]["rss"] >= result["workers"][0]["private"] > 0
    assert result["rec_bytes"] == 10_000 * 1824 + 40 + 100 * 40
    assert not (tmp_path / "small").exists()  # removed without --keep
