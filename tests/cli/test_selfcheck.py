"""tools/selfcheck.py as a user runs it (1 and 2 ranks), and its verdict on wrong results."""
from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from launcher import REPO, launch

SCRIPT = REPO / "tools" / "selfcheck.py"
LINE = re.compile(r"^(PASS|FAIL)  (\S.*?)\s+max_rel_err\s+(\S+)\s+tolerance (\S+)")


def check_output(text: str, world_size: int) -> None:
    assert f"selfcheck: {world_size} rank(s)" in text
    assert re.search(r"^paddle \d+\.\d+", text, re.M) and re.search(r"^device: ", text, re.M)
    assert re.search(r"^cpu: .+features: ", text, re.M)
    rows = [LINE.match(line) for line in text.splitlines() if LINE.match(line)]
    backends = [m.group(2) for m in rows]
    # Every CPU backend of this machine (the native kernels build here: conftest asks for them).
    assert backends == ["composite-native float32", "composite-paddle float32", "fused-emulated float32",
                     "composite-native bfloat16", "fused-emulated bfloat16", "fused-emulated float32+loss-scaling"]
    for m in rows:
        assert m.group(1) == "PASS" and float(m.group(3)) <= float(m.group(4)), m.group(0)
    assert re.search(r"^selfcheck: all 6 backends PASS", text, re.M)


def test_selfcheck_one_rank():
    proc = subprocess.run([sys.executable, str(SCRIPT)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    check_output(proc.stdout, 1)
    assert "WARNING" not in proc.stderr, proc.stderr  # its fused-emulated rows name the emulation: no warning


@pytest.mark.multirank
def test_selfcheck_two_ranks(tmp_path):
    proc = launch(SCRIPT, 2, [], tmp_path / "log")
    assert proc.returncode == 0
    check_output((tmp_path / "log" / "workerlog.0").read_text(), 2)


def _module():
    """The module behind tools/selfcheck.py."""
    from paddle_pfc.cli import selfcheck

    return selfcheck


def test_assess_fails_wrong_updates(static_mode, monkeypatch):
    """The verdict on real tables of one backend, then on the same tables with one wrong value each."""
    import paddle

    selfcheck = _module()
    monkeypatch.setenv("PADDLE_PFC_NATIVE", "off")  # run_backend sets it; restored after the test
    spec = selfcheck.BackendSpec("fused-emulated float32", "fused", "off", "float32", "float32", False,
                                 selfcheck.TOL_F32)
    initial, steps = selfcheck.run_backend(spec, 0, 1, paddle.CPUPlace())
    err, note = selfcheck.assess(initial, steps, 1)
    assert err <= spec.tolerance and not note

    # Perturb the last step (an earlier one would also be the next step's starting state).
    last = len(steps) - 1
    rows = selfcheck.unpack(steps[last], 1)[0]
    max_local, dim = len(rows["shard"]), selfcheck.DIM
    shard_at = 2 + max_local  # layout: loss, count, kept (padded), shard, velocity, backbone, ...
    kept = set(rows["kept"].tolist())
    moved_row = next(i for i in range(max_local) if i in kept)
    still_row = next(i for i in range(max_local) if i not in kept)

    wrong_center = [s.copy() for s in steps]
    change = np.abs(rows["shard"] - selfcheck.unpack(steps[last - 1], 1)[0]["shard"]).max()
    wrong_center[last][0, shard_at + moved_row * dim] += 0.01 * change  # 1 % of the step's largest change
    err, note = selfcheck.assess(initial, wrong_center, 1)
    assert spec.tolerance < err < 0.02 and not note, (err, note)

    untouched = [s.copy() for s in steps]
    untouched[last][0, shard_at + still_row * dim] += 1e-3
    err, note = selfcheck.assess(initial, untouched, 1)
    assert not np.isfinite(err) and "not kept moved" in note

    wrong_loss = [s.copy() for s in steps]
    wrong_loss[1][0, 0] *= 1.01
    err, _ = selfcheck.assess(initial, wrong_loss, 1)
    assert err == pytest.approx(0.01, rel=1e-3)
