"""The class centers' start-up: the bfloat16 shard's initial values and memory, and the start-up lines."""
import logging

import numpy as np
import paddle

import paddle_pfc
from paddle_pfc.head.dtypes import from_float32
from paddle_pfc.head.spec import HeadSpec
from paddle_pfc.head.startup_log import center_initialisation, describe_centers


def _initialised(dtype: str, num_classes: int, embedding: int, momentum: bool = False):
    """(head, its shard after the start-up program, peak bytes the start-up allocated above what was live)."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        feature = paddle.static.data("feature", [4, embedding], "float32")
        label = paddle.static.data("label", [4], "int64")
        head = paddle_pfc.LargeScaleClassifier(feature, label, 1, 2, num_classes, sample_ratio=0.5,
                                               embedding_size=embedding, seed=3, dtype=dtype, center_dtype=dtype)
        if momentum:
            paddle_pfc.minimize(paddle.optimizer.Momentum(0.1, momentum=0.9), head.output_dict["loss"])
    core = paddle.base.core
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        before = core.host_memory_stat_current_value("Allocated", 0)
        core.host_memory_stat_reset_peak_value("Allocated", 0)
        paddle.static.Executor(paddle.CPUPlace()).run(startup)
        peak = core.host_memory_stat_peak_value("Allocated", 0) - before
        shard = np.array(scope.find_var(head.weight.name).get_tensor())
    return head, shard, peak


def test_bfloat16_shard_is_the_float32_draws_rounded(static_mode):
    """The bfloat16 shard holds the float32 shard's normal(0, 0.01) draws of the same seed, each rounded
    to nearest even: one initialisation in distribution and in value whatever the storage dtype."""
    _, full, _ = _initialised("float32", 1000, 16)
    _, half, _ = _initialised("bfloat16", 1000, 16)
    assert half.dtype == np.uint16 and half.shape == full.shape == (500, 16)
    np.testing.assert_array_equal(half, from_float32(full, "bfloat16"))
    assert 0.008 < full.std() < 0.012 and abs(full.mean()) < 0.002


def test_bfloat16_start_up_allocates_no_float32_shard(static_mode):
    """The start-up program writes the bfloat16 centers and momentum directly: its peak allocation is
    their bytes, below one float32 copy of the shard on top of them."""
    head, _, peak = _initialised("bfloat16", 40_000, 64, momentum=True)
    shard = head.num_local * 64 * 2
    assert head.velocity is not None
    assert 2 * shard <= peak < 2 * shard + shard  # centers and momentum; a float32 temporary is 2 shards


def test_start_up_lines(static_mode, caplog):
    head, _, _ = _initialised("bfloat16", 40_000, 64, momentum=True)
    assert describe_centers(HeadSpec(5_000_000, 512, center_dtype="bfloat16"), True) == (
        "5,000,000 class centers (D=512, bfloat16, 4.8 GiB on this rank, 9.5 GiB with their momentum)")
    # int8 momentum: 512 bytes and a float32 scale a row on top of the 1024 bytes of the centers
    assert describe_centers(HeadSpec(5_000_000, 512, center_dtype="bfloat16", momentum_dtype="int8"), True) == (
        "5,000,000 class centers (D=512, bfloat16, 4.8 GiB on this rank, 7.2 GiB with their momentum)")
    caplog.set_level(logging.INFO, logger="paddle_pfc.head")
    with center_initialisation([head], announce_bytes=2 * head.num_local * 64 * 2):
        pass
    lines = [r.getMessage() for r in caplog.records if r.name == "paddle_pfc.head"]
    assert lines[0] == ("initialising 20,000 class centers (D=64, bfloat16, 0.0 GiB on this rank, 0.0 GiB with "
                        "their momentum)…")
    assert lines[1].startswith("… class centers initialised in ") and lines[1].endswith(" s")
    caplog.clear()
    with center_initialisation([head], announce_bytes=2 * head.num_local * 64 * 2 + 1):  # below: silent
        pass
    assert not [r for r in caplog.records if r.name == "paddle_pfc.head"]


def test_centers_without_random_init_are_zeros_and_drawn_by_no_op(static_mode, caplog):
    """``init_centers=False`` (centers a checkpoint fills): the startup program sets the shard from a
    fill, not a random draw, the shard and its momentum are zeros, and the start-up lines say it
    allocates them; the default head keeps its normal draw."""
    from helpers.startup_ops import RANDOM_OPS, initialisers

    heads, programs = {}, []
    for init in (True, False):
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            feature = paddle.static.data("feature", [4, 16], "float32")
            label = paddle.static.data("label", [4], "int64")
            head = paddle_pfc.LargeScaleClassifier(feature, label, 0, 1, 50, embedding_size=16, center_dtype="bfloat16",
                                                   momentum_dtype="int8", init_centers=init)
            paddle_pfc.minimize(paddle.optimizer.Momentum(0.1, momentum=0.9), head.output_dict["loss"])
        scope = paddle.static.Scope()
        with paddle.static.scope_guard(scope):
            paddle.static.Executor(paddle.CPUPlace()).run(startup)
            shard = np.array(scope.find_var(head.weight.name).get_tensor()).copy()  # not a view of the scope's memory
        heads[init] = (head, initialisers(startup), shard)
        programs.append((main, startup))  # the heads' Values live only as long as their programs
    head, ops, shard = heads[True]
    assert head.init_centers and ops[head.weight.name] == "pd_op.gaussian" and shard.any()
    head, ops, shard = heads[False]
    assert not head.init_centers and not shard.any() and shard.shape == (50, 16)
    assert ops[head.weight.name] == "pd_op.full" and not RANDOM_OPS & set(ops.values())
    assert {ops[v.name] for v in head.states()} == {"pd_op.full"}
    caplog.set_level(logging.INFO, logger="paddle_pfc.head")
    with center_initialisation([head], announce_bytes=1):
        pass
    lines = [r.getMessage() for r in caplog.records if r.name == "paddle_pfc.head"]
    assert lines[0].startswith("allocating 50 class centers (D=16, bfloat16") and "as zeros" in lines[0]
    assert lines[1].startswith("… class centers allocated in ")
