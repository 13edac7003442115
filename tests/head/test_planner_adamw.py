"""The planner's AdamW state: the bytes a real classifier's AdamW states take, in ``plan``, in
``paddle-pfc-plan --optimizer adamw`` (or a config's ``train.optimizer``) and in the trainer's pre-flight."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from launcher import REPO
from paddle_pfc.head.planner import plan
from paddle_pfc.head.spec import optimizer_state_row_bytes


def test_adamw_state_is_what_a_classifier_holds(static_mode):
    import paddle

    import paddle_pfc

    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        feature = paddle.static.data("feature", [4, 64], "float32")
        feature.stop_gradient = False
        label = paddle.static.data("label", [4], "int64")
        head = paddle_pfc.LargeScaleClassifier(feature, label, 0, 2, 1001, sample_ratio=0.1, embedding_size=64,
                                               center_dtype="bfloat16")
        paddle_pfc.minimize(paddle.optimizer.AdamW(0.001), head.output_dict["loss"], startup_program=startup)
    held = sum(int(np.prod(v.shape)) * 4 for v in head.states())
    assert {str(v.dtype) for v in head.states()} == {"paddle.float32"} and head.velocity is None
    p = plan(1001, 64, 2, 0.1, 4, center_dtype="bfloat16", optimizer="adamw")
    assert p.momentum == held == 501 * (2 * 64 + 1) * 4 == 501 * optimizer_state_row_bytes("adamw", 64, "bfloat16")
    assert p.centers == 501 * 64 * 2
    assert [optimizer_state_row_bytes(kind, 64, "bfloat16") for kind in ("momentum", "sgd")] == [128, 0]
    assert optimizer_state_row_bytes("momentum", 64, "int8") == 68


def test_plan_command_counts_the_adamw_state(tmp_path):
    def record(*args: str) -> dict:
        out = subprocess.run([sys.executable, "-m", "paddle_pfc.cli.plan", "--json", "--malloc", "memory", *args],
                             capture_output=True, text=True, check=True, cwd=REPO).stdout
        return json.loads(out)

    adamw = record("--num-classes", "100000", "--world-size", "2", "--optimizer", "adamw")
    assert adamw["momentum"] == 50_000 * (2 * 512 + 1) * 4 and adamw["optimizer"] == "adamw"
    config = ["-c", str(REPO / "tests" / "train_tiny.yaml"), "-o", "train.optimizer=adamw", "-o", "train.lr=0.001"]
    assert record(*config)["momentum"] == 24 * (2 * 32 + 1) * 4
    assert record(*config, "--optimizer", "momentum")["momentum"] == 24 * 32 * 4


def test_training_preflight_plans_the_runs_optimizer(tmp_path):
    from paddle_pfc.engine.config import load_config
    from paddle_pfc.engine.memory import check_head_fits, training_head_spec
    from paddle_pfc.head.host_memory import HeadMemoryError

    tiny = str(REPO / "tests" / "train_tiny.yaml")
    cfg = load_config(tiny, ["train.optimizer=adamw", "train.lr=0.001", "data.num_classes=1000000",
                             "model.embedding_size=512", "train.batch_size=128", "classifier.sample_ratio=0.1"])
    spec = training_head_spec(cfg, 1)
    assert spec.optimizer == "adamw"
    # 1M centers: 1.9 GiB, their momentum 1.9 GiB, their AdamW state 3.8 GiB
    assert check_head_fits(spec, 1, available=2**40).momentum == 1_000_000 * 1025 * 4
    with pytest.raises(HeadMemoryError, match="--optimizer adamw"):
        check_head_fits(spec, 1, available=5 * 2**30)
    check_head_fits(training_head_spec(load_config(tiny, [
        "data.num_classes=1000000", "model.embedding_size=512", "train.batch_size=128",
        "classifier.sample_ratio=0.1"]), 1), 1, available=5 * 2**30, warn=False)
