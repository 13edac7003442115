"""Fast tests of paddle_pfc.head.planner (pure arithmetic, no paddle launch)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from launcher import REPO
from paddle_pfc.head import planner
from paddle_pfc.head.geometry import block_bounds, block_rows
from paddle_pfc.head.planner import PROCESS_OVERHEAD, max_classes, parse_bytes, plan


def test_small_case_by_hand():
    p = plan(1000, 8, 2, sample_ratio=0.5, batch_size=4, native=False)
    assert (p.num_local, p.num_sample, p.global_batch) == (500, 250, 8)
    assert p.centers == 500 * 8 * 4 == 16000
    assert p.momentum == 16000
    # One block of 250 rows: float32 blocks held and their float32 gradients, + 6 temporaries.
    assert p.kept_working_set == 250 * 8 * (4 + 4) + 6 * 250 * 8 * 4 == 64000
    assert p.logits_buffers == 8 * 250 * 4 + 2 * 8 * 250 * 4 == 24000
    assert p.gathered_features == 1536          # 6 * 8 * 8 * 4
    assert p.sampling == 24000                  # 6 * 500 * 8
    assert p.program_analysis == int(0.14 * 2**20)   # one block
    assert p.process_overhead == PROCESS_OVERHEAD
    assert p.total == sum(getattr(p, c) for c in p.COMPONENTS)


def test_native_kernels_by_hand():
    # The native float32 head reads the kept rows where they lie: only the blocks' float32
    # gradients are held (their gradient handles are never written); the native sampler holds
    # one flag byte per class of the shard and the kept indices.
    p = plan(1000, 8, 2, sample_ratio=0.5, batch_size=4)
    assert p.kept_working_set == 250 * 8 * 4
    assert p.sampling == 500 + 250 * 8
    assert p.logits_buffers == plan(1000, 8, 2, sample_ratio=0.5, batch_size=4, native=False).logits_buffers
    # bfloat16 rows are read by index too: only their bfloat16 gradients are held; Paddle's kernels
    # gather the blocks again in the backward.
    half = dict(center_dtype="bfloat16", compute_dtype="bfloat16")
    assert plan(1000, 8, 2, 0.5, 4, **half).kept_working_set == 250 * 8 * 2
    assert plan(1000, 8, 2, 0.5, 4, **half, native=False).kept_working_set == 250 * 8 * 2 + 6 * 250 * 8 * 4
    # where the CPU multiplies bfloat16 natively, each bfloat16 product gathers its block for itself:
    # the same tensors, and its speed-malloc heap keeps float32's 6 bytes a kept element
    native_bf16 = plan(1000, 8, 2, 0.5, 4, **half, bfloat16_products=True)
    assert native_bf16.kept_working_set == 250 * 8 * 2
    assert plan(1000, 8, 2, 0.5, 4, **half, malloc="memory", bfloat16_products=True).total == \
        plan(1000, 8, 2, 0.5, 4, **half, malloc="memory").total
    assert plan(1000, 8, 2, 0.5, 4, **half, malloc="speed", bfloat16_products=True).heap_retention == 6 * 250 * 8
    assert plan(1000, 8, 2, 0.5, 4, center_dtype="bfloat16", malloc="speed",
                bfloat16_products=True).heap_retention == 6 * 250 * 8
    assert plan(1000, 8, 2, 0.5, 4, **half, malloc="speed").heap_retention == 3 * 250 * 8
    # float16 storage is gathered on either kernels
    float16 = plan(1000, 8, 2, 0.5, 4, center_dtype="float16")
    assert float16.kept_working_set == 250 * 8 * 4 + 6 * 250 * 8 * 4


def test_speed_malloc_keeps_six_bytes_per_kept_element():
    memory = plan(1_000_000, 512, 2, 0.1, center_dtype="bfloat16", compute_dtype="bfloat16")
    speed = plan(1_000_000, 512, 2, 0.1, center_dtype="bfloat16", compute_dtype="bfloat16", malloc="speed")
    assert memory.heap_retention == 0 and (memory.malloc, speed.malloc) == ("memory", "speed")
    assert speed.heap_retention == 3 * 50_000 * 512  # bfloat16 gradients: half float32's 6 bytes
    assert plan(1_000_000, 512, 2, 0.1, malloc="speed").heap_retention == 6 * 50_000 * 512
    assert speed.total == memory.total + speed.heap_retention
    assert max_classes(11 * 2**30, 512, 2, 0.1, malloc="speed") < max_classes(11 * 2**30, 512, 2, 0.1)
    with pytest.raises(ValueError, match="malloc"):
        plan(1000, 8, 2, malloc="default")
    assert [planner.planned_malloc(v) for v in ("memory", "speed", "default", "", None)] == \
        ["memory", "speed", "speed", "speed", "speed"]


@pytest.mark.parametrize("num_classes, dtype, malloc, peak_mib", [
    (1_000_000, "float32", "speed", 2609.4), (1_000_000, "bfloat16", "speed", 1510.4),
    (2_000_000, "float32", "speed", 4837.7), (2_000_000, "bfloat16", "speed", 2632.5)])
def test_speed_plan_within_five_percent_of_measured_peaks(num_classes, dtype, malloc, peak_mib):
    # As below, with --malloc speed (the process default).
    total = plan(num_classes, 512, 2, 0.1, 128, dtype, dtype, malloc=malloc).total / 2**20
    assert abs(total - peak_mib) <= 0.05 * peak_mib


@pytest.mark.parametrize("num_classes, dtype, peak_mib", [
    (1_000_000, "float32", 2481.4), (2_000_000, "float32", 4442.7),
    (1_000_000, "bfloat16", 1457.6), (2_000_000, "bfloat16", 2545.2), (4_000_000, "bfloat16", 4722.4)])
def test_plan_within_five_percent_of_measured_peaks(num_classes, dtype, peak_mib):
    # Peak RSS per rank measured with tools/benchmark.py, PADDLE_PFC_MALLOC=memory, 2 ranks, D=512,
    # ratio 0.1, batch 128, native kernels (docs/benchmarks.md, Head memory: plan against measured peak RSS).
    total = plan(num_classes, 512, 2, 0.1, 128, dtype, dtype).total / 2**20
    assert abs(total - peak_mib) <= 0.05 * peak_mib


def test_blocks_by_hand():
    # D=512, N=256: 4096-row blocks (8 MiB) unless that makes more than 32 blocks.
    assert block_rows(512, 256, 50_000) == 4096
    assert block_rows(512, 256, 500_000) == 15_625
    assert block_rows(64, 4096, 10) == 512     # [N, R] logits within 8 MiB
    assert block_rows(64, 16384, 10) == 256    # at least 256 rows
    assert block_bounds(10, 4) == [(0, 4), (4, 8), (8, None)]  # the last block takes the rest
    assert block_bounds(3, 256) == [(0, None)]
    p = plan(10_000_000, 512, 2, 0.1, batch_size=64, center_dtype="bfloat16", compute_dtype="bfloat16")
    assert p.num_sample == 500_000
    # bfloat16 rows read by index: only their bfloat16 gradients are held.
    assert p.kept_working_set == 500_000 * 512 * 2
    assert p.logits_buffers == 128 * 500_000 * 4 + 2 * 128 * 15_625 * 4
    assert p.program_analysis == int(0.14 * 2**20 * 32 * 32)


def test_dense_case_by_hand():
    p = plan(1001, 8, 2, sample_ratio=1.0, batch_size=4)
    assert (p.num_local, p.num_sample) == (501, 501)     # largest shard: ceil(1001 / 2)
    assert p.sampling == 0
    assert p.kept_working_set == 501 * 8 * 8 + 6 * 501 * 8 * 4
    assert p.total == sum(getattr(p, c) for c in p.COMPONENTS)


def test_sgd_has_no_momentum():
    p = plan(10_000, 64, 2, 0.1, optimizer="sgd")
    assert p.momentum == 0
    assert p.total < plan(10_000, 64, 2, 0.1).total


def test_sample_ratio_rounding():
    p = plan(100, 4, 1, sample_ratio=0.001)
    assert p.num_sample == 1


@pytest.mark.parametrize("num_classes, world_size, ratio, embedding, batch", [
    (100, 1, 0.001, 4, 3),        # the ratio rounds down to 0 centers: one is kept
    (1001, 2, 0.1, 8, 4),         # uneven split: the plan is of rank 0's larger shard
    (20_000, 3, 0.37, 16, 5),
    (30_000, 1, 1.0, 64, 2),      # no sampling: every center in blocks
    (200_000, 2, 0.9, 512, 8),    # several blocks of kept centers
])
def test_plan_matches_a_real_classifier(num_classes, world_size, ratio, embedding, batch, static_mode):
    """The plan's shard, kept centers and blocks are those of a LargeScaleClassifier built (rank 0,
    composite backend) in a static program with the same arguments."""
    import paddle

    import paddle_pfc

    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        feature = paddle.static.data("feature", [batch, embedding], "float32")
        label = paddle.static.data("label", [batch], "int64")
        head = paddle_pfc.LargeScaleClassifier(feature, label, 0, world_size, num_classes, sample_ratio=ratio,
                                               embedding_size=embedding, kernels="composite")
    p = plan(num_classes, embedding, world_size, ratio, batch)
    assert (p.num_local, p.num_sample, p.sampled) == (head.num_local, head.num_sample, head.sampled)
    rows = block_rows(embedding, p.global_batch, p.num_sample)
    assert len(head.blocks) == len(block_bounds(p.num_sample, rows))
    assert [c.start for c in head.blocks] == [start for start, _ in block_bounds(p.num_sample, rows)]


@pytest.mark.parametrize("key,values", [
    ("num_classes", [10_000, 100_000, 1_000_000, 4_000_000]),
    ("embedding_size", [64, 128, 512, 1024]),
    ("sample_ratio", [0.01, 0.1, 0.5, 0.9]),
    ("batch_size", [1, 64, 128, 512]),
])
def test_monotone(key, values):
    args = dict(num_classes=1_000_000, embedding_size=512, world_size=2, sample_ratio=0.1,
                batch_size=128)
    totals = [plan(**{**args, key: v}).total for v in values]
    assert totals == sorted(totals) and len(set(totals)) == len(totals)


def test_more_ranks_less_memory_per_rank():
    totals = [plan(4_000_000, 512, w, 0.1).total for w in (1, 2, 4, 8)]
    assert totals == sorted(totals, reverse=True)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_centers_halve_storage(dtype):
    full = plan(1_000_000, 512, 2, 0.1)
    half = plan(1_000_000, 512, 2, 0.1, center_dtype=dtype)
    assert 2 * half.centers == full.centers
    assert 2 * half.momentum == full.momentum
    # On Paddle's kernels float32 blocks are no longer held to the backward (they are gathered
    # again); the native head holds none either (it reads float32 and bfloat16 kept rows where they
    # lie; float16 ones it gathers)
    assert plan(1_000_000, 512, 2, 0.1, center_dtype=dtype, native=False).kept_working_set \
        < plan(1_000_000, 512, 2, 0.1, native=False).kept_working_set
    assert full.kept_working_set == full.num_sample * 512 * 4
    assert (half.kept_working_set > full.kept_working_set) == (dtype == "float16")
    both = plan(1_000_000, 512, 2, 0.1, center_dtype=dtype, compute_dtype=dtype)
    assert both.kept_working_set < half.kept_working_set   # 2-byte gradients
    assert both.logits_buffers == full.logits_buffers       # the softmax stays float32


def test_int8_momentum_is_a_byte_an_element_and_a_scale_a_row(static_mode):
    """The plan's momentum is the bytes of the momentum a real classifier creates (codes and scales)."""
    import paddle

    import paddle_pfc

    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        feature = paddle.static.data("feature", [4, 64], "float32")
        feature.stop_gradient = False
        label = paddle.static.data("label", [4], "int64")
        head = paddle_pfc.LargeScaleClassifier(feature, label, 0, 2, 1001, sample_ratio=0.1, embedding_size=64,
                                               center_dtype="bfloat16", momentum_dtype="int8")
        paddle_pfc.minimize(paddle.optimizer.Momentum(0.1, 0.9), head.output_dict["loss"], startup_program=startup)
    p = plan(1001, 64, 2, 0.1, 4, center_dtype="bfloat16", momentum_dtype="int8")
    sizes = {"int8": 1, "float32": 4}
    held = sum(int(np.prod(v.shape)) * sizes[str(v.dtype).split(".")[-1]] for v in head.states())
    assert p.momentum == held == 501 * (64 + 4) and p.momentum_dtype == "int8"
    assert p.centers == 501 * 64 * 2
    assert plan(1001, 64, 2, 0.1, 4, center_dtype="bfloat16").momentum_dtype == "bfloat16"
    # at D=512 the momentum takes about half the bytes of a bfloat16 one: more classes fit
    memory = 11 * 2**30
    assert max_classes(memory, 512, 2, 0.1, 128, "bfloat16", "bfloat16", momentum_dtype="int8") \
        > max_classes(memory, 512, 2, 0.1, 128, "bfloat16", "bfloat16")


@pytest.mark.parametrize("memory", [2 * 2**30, 11 * 2**30, 40 * 2**30])
@pytest.mark.parametrize("ratio", [0.1, 1.0])
def test_max_classes_is_the_inverse(memory, ratio):
    m = max_classes(memory, 512, 2, ratio, 128)
    assert m >= 2
    assert plan(m, 512, 2, ratio, 128).total <= memory
    assert plan(m + 1, 512, 2, ratio, 128).total > memory


def test_max_classes_nothing_fits():
    assert max_classes(PROCESS_OVERHEAD // 2, 512, 2, 0.1) == 0


def test_max_classes_grows_with_memory_and_ranks():
    assert max_classes(8 * 2**30, 512, 2, 0.1) < max_classes(16 * 2**30, 512, 2, 0.1)
    assert max_classes(8 * 2**30, 512, 2, 0.1) < max_classes(8 * 2**30, 512, 4, 0.1)


@pytest.mark.parametrize("kwargs,name", [
    (dict(num_classes=0), "num_classes"),
    (dict(num_classes=1), "num_classes"),          # fewer classes than ranks
    (dict(num_classes=10.5), "num_classes"),
    (dict(embedding_size=0), "embedding_size"),
    (dict(world_size=0), "world_size"),
    (dict(world_size=True), "world_size"),
    (dict(sample_ratio=0.0), "sample_ratio"),
    (dict(sample_ratio=1.5), "sample_ratio"),
    (dict(sample_ratio=float("nan")), "sample_ratio"),
    (dict(batch_size=0), "batch_size"),
    (dict(center_dtype="float64"), "center_dtype"),
    (dict(compute_dtype="int8"), "compute_dtype"),
    (dict(optimizer="adam"), "optimizer"),
])
def test_bad_arguments(kwargs, name):
    args = dict(num_classes=1000, embedding_size=64, world_size=2)
    with pytest.raises(ValueError, match=name):
        plan(**{**args, **kwargs})


@pytest.mark.parametrize("memory", [0, -5, float("inf"), "11GiB", True])
def test_max_classes_bad_memory(memory):
    with pytest.raises(ValueError, match="memory_per_rank_bytes"):
        max_classes(memory, 512, 2)


def test_parse_bytes():
    assert parse_bytes("11GiB") == 11 * 2**30
    assert parse_bytes("512 MiB") == 512 * 2**20
    assert parse_bytes("1.5G") == 1_500_000_000
    assert parse_bytes(1024) == 1024
    for bad in ("", "12 parsecs", "-3GiB", "GiB"):
        with pytest.raises(ValueError, match="memory"):
            parse_bytes(bad)


def test_table_mentions_every_component():
    text = plan(1_000_000, 512, 2, 0.1).table()
    for c in planner.MemoryPlan.COMPONENTS + ("total",):
        assert c in text
    assert "GiB" in text


def test_planner_imports_no_paddle():
    code = "import sys, paddle_pfc.head.planner; assert 'paddle' not in sys.modules, sorted(sys.modules)"
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)


def test_cli():
    # this checkout's package, not an installed one
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, str(REPO / "tools" / "plan.py"), "--num-classes",
                          "1000000", "--world-size", "2", "--sample-ratio", "0.1"],
                         capture_output=True, text=True, check=True, env=env).stdout
    assert "total" in out and "GiB" in out
    out = subprocess.run([sys.executable, str(REPO / "tools" / "plan.py"), "--max-classes",
                          "--memory", "11GiB", "--world-size", "2", "--sample-ratio", "0.1", "--malloc", "memory"],
                         capture_output=True, text=True, check=True, env=env).stdout
    m = max_classes(11 * 2**30, 512, 2, 0.1, 128)
    assert f"{m:,}" in out
    out = subprocess.run([sys.executable, str(REPO / "tools" / "plan.py"), "--num-classes", "1000000", "--world-size",
                          "2", "--sample-ratio", "0.1", "--momentum-dtype", "int8", "--json"],
                         capture_output=True, text=True, check=True, env=env).stdout
    assert json.loads(out)["momentum"] == plan(1_000_000, 512, 2, 0.1, momentum_dtype="int8").momentum == 500_000 * 516
    half = dict(center_dtype="bfloat16", compute_dtype="bfloat16")
    for answer, native_bf16 in (("yes", True), ("no", False), ("auto", cpu_has_native_bfloat16())):
        out = subprocess.run([sys.executable, str(REPO / "tools" / "plan.py"), "--num-classes", "1000000",
                              "--world-size", "2", "--sample-ratio", "0.1", "--center-dtype", "bfloat16",
                              "--compute-dtype", "bfloat16", "--bf16-products", answer, "--malloc", "speed",
                              "--json"],
                             capture_output=True, text=True, check=True, env=env).stdout
        expected = plan(1_000_000, 512, 2, 0.1, **half, malloc="speed", bfloat16_products=native_bf16)
        assert json.loads(out)["heap_retention"] == expected.heap_retention, answer
    bad = subprocess.run([sys.executable, str(REPO / "tools" / "plan.py"), "--num-classes", "0"],
                         capture_output=True, text=True, env=env)
    assert bad.returncode != 0 and "num_classes" in bad.stderr


def cpu_has_native_bfloat16() -> bool:
    """This CPU reports AVX512_BF16 or AMX-BF16 (/proc/cpuinfo)."""
    flags = Path("/proc/cpuinfo").read_text().split() if Path("/proc/cpuinfo").exists() else []
    return "avx512_bf16" in flags or "amx_bf16" in flags


def test_cli_config_world_size():
    """``-c`` plans the config's classes, embedding, ratio and batch on ``--world-size`` ranks and says
    which world size it used (a config states none)."""
    from paddle_pfc.cli import plan as plan_cli
    from paddle_pfc.engine.config import load_config

    config = REPO / "configs" / "glint360k_r100.yaml"
    cfg = load_config(str(config), [])
    out = subprocess.run([sys.executable, "-m", "paddle_pfc.cli.plan", "-c", str(config), "--world-size", "8",
                          "--malloc", "memory", "--json"], capture_output=True, text=True, check=True, cwd=REPO).stdout
    record = json.loads(out)
    expected = plan(cfg.data.num_classes, cfg.model.embedding_size, 8, cfg.classifier.sample_ratio,
                    cfg.train.batch_size, cfg.classifier.center_dtype, cfg.classifier.dtype)
    assert record["world_size"] == 8 and record["total"] == expected.total
    text = subprocess.run([sys.executable, "-m", "paddle_pfc.cli.plan", "-c", str(config)],
                          capture_output=True, text=True, check=True, cwd=REPO).stdout
    assert "world size 1 (the default: a training config states none" in text and "W=1," in text
    assert "world size 8 (--world-size)" in subprocess.run(
        [sys.executable, "-m", "paddle_pfc.cli.plan", "-c", str(config), "--world-size", "8"],
        capture_output=True, text=True, check=True, cwd=REPO).stdout
    assert plan_cli.DEFAULTS["world_size"] == [1]
