"""ONNX export with no network: nothing is installed, no pip is started, polygraphy is never
imported (paddle2onnx's polygraphy step pip-installs what it misses)."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("paddle2onnx", "onnxruntime")),
                                reason="paddle2onnx / onnxruntime not installed")

REPO = Path(__file__).resolve().parents[2]

# Runs the export CLI under an audit hook that records every process it starts, and reports
# which distributions are installed before and after, whether polygraphy was imported and
# whether the autoinstall switch was left set.
_SCRIPT = textwrap.dedent("""
    import json, os, site, sys

    started = []

    def hook(event, args):
        if event in ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn"):
            started.append(repr(args)[:300])

    sys.addaudithook(hook)
    dirs = [d for d in site.getsitepackages() + [site.getusersitepackages()] if os.path.isdir(d)]
    installed = lambda: sorted(os.path.join(d, n) for d in dirs for n in os.listdir(d))
    before = installed()
    from paddle_pfc.cli import export as export_cli
    rc = export_cli.main(["--random-init", "--backbone", "mobilefacenet", "--embedding-size", "32",
                          "--input-size", "32", "--out", sys.argv[1], "--format", "onnx"])
    print("RESULT " + json.dumps({
        "rc": rc, "started": started, "added": sorted(set(installed()) - set(before)),
        "polygraphy": any(m.split(".")[0] == "polygraphy" for m in sys.modules),
        "autoinstall": os.environ.get("POLYGRAPHY_AUTOINSTALL_DEPS"),
    }))
""")


def test_onnx_export_offline_installs_nothing(tmp_path):
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and not k.startswith("PIP_")}
    env.update({"PIP_INDEX_URL": "http://127.0.0.1:9/", "PIP_EXTRA_INDEX_URL": "", "PIP_NO_INDEX": "1",
                "PIP_RETRIES": "0", "PIP_TIMEOUT": "1", "PYTHONPATH": str(REPO)})
    script = tmp_path / "run_export.py"
    script.write_text(_SCRIPT)
    out = tmp_path / "model"
    proc = subprocess.run([sys.executable, str(script), str(out)], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(lines[-1][len("RESULT "):])
    assert result["rc"] == 0, proc.stdout[-3000:]
    assert (out / "model.onnx").is_file()
    assert result["added"] == []
    assert [s for s in result["started"] if "pip" in s] == []
    assert not result["polygraphy"]
    assert result["autoinstall"] is None
