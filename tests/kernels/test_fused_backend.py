"""The backend switch (``kernels=`` / ``PADDLE_PFC_KERNELS`` / ``classifier.kernels``), the fused backend's
guard against a kernel that drops a positive center, and training the tiny config on the fused backend."""
from __future__ import annotations

import logging
import subprocess
import sys

import numpy as np
import paddle
import pytest

import paddle_pfc
from launcher import REPO
from paddle_pfc.kernels.emulated import EmulatedFusedKernels
from workers.batch_worker import DropsFirstPositive


def build(**kwargs):
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        x = paddle.static.data("x", [4, 8], "float32")
        x.stop_gradient = False
        y = paddle.static.data("y", [4], "int64")
        head = paddle_pfc.LargeScaleClassifier(x, y, 0, 1, 20, embedding_size=8, sample_ratio=0.5, **kwargs)
    return main, startup, head


def test_bad_choice_names_the_argument_or_the_variable(static_mode, monkeypatch):
    with pytest.raises(ValueError, match=r"kernels must be one of auto, fused, composite, got 'gpu'"):
        build(kernels="gpu")
    monkeypatch.setenv("PADDLE_PFC_KERNELS", "fast")
    with pytest.raises(ValueError, match=r"PADDLE_PFC_KERNELS must be one of auto, fused, composite, got 'fast'"):
        build()
    assert build(kernels="composite")[2].kernels == "composite"  # the argument wins over the variable


@pytest.mark.parametrize("choice, backend, emulated", [(None, "composite", False), ("auto", "composite", False),
                                                    ("composite", "composite", False), ("fused", "fused", True)])
def test_backend_on_cpu(choice, backend, emulated, static_mode, monkeypatch, caplog):
    monkeypatch.delenv("PADDLE_PFC_KERNELS", raising=False)
    monkeypatch.setattr("paddle_pfc.kernels._WARNED_EMULATED", set())  # the warning is said once a process
    with caplog.at_level(logging.WARNING, logger="paddle_pfc"):
        _, _, head = build(kernels=choice)
    assert (head.kernels, head.emulated, head.fused) == (backend, emulated, backend == "fused")
    assert head.native == (backend == "composite")  # conftest builds the native kernels
    assert ("emulated" in caplog.text) == emulated
    if choice is None:
        monkeypatch.setenv("PADDLE_PFC_KERNELS", "fused")
        assert build()[2].kernels == "fused"


def _ops(program) -> list[str]:
    return [op.name() for op in program.global_block().ops]


def test_auto_on_cpu_builds_the_composite_program_op_for_op(static_mode, monkeypatch):
    monkeypatch.delenv("PADDLE_PFC_KERNELS", raising=False)
    auto, composite, fused = build()[0], build(kernels="composite")[0], build(kernels="fused")[0]
    assert _ops(auto) == _ops(composite)
    assert _ops(fused) != _ops(composite) and "pd_op.argsort" in _ops(fused)


def test_a_dropped_positive_stops_the_step(static_mode, monkeypatch):
    monkeypatch.setattr("paddle_pfc.kernels.fused_kernels", lambda emulated: DropsFirstPositive())
    main, startup, head = build(kernels="fused")
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    feed = {"x": np.ones((4, 8), np.float32), "y": np.array([3, 3, 7, 11])}
    with pytest.raises(paddle_pfc.LabelRangeError, match="fused class_center_sample kernel dropped a positive"):
        paddle_pfc.run(exe, main, feed=feed, fetch_list=[head.output_dict["loss"]])
    # The same program with a kernel that keeps its positives runs.
    monkeypatch.setattr("paddle_pfc.kernels.fused_kernels", lambda emulated: EmulatedFusedKernels())
    main, startup, head = build(kernels="fused")
    exe.run(startup)
    (loss,) = paddle_pfc.run(exe, main, feed=feed, fetch_list=[head.output_dict["loss"]])
    assert np.isfinite(loss)


def test_tiny_training_runs_on_the_fused_backend(tmp_path):
    cmd = [sys.executable, "tools/train.py", "-c", str(REPO / "tests" / "train_tiny.yaml"),
           "-o", "classifier.kernels=fused", "-o", "train.max_steps=3", "-o", f"train.output_dir={tmp_path}"]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "emulated class_center_sample" in proc.stdout + proc.stderr
    assert (tmp_path / "checkpoints" / "step_000000003").is_dir()
    bad = subprocess.run(cmd[:4] + ["-o", "classifier.kernels=gpu", "-o", f"train.output_dir={tmp_path / 'bad'}"],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "classifier.kernels" in bad.stderr, bad.stderr[-2000:]
