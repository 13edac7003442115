"""paddle_pfc.bench (tools/benchmark.py): its floor: the head's three products in its blocks, against numpy float64, and
the figures it derives from the interleaved rounds; then the tool as a user runs it (1 rank)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import partial

import numpy as np
import pytest

from helpers.side_by_side import side_by_side
from launcher import REPO
from paddle_pfc.bench.communication import build_collectives_program, collectives_of
from paddle_pfc.bench.floor import GEMM_SIZE, build_floor_program, build_passes_program, paired_floor
from paddle_pfc.bench.main import configurations, parse_args
from paddle_pfc.bench.op_parts import PARTS, part_of
from paddle_pfc.bench.programs import build_train_program, step_optimizer
from paddle_pfc.head.sparse_update import CenterUpdateRule

SCRIPT = REPO / "tools" / "benchmark.py"


@pytest.mark.parametrize("block_rows", [None, 4, 3, 10])
def test_floor_program_does_every_product_of_every_block(block_rows, static_mode):
    """10 kept centers in blocks of 4 (4, 4, 2), 3 (3, 3, 3, 1), 10 or one block: the probe sums
    each block's center gradient [0, 0] and the feature gradient [0, 0]."""
    import paddle

    n, s, d = 5, 10, 3
    main, startup, probe = build_floor_program(n, s, d, block_rows=block_rows)
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        x = np.asarray(scope.find_var("floor_x").get_tensor(), dtype=np.float64)
        w = np.asarray(scope.find_var("floor_w").get_tensor(), dtype=np.float64)
        value, = exe.run(main, fetch_list=[probe])
    rows = block_rows or s
    expected = 0.0
    for start in range(0, s, rows):
        block = w[start:start + rows]
        logits = x @ block.T
        expected += (logits.T @ x)[0, 0]
    expected += (x @ w.T @ w)[0, 0]  # the feature gradient summed over the blocks
    np.testing.assert_allclose(float(np.asarray(value)), expected, rtol=1e-5, atol=1e-12)


@pytest.mark.parametrize("kernels,ratio", [("on", 0.5), ("off", 0.5), ("on", 1.0)])
def test_passes_program_reads_and_updates_the_kept_rows(kernels, ratio, monkeypatch, static_mode):
    """The passes alone, with the head's own block operations (native or Paddle's) on its own shard
    and momentum: one run reads each gathered block's first kept row (the probe) and applies
    Momentum with weight decay to the kept rows only (with the native kernels the gradient's
    tangent projection first), against numpy float64."""
    import paddle

    monkeypatch.setenv("PADDLE_PFC_NATIVE", kernels)
    args = parse_args(["--chunk-rows", "8"])
    cfg = dict(num_classes=40, embedding_size=8, batch_size=4, sample_ratio=ratio, dtype="float32",
               center_dtype="float32")
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        head_main, head_startup, head, _, _ = build_train_program(cfg, args, 0, 1, "head")
    starts = list(range(0, 20 if ratio < 1 else 40, 8))  # blocks of 8 kept centers
    assert head.native == (kernels == "on") and [b.start for b in head.blocks] == starts
    rule = CenterUpdateRule.from_optimizer(step_optimizer(cfg, args, 1))
    main, startup, probe, feed = build_passes_program(head, rule, seed=3)
    kept = np.concatenate([feed[f"passes_index_{k}"] for k in range(len(starts))])
    assert len(kept) == (20 if ratio < 1 else 40) and np.all(np.diff(kept) > 0)
    with paddle.static.scope_guard(scope):  # the head's own shard and momentum
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(head_startup)
        exe.run(startup)

        def table(name):
            return np.asarray(scope.find_var(name).get_tensor(), dtype=np.float64).copy()

        w0, grads = table(head.weight.name), np.concatenate([table(f"passes_grad_{k}") for k in range(len(starts))])
        assert not table(head.velocity.name).any()
        value, = exe.run(main, feed=feed, fetch_list=[probe])
        w1, v1 = table(head.weight.name), table(head.velocity.name)
    # the gathers' first elements; nothing is read before the update from views, or where the
    # head's products read the rows where they lie (the native kernels with sampling)
    read = w0[kept[starts], 0].sum() if ratio < 1 and head.blocks[0].table is None else 0.0
    np.testing.assert_allclose(float(np.asarray(value)), read, rtol=1e-6)
    rows = w0[kept]
    if head.backend.blocks.projects_in_update:
        unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
        grads = grads - np.sum(grads * unit, axis=1, keepdims=True) * unit
    velocity = grads + 5e-4 * rows  # from zero momentum
    np.testing.assert_allclose(v1[kept], velocity, rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(w1[kept], rows - 1e-3 * velocity, rtol=1e-6, atol=1e-9)
    others = np.setdiff1d(np.arange(40), kept)
    assert np.array_equal(w1[others], w0[others]) and not v1[others].any()
    del head_main  # the head's Values live as long as their program


def test_paired_floor_takes_each_ratio_within_its_round():
    # rounds (step, gemm, floor): the machine slows down in round 2, step and floor alike
    rounds = [[1.0, 0.10, 0.80], [2.0, 0.20, 1.60], [1.1, 0.10, 0.80]]
    gemm_flop = 2.0 * GEMM_SIZE ** 3
    figures = paired_floor(rounds, floor_flop=gemm_flop * 4.0)
    assert figures["floor_s"] == pytest.approx(0.80)
    assert figures["step_over_floor"] == pytest.approx(1.25)  # 1.25, 1.25, 1.375
    assert figures["paired_step_s"] == pytest.approx(1.1)
    assert figures["gemm_gflops"] == pytest.approx(gemm_flop / 0.10 / 1e9)
    assert figures["floor_over_gemm"] == pytest.approx(0.5)  # 4 GEMMs of work in 8 GEMMs' time
    assert np.isnan(figures["bf16_floor_s"]) and np.isnan(figures["step_over_bf16_floor"])
    assert np.isnan(figures["passes_s"]) and np.isnan(figures["bound_over_floor"])
    # with the passes column: (floor + passes) / floor and step / (floor + passes), each per round
    figures = paired_floor([row + [float("nan"), 0.2] for row in rounds], floor_flop=gemm_flop * 4.0)
    assert figures["passes_s"] == pytest.approx(0.2)
    assert figures["bound_over_floor"] == pytest.approx(1.25)  # 1.25, 1.125, 1.25
    assert figures["step_over_bound"] == pytest.approx(1.1)  # 1.0, 1.111, 1.1
    assert all(np.isnan(v) for v in paired_floor([], 1.0).values())


def _benchmark_process(out, *extra: str) -> subprocess.CompletedProcess:
    """``tools/benchmark.py`` on a small head (one rank), as a user runs it, its record to ``out``."""
    return subprocess.run([sys.executable, str(SCRIPT), "--num-classes", "3000", "--batch-size", "8",
                           "--embedding-size", "64", "--sample-ratio", "0.5", "--chunk-rows", "512",
                           "--steps", "2", "--warmup", "1", "--json", str(out), *extra],
                          cwd=REPO, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ,
                                   PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])))


def _run_benchmark(out, *extra: str) -> dict:
    """The record of :func:`_benchmark_process`, which must succeed."""
    proc = _benchmark_process(out, *extra)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text().splitlines()[0])


def test_benchmark_runs_as_a_user_runs_it(tmp_path):
    # --seed seeds Paddle's generator too: the same kept centers, so the same losses, run after run
    record, again = side_by_side(partial(_run_benchmark, tmp_path / "head.jsonl"),
                                 partial(_run_benchmark, tmp_path / "again.jsonl", "--no-floor"))
    assert (record["num_local"], record["num_sample"], record["chunks"]) == (3000, 1500, 3)
    assert np.isfinite(record["first_loss"]) and np.isfinite(record["last_loss"])
    for key in ("floor_s", "step_over_floor", "gemm_peak_gflops", "floor_over_gemm_peak", "paired_step_s",
                "passes_s", "bound_over_floor", "step_over_bound"):
        assert record[key] is not None and record[key] > 0, key
    assert record["floor_gflops"] == pytest.approx(6.0 * 8 * 1500 * 64 / record["floor_s"] / 1e9, abs=0.06)
    assert again["first_loss"] == pytest.approx(record["first_loss"], rel=1e-6)
    assert again["last_loss"] == pytest.approx(record["last_loss"], rel=1e-6)
    # the profiled steps' parts: every part the head has took time, and they add up to the profiled step
    parts = record["op_parts_ms"]
    assert set(parts) == set(PARTS) and all(v >= 0 for v in parts.values())
    for part in ("products", "softmax", "sampling", "update", "finite_check"):
        assert parts[part] > 0, part
    assert parts["collectives"] == 0.0  # one rank
    assert sum(parts.values()) == pytest.approx(1e3 * record["op_parts_step_s"], rel=0.02, abs=0.05)


def test_operators_sorted_into_the_parts_of_a_step():
    """Each operator name the head's step runs counts in one part (by its name, whatever its dialect)."""
    expected = {"custom_op.pfc_indexed_logits": "products", "custom_op.pfc_indexed_backward": "products",
                "custom_op.pfc_matmul": "products", "pd_op.matmul": "products",
                "custom_op.pfc_block_softmax_": "softmax", "custom_op.pfc_block_dlogits_": "softmax",
                "custom_op.pfc_sample_shard": "sampling", "custom_op.pfc_gather_rows": "gathers",
                "pd_op.gather": "gathers", "custom_op.pfc_sparse_update_": "update",
                "custom_op.pfc_sparse_update_int8_": "update", "custom_op.pfc_any_nonfinite": "finite_check",
                "pd_op.isfinite": "finite_check", "pd_op.all_gather": "collectives",
                "pd_op.all_reduce_": "collectives", "pd_op.c_allreduce_sum_": "collectives",
                "pd_op.multiply": "other_ops", "custom_op.pfc_inverse_row_norm": "other_ops"}
    assert {name: part_of(name) for name in expected} == expected
    assert set(expected.values()) | {"outside_ops"} == set(PARTS)


_PARTS = ("input", "backbone", "head", "communication", "rest")


def _check_parts(record: dict) -> None:
    """The e2e record's parts of the step: non-negative, their shares of the step timed in the same
    rounds, summing to the whole step (more only where the parts timed alone outlast it: rest is
    then 0)."""
    step = record["parts_step_s"]
    assert step > 0
    for part in _PARTS:
        assert record[f"{part}_s"] >= 0 and record[f"share_{part}"] == pytest.approx(record[f"{part}_s"] / step,
                                                                                      abs=2e-3), part
    timed = sum(record[f"{part}_s"] for part in _PARTS if part != "rest")
    assert sum(record[f"share_{part}"] for part in _PARTS) == pytest.approx(max(1.0, timed / step), abs=0.01)
    assert record["backbone_s"] > 0 and record["head_s"] > 0
    assert record["communication_s"] == 0.0  # one rank: no collective


def test_e2e_mode_trains_a_backbone_as_training_does(tmp_path):
    """``--mode e2e``: a whole step on a backbone with the schema's optimizer settings, fed by the
    loader as training feeds it (the schema's 2 workers; synthetic JPEGs, as the config names no
    data), its images/s and the parts of the step."""
    record = _run_benchmark(tmp_path / "e2e.jsonl", "--mode", "e2e", "--backbone", "mobilefacenet",
                            "--input-size", "32", "--no-floor")
    assert (record["mode"], record["backbone"], record["input_size"]) == ("e2e", "mobilefacenet", 32)
    assert (record["input"], record["input_workers"]) == ("synthetic jpeg", 2)
    assert record["images_per_s"] == pytest.approx(8 / record["median_step_s"], rel=1e-3)
    assert np.isfinite(record["first_loss"]) and np.isfinite(record["last_loss"])
    _check_parts(record)
    assert record["amp"] == "none"


def test_e2e_mode_reads_the_configs_data(tmp_path):
    """A config naming a ``.rec`` feeds the step from it (its labels, the config's workers); data with
    more classes than the head's is refused, naming both counts."""
    import yaml

    from paddle_pfc.data import write_synthetic_rec

    write_synthetic_rec(str(tmp_path / "data"), 64, 32)  # 8 classes of 8 faces
    config = tmp_path / "rec.yaml"
    config.write_text(yaml.safe_dump({"data": {"kind": "rec", "root": str(tmp_path / "data"), "num_classes": 8,
                                                  "num_workers": 0}}))
    args = ("--mode", "e2e", "--backbone", "mobilefacenet", "--input-size", "32", "--no-floor", "--config", str(config))
    record, proc = side_by_side(partial(_run_benchmark, tmp_path / "rec.jsonl", *args),
                                partial(_benchmark_process, tmp_path / "few.jsonl", *args[:-2], "--config", str(config),
                                        "--num-classes", "4"))
    assert (record["input"], record["input_workers"]) == (f"rec:{tmp_path / 'data'}", 0)
    assert np.isfinite(record["first_loss"])
    _check_parts(record)
    assert proc.returncode != 0 and "has 8 classes, more than --num-classes 4" in proc.stderr, proc.stderr[-3000:]


def test_collectives_of_a_step_in_order_and_their_replay(static_mode):
    """The collectives of a 2-rank e2e step, in the order every rank issues them, and a program that
    replays exactly those (the e2e record's communication_s)."""
    args = parse_args(["--mode", "e2e", "--num-classes", "3000", "--batch-size", "8",
                                  "--embedding-size", "64", "--input-size", "32", "--sample-ratio", "0.5"])
    cfg = configurations(args)[0]
    main, _, _, _, _ = build_train_program(cfg, args, 0, 2, "e2e")
    backbone = sum(int(np.prod(p.shape)) for p in main.global_block().all_parameters()
                   if not p.stop_gradient and not getattr(p, "is_distributed", False))
    found = collectives_of(main)
    assert found == [("pd_op.all_gather", (8,), "int64", 2),         # labels
                     ("pd_op.all_gather", (8, 64), "float32", 2),    # features
                     ("pd_op.all_reduce", (16, 1), "float32", 1),    # softmax normaliser: max
                     ("pd_op.all_reduce", (16, 2), "float32", 0),    # its sum and the target logits
                     ("pd_op.all_reduce", (16, 64), "float32", 0),   # the features' gradient
                     ("pd_op.all_reduce", (backbone + 1,), "float32", 0),  # the backbone's gradients, one bucket
                     #                                                   (+ 1: the chain's tie)
                     ("pd_op.all_reduce", (4,), "float32", 1)]       # the step's finite flags
    replay, _, _ = build_collectives_program(found, 2)
    assert collectives_of(replay) == found


def test_e2e_mode_refuses_a_config_that_accumulates_gradients(tmp_path):
    """A config with ``train.accumulate_steps: 4`` is refused, naming the file and the setting,
    rather than timed as steps of one batch."""
    import yaml

    from paddle_pfc.bench.programs import training_config
    from paddle_pfc.utils.errors import UsageError

    config = tmp_path / "acc.yaml"
    config.write_text(yaml.safe_dump({"train": {"accumulate_steps": 4}}))
    args = parse_args(["--mode", "e2e", "--config", str(config)])
    with pytest.raises(UsageError, match=rf"{config}: train.accumulate_steps=4: the benchmark times steps of one"):
        training_config(args, 32)
    config.write_text(yaml.safe_dump({"train": {"accumulate_steps": 1}}))
    assert training_config(args, 32).train.batch_size == 32


def test_e2e_mode_follows_the_configs_amp(tmp_path):
    """A config with ``train.amp: bf16`` benchmarks the bfloat16 step tools/train.py would run (or is
    refused with training's own reason where the CPU has no AVX512_BF16): another loss than float32."""
    import yaml

    config = tmp_path / "bf16.yaml"
    config.write_text(yaml.safe_dump({"train": {"amp": "bf16"}}))  # no data.num_classes: --num-classes is the head's
    args = ("--mode", "e2e", "--backbone", "mobilefacenet", "--input-size", "32", "--no-floor", "--input", "arrays")
    from paddle_pfc.kernels import onednn_ops

    reason = onednn_ops.bfloat16_unsupported()
    # the float32 and the bfloat16 benchmarks, side by side
    fp32, proc = side_by_side(partial(_run_benchmark, tmp_path / "fp32.jsonl", *args),
                              partial(_benchmark_process, tmp_path / "bf16.jsonl", *args, "--config", str(config)))
    assert (fp32["input"], fp32["input_workers"], fp32["input_s"]) == ("arrays", None, 0.0)
    if reason is not None:
        assert proc.returncode != 0 and f"bfloat16 convolutions: {reason}" in proc.stderr, proc.stderr[-3000:]
        return
    assert proc.returncode == 0, proc.stderr[-3000:]
    bf16 = json.loads((tmp_path / "bf16.jsonl").read_text().splitlines()[0])
    assert (fp32["amp"], bf16["amp"]) == ("none", "bf16")
    # the same seed, batches and weights: bfloat16 convolutions move the loss, a little
    assert bf16["first_loss"] == pytest.approx(fp32["first_loss"], rel=0.05)
    assert bf16["first_loss"] != fp32["first_loss"]
