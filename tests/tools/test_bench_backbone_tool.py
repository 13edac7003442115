"""tools/bench_backbone.py refuses a peer it cannot run before it runs anything."""
from __future__ import annotations

import importlib.util
import subprocess
import sys

from launcher import REPO

SCRIPT = REPO / "tools" / "bench_backbone.py"


def _bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--steps", "1", "--rounds", "1", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_a_checkout_without_arcface_torch_is_a_usage_error(tmp_path):
    """A wrong --insightface path used to fail in the peer's worker ("No module named 'backbones'")
    after paddle_pfc's side had run; now it is refused first, naming what is missing (or torch)."""
    (tmp_path / "recognition" / "arcface_torch" / "backbones").mkdir(parents=True)
    (tmp_path / "recognition" / "arcface_torch" / "backbones" / "__init__.py").write_text("")
    torch_missing = importlib.util.find_spec("torch") is None
    proc = _bench("--insightface", str(tmp_path), "--classes", "100")
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "paddle_pfc " not in proc.stdout  # no side ran
    if torch_missing:
        assert "PyTorch, which is not installed here" in proc.stderr
        return
    assert f"no partial_fc_v2.py, losses.py under {tmp_path / 'recognition' / 'arcface_torch'}" in proc.stderr
    proc = _bench("--insightface", str(tmp_path / "elsewhere"))  # backbone only: backbones/ is what it needs
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert ("no backbones/__init__.py" in proc.stderr
            and "a checkout of github.com/deepinsight/insightface" in proc.stderr)
