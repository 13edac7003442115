"""The head's memory checked against the machine's before anything is allocated
(paddle_pfc/engine/memory.py): a shard that cannot fit is an error naming the numbers, not a
SIGKILL from the kernel minutes later."""
from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from launcher import REPO
from paddle_pfc.engine.config import load_config
from paddle_pfc.engine.memory import check_head_fits, training_head_spec
from paddle_pfc.head.host_memory import HeadMemoryError, available_memory
from paddle_pfc.head.layout import block_layout
from paddle_pfc.head.spec import HeadSpec

GIB = 2**30


def head(num_classes, embedding_size, world_size, sample_ratio, batch_size, center_dtype, compute_dtype) -> HeadSpec:
    return HeadSpec(num_classes=num_classes, embedding_size=embedding_size, world_size=world_size,
                    sample_ratio=sample_ratio, batch_size=batch_size, center_dtype=center_dtype,
                    compute_dtype=compute_dtype)


MEMINFO = ("MemTotal:       24000000 kB\nMemFree:         1000 kB\n"
           "MemAvailable:   20000000 kB\nSwapFree:        1000000 kB\n")


def test_available_memory_is_memavailable_plus_swap_within_the_cgroup(tmp_path):
    assert available_memory(MEMINFO, cgroup=tmp_path) == 21_000_000 * 1024  # no cgroup files: meminfo alone
    (tmp_path / "memory.max").write_text("max\n")
    (tmp_path / "memory.current").write_text("123\n")
    assert available_memory(MEMINFO, cgroup=tmp_path) == 21_000_000 * 1024  # no limit
    (tmp_path / "memory.max").write_text(f"{8 * GIB}\n")
    (tmp_path / "memory.current").write_text(f"{3 * GIB}\n")
    assert available_memory(MEMINFO, cgroup=tmp_path) == 5 * GIB  # the container's limit is lower
    assert available_memory("MemTotal: 1 kB\n", cgroup=tmp_path) is None  # nothing to go by: no check
    v1 = tmp_path / "v1"
    (v1 / "memory").mkdir(parents=True)
    (v1 / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")  # v1's "no limit"
    (v1 / "memory" / "memory.usage_in_bytes").write_text(f"{GIB}\n")
    assert available_memory(MEMINFO, cgroup=v1) == 21_000_000 * 1024
    (v1 / "memory" / "memory.limit_in_bytes").write_text(f"{4 * GIB}\n")
    assert available_memory(MEMINFO, cgroup=v1) == 3 * GIB


def test_centers_and_momentum_beyond_the_memory_are_an_error_naming_the_sizes():
    # 10M classes x 512 over 2 ranks: 5M centers a rank, float32 values + momentum = 2 x 5M x 512 x 4 bytes
    state = 2 * 5_000_000 * 512 * 4
    with pytest.raises(HeadMemoryError) as info:
        check_head_fits(head(10_000_000, 512, 2, 0.1, 128, "float32", "float32"), local_ranks=2,
                        available=2 * state - 1)
    message = str(info.value)
    assert f"take {state / GIB:.2f} GiB a rank; 2 ranks on this machine need {2 * state / GIB:.2f} GiB" in message
    assert "classifier.center_dtype=bfloat16 (half the bytes)" in message
    assert "5,000,000 centers a rank" in message and "paddle-pfc-plan --num-classes 10000000" in message
    # in bfloat16 the same shard takes half: then it is the plan's peak that decides
    plan = check_head_fits(head(10_000_000, 512, 2, 0.1, 128, "bfloat16", "float32"), local_ranks=2, available=10**15)
    assert plan.centers + plan.momentum == state // 2


def test_planned_peak_beyond_the_margin_is_an_error_and_within_it_a_warning(caplog):
    plan = check_head_fits(head(1_000_000, 512, 2, 1.0, 128, "float32", "float32"), local_ranks=1, available=10**15)
    assert plan.total > 1.5 * (plan.centers + plan.momentum)  # ratio 1.0: the kept blocks are a shard's worth
    with pytest.raises(HeadMemoryError, match="planned step peak"):
        check_head_fits(head(1_000_000, 512, 2, 1.0, 128, "float32", "float32"), local_ranks=1,
                        available=int(plan.total / 1.11))
    with caplog.at_level(logging.WARNING, logger="paddle_pfc.train"):
        check_head_fits(head(1_000_000, 512, 2, 1.0, 128, "float32", "float32"), local_ranks=1,
                        available=int(plan.total / 1.05))
        assert "the kernel may kill the run" in caplog.text
        caplog.clear()
        check_head_fits(head(1_000_000, 512, 2, 1.0, 128, "float32", "float32"), local_ranks=1,
                        available=int(plan.total / 1.05), warn=False)
        check_head_fits(head(1_000_000, 512, 2, 1.0, 128, "float32", "float32"), local_ranks=1, available=plan.total)
    assert caplog.text == ""


def test_training_a_head_larger_than_the_machine_stops_at_once_naming_it(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "train.py"),
                           "-c", str(REPO / "configs" / "demo_cpu.yaml"),
                           "-o", f"train.output_dir={out}", "-o", "data.num_classes=1000000000000"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert proc.returncode == 2 and len(errors) == 1, proc.stderr[-3000:]
    assert "[rank 0] the head does not fit in memory: 1,000,000,000,000 classes x 128" in errors[0]
    assert "the head does not fit in memory" in (out / "error_rank0.txt").read_text()


@pytest.mark.parametrize("setting, mode", [("memory", "memory"), ("speed", "speed"), ("", "speed")])
def test_the_check_plans_the_process_malloc_mode(monkeypatch, setting, mode):
    """The run's malloc mode ($PADDLE_PFC_MALLOC, else speed) is the one planned and named in the command."""
    monkeypatch.setenv("PADDLE_PFC_MALLOC", setting)
    cfg = load_config(str(REPO / "tests" / "train_tiny.yaml"),
                      ["data.num_classes=1000000", "model.embedding_size=512", "classifier.sample_ratio=0.1",
                       "train.batch_size=128", "classifier.center_dtype=bfloat16", "classifier.dtype=bfloat16"])
    spec = training_head_spec(cfg, 2)
    plan = check_head_fits(spec, local_ranks=2, available=10**15)
    assert plan.malloc == mode and (plan.heap_retention > 0) == (mode == "speed")
    with pytest.raises(HeadMemoryError, match=f"--malloc {mode} "):
        check_head_fits(spec, local_ranks=2, available=int(plan.total * 2 / 1.2))


def test_the_training_spec_is_the_built_heads(static_mode):
    """The pre-flight plans the head the builder builds: the same spec and the same blocks on this machine
    (its native kernels, its bfloat16 products)."""
    import paddle

    from paddle_pfc.engine.builder import build_head

    bfloat16 = ["classifier.center_dtype=bfloat16", "classifier.dtype=bfloat16"]
    for overrides in ([], ["classifier.dtype=bfloat16"], [*bfloat16, "classifier.momentum_dtype=int8"],
                      [*bfloat16, "classifier.sample_ratio=1.0"], ["classifier.kernels=fused"]):
        cfg = load_config(str(REPO / "tests" / "train_tiny.yaml"),
                          ["data.num_classes=40000", "model.embedding_size=512", *overrides])
        spec = training_head_spec(cfg, 1)
        with paddle.static.program_guard(paddle.static.Program(), paddle.static.Program()):
            feature = paddle.static.data("feature", [cfg.train.batch_size, cfg.model.embedding_size], "float32")
            label = paddle.static.data("label", [cfg.train.batch_size], "int64")
            built = build_head(cfg, feature, label, 0, 1)
        fields = ("kernels", "native", "bfloat16_products", "indexed_products", "momentum_dtype", "batch_size")
        assert [getattr(spec, f) for f in fields] == [getattr(built.spec, f) for f in fields]
        assert block_layout(spec) == built.layout
        assert [(b.start, b.stop) for b in built.blocks] == list(block_layout(spec).bounds)
