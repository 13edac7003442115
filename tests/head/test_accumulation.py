"""Gradient accumulation (paddle_pfc.head.accumulation, ``minimize(..., accumulate_steps=K)``): one
accumulated step equals one step of the K x batch batch, against the float64 reference."""
import numpy as np
import pytest

from helpers.accumulate_runs import accumulate_cases, check_accumulated, load_ranks, nonfinite_cases, run_accumulate

#: world size -> {run: (sampled cases, native kernels, backend)}: the native kernels, Paddle's ops
#: and the fused kernels (their CPU emulation) with sampling (one set of kept centers for the K
#: micro-batches) and without.
RUNS = {
    1: {"native": (True, "on", "composite"), "paddle_ops": (True, "off", "composite"), "fused": (True, "off", "fused"),
        "native_full": (False, "on", "composite"), "fused_full": (False, "off", "fused")},
    2: {"native": (True, "on", "composite"), "paddle_ops": (True, "off", "composite"), "fused": (True, "off", "fused"),
        "paddle_ops_full": (False, "off", "composite"), "fused_full": (False, "off", "fused")},
    3: {"native": (True, "on", "composite"), "paddle_ops_full": (False, "off", "composite"),
        "fused": (True, "off", "fused")},
}
_DONE: dict = {}


def _runs(world_size: int, tmp_path_factory) -> dict:
    if world_size not in _DONE:
        runs = {tag: (accumulate_cases(world_size, sampled), native, kernels)
                for tag, (sampled, native, kernels) in RUNS[world_size].items()}
        if world_size == 1:
            runs["nonfinite"] = (nonfinite_cases(), "on", "composite")
        _DONE[world_size] = run_accumulate(world_size, tmp_path_factory.mktemp(f"accumulate_w{world_size}"), runs)
    return _DONE[world_size]


@pytest.mark.parametrize("world_size", [1, pytest.param(2, marks=pytest.mark.multirank),
                                        pytest.param(3, marks=pytest.mark.multirank)])
def test_one_accumulated_step_is_one_step_of_the_whole_batch(world_size, tmp_path_factory):
    """SGD, Momentum and AdamW with K = 2 and 3, sampled and not, on the backends of the run table:
    each optimizer step equals the float64 step of the K x batch batch; rows not kept untouched."""
    runs = _runs(world_size, tmp_path_factory)
    for tag, (folder, cases) in runs.items():
        if tag == "nonfinite":
            continue
        for case in cases:
            ranks = load_ranks(folder, case["name"], world_size)
            assert bool(ranks[0]["native"]) == (RUNS[world_size][tag][1:] == ("on", "composite")), tag
            assert str(ranks[0]["kernels"]) == RUNS[world_size][tag][2], tag
            check_accumulated(case, ranks, world_size)


def test_a_nonfinite_micro_batch_skips_the_whole_step(tmp_path_factory):
    """An inf input in the 2nd micro-batch of step 1: the step changes nothing (the first
    micro-batch's gradients are dropped with it); step 2 is an ordinary step. With dynamic loss
    scaling the same, the scale halved once; and scaled steps equal the reference's."""
    folder, cases = _runs(1, tmp_path_factory)["nonfinite"]
    for case in cases:
        ranks = load_ranks(folder, case["name"], 1)
        if "skipped_steps" in case:
            bad_micro = case["inject_inf"][1]
            assert ranks[0]["flags_1_0"].max() == (1.0 if bad_micro == 0 else 0.0)
            assert ranks[0]["flags_1_1"].max() == 1.0  # an inf stays in the buffers
        check_accumulated(case, ranks, 1)


def _program(paddle, k=2, sample_ratio=0.5, sample_label=True, **minimize_args):
    import paddle_pfc

    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [4, 8], "float32")
        x.stop_gradient = False
        y = paddle.static.data("y", [4], "int64")
        everything = paddle.static.data("all_y", [4 * max(k, 1)], "int64") if sample_label else None
        head = paddle_pfc.LargeScaleClassifier(x, y, 0, 1, 40, embedding_size=8, sample_ratio=sample_ratio,
                                               sample_label=everything)
        paddle_pfc.minimize(paddle.optimizer.Momentum(0.1, momentum=0.9), head.output_dict["loss"],
                            accumulate_steps=k, **minimize_args)
    return main, startup, head


def test_minimize_refuses_what_it_cannot_accumulate(static_mode):
    import paddle

    with pytest.raises(ValueError, match="build it with sample_label="):
        _program(paddle, sample_label=False)
    with pytest.raises(ValueError, match="accumulate_steps must be an int >= 1"):
        _program(paddle, k=0)
    _program(paddle, sample_ratio=1.0, sample_label=False)  # every center kept: nothing to share


def test_one_micro_batch_builds_the_program_it_always_did(static_mode):
    """accumulate_steps=1 adds nothing: the same operations as a program built without it."""
    import paddle

    import paddle_pfc

    def ops(**args):
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.utils.unique_name.guard(), paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [4, 8], "float32")
            x.stop_gradient = False
            head = paddle_pfc.LargeScaleClassifier(x, paddle.static.data("y", [4], "int64"), 0, 1, 40,
                                                   embedding_size=8, sample_ratio=0.5)
            paddle_pfc.minimize(paddle.optimizer.Momentum(0.1, momentum=0.9), head.output_dict["loss"], **args)
        assert paddle_pfc.accumulation_of(main) is None
        return [op.name() for op in main.global_block().ops], [op.name() for op in startup.global_block().ops]

    assert ops() == ops(accumulate_steps=1)


def test_a_label_missing_from_the_sampled_labels_stops_the_step(static_mode, capfd):
    """A micro-batch label that ``sample_label`` lacks could miss the kept set: the step stops, naming it."""
    import paddle

    import paddle_pfc

    main, startup, head = _program(paddle, sample_ratio=0.1)  # num_sample 4: the 8 positives alone are kept
    acc = paddle_pfc.accumulation_of(main)
    exe = paddle.static.Executor(paddle.CPUPlace())
    with paddle.static.scope_guard(paddle.static.Scope()):
        exe.run(startup)
        x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
        feed = {"x": x, "y": np.array([1, 2, 3, 4]), "all_y": np.array([1, 2, 3, 4, 5, 6, 7, 8]),
                acc.feed_name: np.array([0])}
        exe.run(main, feed=feed, fetch_list=[acc.loss])
        feed["y"] = np.array([1, 2, 3, 39])
        with pytest.raises(ValueError, match="AssertOp must be true"):
            exe.run(main, feed=feed, fetch_list=[acc.loss])
    assert "data: [39" in capfd.readouterr().out.replace(".000000", "")


def test_the_buffer_holds_the_most_centers_a_step_keeps():
    from paddle_pfc.head.spec import HeadSpec, accumulation_bytes, accumulation_rows

    spec = HeadSpec(num_classes=10_000, embedding_size=8, world_size=2, sample_ratio=0.1, batch_size=64)
    assert accumulation_rows(spec, 2) == 500              # num_sample: more than 2 x 64 x 2 labels
    assert accumulation_rows(spec, 8) == 8 * 64 * 2       # the step's labels can be more
    assert accumulation_bytes(spec, 1) == 0
    assert accumulation_bytes(spec, 8) == 1024 * 8 * 4
    full = HeadSpec(num_classes=100, embedding_size=8, sample_ratio=1.0, batch_size=4)
    assert accumulation_rows(full, 4) == 100              # every row kept
    from paddle_pfc.head.planner import plan

    assert plan(10_000, 8, 2, 0.1, 64, accumulate_steps=8).accumulation == 1024 * 8 * 4
    assert plan(10_000, 8, 2, 0.1, 64).accumulation == 0


def test_a_micro_step_keeping_another_set_stops_the_step(static_mode):
    """The micro-steps of one step not seeded alike draw other negatives: the second stops instead
    of adding gradients of other rows into the buffer."""
    import paddle

    import paddle_pfc

    main, startup, head = _program(paddle, sample_ratio=0.5)  # num_sample 20: 12 random negatives
    acc = paddle_pfc.accumulation_of(main)
    exe = paddle.static.Executor(paddle.CPUPlace())
    with paddle.static.scope_guard(paddle.static.Scope()):
        exe.run(startup)
        x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
        feed = {"x": x, "y": np.array([1, 2, 3, 4]), "all_y": np.array([1, 2, 3, 4, 5, 6, 7, 8])}
        for micro in (0, 1):  # seeded alike: one set
            paddle.seed(5)
            exe.run(main, feed={**feed, acc.feed_name: np.array([micro])}, fetch_list=[acc.loss])
        paddle.seed(5)
        exe.run(main, feed={**feed, acc.feed_name: np.array([0])}, fetch_list=[acc.loss])
        paddle.seed(6)
        with pytest.raises(ValueError, match="AssertOp must be true"):
            exe.run(main, feed={**feed, acc.feed_name: np.array([1])}, fetch_list=[acc.loss])
