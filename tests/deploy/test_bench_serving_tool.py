"""tools/bench_serving.py: the FLOP count of the forward floor, and a run end to end."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.tool_scripts import load_tool

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tools" / "bench_serving.py"

needs_onnx = pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("paddle2onnx", "onnxruntime")),
                                reason="paddle2onnx / onnxruntime not installed")


@needs_onnx
def test_flops_of_a_conv_and_a_matmul(tmp_path):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    conv_w = numpy_helper.from_array(np.zeros((4, 3, 3, 3), np.float32), "w")  # 3 -> 4 channels, 3x3
    conv_g = numpy_helper.from_array(np.zeros((4, 2, 3, 3), np.float32), "wg")  # 4 -> 4, 2 groups, stride 2
    fc = numpy_helper.from_array(np.zeros((4 * 5 * 5, 6), np.float32), "fc")
    shape = numpy_helper.from_array(np.array([0, -1], np.int64), "shape")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["c", "wg"], ["g"], pads=[1, 1, 1, 1], strides=[2, 2], group=2),
             helper.make_node("Reshape", ["g", "shape"], ["f"]),
             helper.make_node("MatMul", ["f", "fc"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 10, 10])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 6])],
                              [conv_w, conv_g, fc, shape])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    expected = 2 * (4 * 10 * 10 * 3 * 9 + 4 * 5 * 5 * 2 * 9 + 6 * 100)
    assert load_tool("bench_serving").onnx_flops_per_image(path, (10, 10)) == expected


@needs_onnx
def test_runs_and_reports_both_backends():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, str(SCRIPT), "--backbone", "mobilefacenet", "--input-size", "32",
                           "--embedding-size", "32", "--batch-size", "2", "--rounds", "1", "--steps", "1"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert any(ln.startswith("forward floor:") for ln in lines), proc.stdout
    for side in ("paddle", "onnxruntime"):
        row = next(ln for ln in lines if ln.strip().startswith(side + ":"))
        assert "images/s" in row and "x onnxruntime" in row and "of the floor" in row
        assert float(row.rsplit("smallest cosine ", 1)[1]) > 0.99999, row
    from paddle_pfc.kernels.onednn_ops import bfloat16_isa_missing

    row = next(ln for ln in lines if ln.strip().startswith("paddle, bfloat16:"))
    if bfloat16_isa_missing() is None:  # served with bfloat16 products: close to float32, not equal
        assert 0.999 <= float(row.rsplit("smallest cosine ", 1)[1]) < 0.99999, row
    else:
        assert "not measured: oneDNN has no native bfloat16 products" in row, row
