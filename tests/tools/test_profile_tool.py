"""tools/profile_backbone.py as a user runs it (paddle_pfc's side; the peer needs a local insightface
checkout), and its report's arithmetic."""
from __future__ import annotations

import json
import subprocess
import sys

from helpers.tool_scripts import load_tool
from launcher import REPO

SCRIPT = REPO / "tools" / "profile_backbone.py"


def test_report_ranks_ops_and_accounts_for_the_whole_step():
    figures = {"step_s": 0.1, "ops": {"a": [0.05, 2.0], "b": [0.01, 1.0], "c": [0.03, 4.0], "d": [0.005, 1.0]}}
    lines = load_tool("profile_backbone").report("side", figures, top=2)
    assert lines[0] == "side: 100.0 ms a step"
    assert lines[1].split()[-1] == "a" and lines[2].split()[-1] == "c"
    assert "50.0 %" in lines[1] and "2.0x" in lines[1]
    assert lines[3].endswith("the other 2 ops") and "15.0 ms" in lines[3]
    assert lines[4].endswith("outside any op") and "5.0 ms" in lines[4]


def test_profile_runs_as_a_user_runs_it(tmp_path):
    out = tmp_path / "profile.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--backbone", "mobilefacenet", "--batch-size", "2",
                           "--steps", "1", "--warmup", "1", "--top", "5", "--json", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("CPU: ") and "paddle_pfc: " in proc.stdout
    figures = json.loads(out.read_text())["paddle_pfc"]
    ops = figures["ops"]
    # the backbone's convolutions and norms, forward and backward, once per layer; the channels-last
    # kernel runs the grouped layer, the three strided depthwise ones and the GDC
    assert ops["custom_op.pfc_depthwise_conv2d"][1] == ops["custom_op.pfc_depthwise_conv2d_grad"][1] == 5
    assert ops["custom_op.pfc_batch_norm_prelu_"][1] == ops["custom_op.pfc_batch_norm_prelu_grad"][1] > 10
    assert ops["custom_op.pfc_conv2d"][1] == ops["custom_op.pfc_conv2d_grad"][1] > 10
    total = sum(seconds for seconds, _ in ops.values())
    assert 0.5 * figures["step_s"] < total <= 1.05 * figures["step_s"], (total, figures["step_s"])


def test_a_checkout_the_peer_cannot_run_from_is_a_usage_error(tmp_path):
    """The same check as tools/bench_backbone.py's, before paddle_pfc's side is profiled."""
    proc = subprocess.run([sys.executable, str(SCRIPT), "--insightface", str(tmp_path)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "no backbones/__init__.py" in proc.stderr or "PyTorch, which is not installed here" in proc.stderr
    assert "CPU:" not in proc.stdout  # nothing profiled


def test_report_parts_sums_the_ops_by_kind_and_keeps_the_rest():
    figures = {"step_s": 1.0, "ops": {"pd_op.matmul": [0.5, 2.0], "pd_op.matmul_grad": [0.25, 2.0],
                                      "pd_op.adamw_": [0.125, 10.0]}}
    lines = load_tool("profile_backbone").report_parts("side", figures)
    assert lines[0] == "side by part:"
    assert figures["parts"]["gemm"] == 0.75 and figures["parts"]["optimizer"] == 0.125
    assert figures["parts"]["outside_ops"] == 0.125
    assert any(line.endswith("gemm") and "75.0 %" in line for line in lines)
