"""Bad arguments fail at build time with a ValueError naming the argument; a bad label at run time
fails on every rank with an error naming the label."""
from __future__ import annotations

import json
import math

import numpy as np
import paddle
import pytest

import paddle_pfc
from launcher import REPO, launch, worker_logs


@pytest.fixture(autouse=True)
def static_for_every_test(static_mode):
    yield


def build(**overrides):
    args = dict(rank=0, world_size=1, num_classes=10, sample_ratio=1.0, embedding_size=8)
    feature_shape = overrides.pop("feature_shape", [4, 8])
    feature_dtype = overrides.pop("feature_dtype", "float32")
    label_dtype = overrides.pop("label_dtype", "int64")
    label_shape = overrides.pop("label_shape", [4])
    args.update(overrides)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        feature = paddle.static.data("feature", feature_shape, feature_dtype)
        label = paddle.static.data("label", label_shape, label_dtype)
        return paddle_pfc.LargeScaleClassifier(feature, label, **args), main, startup


@pytest.mark.parametrize("overrides, argument", [
    (dict(num_classes=2, world_size=3, rank=0), "num_classes"),
    (dict(sample_ratio=0.0), "sample_ratio"),
    (dict(sample_ratio=1.5), "sample_ratio"),
    (dict(sample_ratio=math.nan), "sample_ratio"),
    (dict(feature_shape=[4, 6]), "embedding_size"),
    (dict(label_dtype="float32"), "label"),
    (dict(label_shape=[4, 2]), "label"),
    (dict(margin1=math.inf), "margin1"),
    (dict(margin2=math.nan), "margin2"),
    (dict(margin3=-math.inf), "margin3"),
    (dict(scale=0.0), "scale"),
    (dict(rank=2, world_size=2), "rank"),
    (dict(world_size=0), "world_size"),
    (dict(embedding_size=0, feature_shape=[4, 0]), "embedding_size"),
    (dict(feature_dtype="float64"), "feature"),
])
def test_bad_build_arguments(overrides, argument):
    with pytest.raises(ValueError, match=argument):
        build(**overrides)


def test_minimize_rejects_unsupported_optimizer_and_empty_program():
    head, main, startup = build()
    with paddle.static.program_guard(main, startup):
        with pytest.raises(ValueError, match="optimizer"):
            paddle_pfc.minimize(paddle.optimizer.Adam(0.1), head.output_dict["loss"])
    other_main, other_startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(other_main, other_startup):
        x = paddle.static.data("x", [2, 3], "float32")
        with pytest.raises(ValueError, match="no LargeScaleClassifier"):
            paddle_pfc.minimize(paddle.optimizer.SGD(0.1), paddle.mean(x))


def test_minimize_refuses_a_loss_of_another_program():
    """A loss built in program A, minimize called under B's guard (B with a head of its own): named,
    instead of "loss does not depend on the class centers" of B's head and an abort at exit."""
    head_a, main_a, startup_a = build()
    head_b, main_b, startup_b = build()
    with paddle.static.program_guard(main_b, startup_b):
        with pytest.raises(ValueError, match="loss was built in another program than the current main program"):
            paddle_pfc.minimize(paddle.optimizer.SGD(0.1), head_a.output_dict["loss"])
        paddle_pfc.minimize(paddle.optimizer.SGD(0.1), head_b.output_dict["loss"])  # B is still usable


def test_minimize_refuses_centers_that_cannot_fit_in_memory():
    """10^11 classes x 8 float32 on one rank: 2.9 TiB of centers, 5.8 TiB with momentum: refused when the
    program is built (before, Linux let it start and its OOM killer ended it with no message)."""
    from paddle_pfc.head.host_memory import HeadMemoryError

    head, main, startup = build(num_classes=10**11)
    with paddle.static.program_guard(main, startup):
        with pytest.raises(HeadMemoryError, match=r"the class centers and their momentum of dist@fc@rank@00000 "
                                                  r"take 5960\.46 GiB a rank; this rank needs 5960\.46 GiB"):
            paddle_pfc.minimize(paddle.optimizer.Momentum(0.1), head.output_dict["loss"])
        with pytest.raises(HeadMemoryError, match=r"the class centers of dist@fc@rank@00000 take 2980\.23 GiB"):
            paddle_pfc.minimize(paddle.optimizer.SGD(0.1), head.output_dict["loss"])


def test_minimize_once_per_program_without_clip_by_value_or_cpu_rescale_grad():
    head, main, startup = build()
    with paddle.static.program_guard(main, startup):
        loss = head.output_dict["loss"]
        with pytest.raises(ValueError, match="ClipGradByValue.*use paddle.nn.ClipGradByGlobalNorm"):
            paddle_pfc.minimize(paddle.optimizer.SGD(0.1, grad_clip=paddle.nn.ClipGradByValue(1.0)), loss)
        with pytest.raises(ValueError, match="rescale_grad=0.5: Paddle 3.3's CPU momentum kernel ignores it"):
            paddle_pfc.minimize(paddle.optimizer.Momentum(0.1, rescale_grad=0.5), loss)
        paddle_pfc.minimize(paddle.optimizer.SGD(0.1), loss)
        with pytest.raises(ValueError, match="minimize: already called for this program"):
            paddle_pfc.minimize(paddle.optimizer.SGD(0.1), loss)


def test_paddles_own_minimize_warns_that_the_centers_never_learn():
    head, main, startup = build()
    with paddle.static.program_guard(main, startup):
        paddle.optimizer.SGD(0.1).minimize(head.output_dict["loss"] + 0.0 * paddle.mean(head.input_dict["feature"]))
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    feed = {"feature": np.ones((4, 8), np.float32), "label": np.array([1, 2, 3, 4])}
    with pytest.warns(UserWarning, match=r"the class centers of dist@fc@rank@00000 are never updated .*use "
                                         r"paddle_pfc.minimize"):
        paddle_pfc.run(exe, main, feed=feed, fetch_list=[head.output_dict["loss"]])
    import warnings
    with warnings.catch_warnings():  # once per program
        warnings.simplefilter("error")
        paddle_pfc.run(exe, main, feed=feed, fetch_list=[head.output_dict["loss"]])


def test_two_heads_of_one_name_are_refused():
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        feature = paddle.static.data("feature", [4, 8], "float32")
        label = paddle.static.data("label", [4], "int64")
        paddle_pfc.LargeScaleClassifier(feature, label, 0, 1, 10, embedding_size=8)
        with pytest.raises(ValueError, match="already holds a LargeScaleClassifier named 'dist@fc@rank@00000': "
                                             "give each head its own name="):
            paddle_pfc.LargeScaleClassifier(feature, label, 0, 1, 10, embedding_size=8)
        second = paddle_pfc.LargeScaleClassifier(feature, label, 0, 1, 10, embedding_size=8, name="second")
    assert second.weight.name == "second"


def test_numpy_numbers_and_paddle_dtypes_are_taken():
    """``num_classes = labels.max() + 1`` is an np.int64; margins read from an array are numpy floats."""
    head, _, _ = build(num_classes=np.int64(10), embedding_size=np.int32(8), sample_ratio=np.float32(0.5),
                       margin2=np.float32(0.5), scale=np.float64(32.0), dtype=paddle.float32,
                       center_dtype=paddle.float32)
    assert (head.num_classes, head.num_sample, head.dtype, head.center_dtype) == (10, 5, "float32", "float32")
    assert type(head.num_classes) is int and head.margin.m2 == 0.5 and head.margin.s == 32.0


def test_class_split_is_balanced_and_never_empty():
    for num_classes, world_size in [(9, 4), (37, 2), (31, 3), (5, 5), (1_000_003, 8)]:
        spans = [paddle_pfc.class_split(num_classes, world_size, r) for r in range(world_size)]
        counts = [n for _, n in spans]
        assert sum(counts) == num_classes and min(counts) >= 1 and max(counts) - min(counts) <= 1
        assert [s for s, _ in spans] == list(np.cumsum([0] + counts[:-1]))
    assert [paddle_pfc.class_split(9, 4, r) for r in range(4)] == [(0, 3), (3, 2), (5, 2), (7, 2)]


def test_out_of_range_label_single_rank():
    head, main, startup = build()
    with paddle.static.program_guard(main, startup):
        paddle_pfc.minimize(paddle.optimizer.SGD(0.1), head.output_dict["loss"])
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    feature = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    weight_before = np.array(paddle.static.global_scope().find_var(head.weight.name).get_tensor())
    for bad in (10, -1):
        with pytest.raises(paddle_pfc.LabelRangeError, match=rf"'label' outside \[0, 10\).*row 2: {bad}"):
            paddle_pfc.run(exe, main, feed={"feature": feature, "label": np.array([1, 2, bad, 3])},
                           fetch_list=[head.output_dict["loss"]])
    # Nothing was updated by the failed steps.
    np.testing.assert_array_equal(
        np.array(paddle.static.global_scope().find_var(head.weight.name).get_tensor()), weight_before)


def test_out_of_range_computed_label_single_rank():
    """A label computed from the feed (here squeezed from [B, 1]) cannot be named by value, and on one
    rank no other rank fed it."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        feature = paddle.static.data("feature", [4, 8], "float32")
        label = paddle.static.data("label", [4, 1], "int64")
        head = paddle_pfc.LargeScaleClassifier(feature, paddle.squeeze(label, 1), 0, 1, 10, embedding_size=8)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    with pytest.raises(paddle_pfc.LabelRangeError, match=r"^a label \(computed in the program, not fed directly, "
                                                         r"so not named here\) is outside \[0, 10\)"):
        paddle_pfc.run(exe, main, feed={"feature": np.zeros((4, 8), np.float32),
                                        "label": np.array([[1], [2], [42], [3]])},
                       fetch_list=[head.output_dict["loss"]])


def test_label_batch_other_than_the_feature_batch_is_named_before_any_collective():
    """With dynamic batch sizes, 6 labels for 8 images used to end in Paddle's broadcast error deep in
    the head (after the all-gathers, where ranks of other sizes disagree); now the head checks its
    rank's batches first and paddle_pfc.run names the feeds. Matching batches still train."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        images = paddle.static.data("images", [-1, 6], "float32")
        labels = paddle.static.data("labels", [-1], "int64")
        feature = paddle.nn.Linear(6, 8)(images)  # a backbone: the feature's batch is the images'
        head = paddle_pfc.LargeScaleClassifier(feature, labels, 0, 1, 10, embedding_size=8)
        paddle_pfc.minimize(paddle.optimizer.SGD(0.1), head.output_dict["loss"])
    assert head.feature_feed_names == ["images"] and head.label_feed_name == "labels"
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    images = np.random.default_rng(0).standard_normal((8, 6)).astype(np.float32)
    weight_before = np.array(paddle.static.global_scope().find_var(head.weight.name).get_tensor())
    with pytest.raises(paddle_pfc.BatchSizeError, match=r"6 labels \('labels'\) for 8 rows of 'images', which its "
                                                        r"feature is computed from: feed one label per sample"):
        paddle_pfc.run(exe, main, feed={"images": images, "labels": np.arange(6)},
                       fetch_list=[head.output_dict["loss"]])
    np.testing.assert_array_equal(
        np.array(paddle.static.global_scope().find_var(head.weight.name).get_tensor()), weight_before)
    loss, = paddle_pfc.run(exe, main, feed={"images": images, "labels": np.arange(8)},
                           fetch_list=[head.output_dict["loss"]])
    assert np.isfinite(loss)


@pytest.fixture
def multi_thread_executor():
    """Paddle's default executor (ops on a thread pool, in any order their inputs allow), whatever
    an earlier test or paddle_pfc.configure_process chose; restored after."""
    flag = "FLAGS_new_executor_serial_run"
    before = paddle.get_flags([flag])[flag]
    paddle.set_flags({flag: False})
    yield
    paddle.set_flags({flag: before})


def test_checks_run_before_what_they_guard_on_the_multi_thread_executor(multi_thread_executor):
    """A bare Assert has no output, so Paddle's multi-thread executor ran it alongside the ops it
    guards: 6 labels for 8 images ended in Paddle's broadcast error inside the loss in about 3 of 10
    runs. The head now reads its labels through the checks; every run names the problem, and no
    failed step moves the centers or the backbone."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        images = paddle.static.data("images", [-1, 6], "float32")
        labels = paddle.static.data("labels", [-1], "int64")
        linear = paddle.nn.Linear(6, 8)
        head = paddle_pfc.LargeScaleClassifier(linear(images), labels, 0, 1, 10, embedding_size=8)
        paddle_pfc.minimize(paddle.optimizer.Momentum(0.1, momentum=0.9), head.output_dict["loss"])
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    scope = paddle.static.global_scope()

    def parameters():
        return [np.array(scope.find_var(name).get_tensor()) for name in (head.weight.name, linear.weight.name)]

    images = np.random.default_rng(1).standard_normal((8, 6)).astype(np.float32)
    before = parameters()
    for _ in range(20):
        with pytest.raises(paddle_pfc.BatchSizeError, match=r"6 labels \('labels'\) for 8 rows of 'images'"):
            paddle_pfc.run(exe, main, feed={"images": images, "labels": np.arange(6)},
                           fetch_list=[head.output_dict["loss"]])
        with pytest.raises(paddle_pfc.LabelRangeError, match=r"label 'labels' outside \[0, 10\) .*row 5: 10"):
            paddle_pfc.run(exe, main, feed={"images": images, "labels": np.arange(8) + 5},
                           fetch_list=[head.output_dict["loss"]])
    for after, expected in zip(parameters(), before):
        np.testing.assert_array_equal(after, expected)
    loss, = paddle_pfc.run(exe, main, feed={"images": images, "labels": np.arange(8)},
                           fetch_list=[head.output_dict["loss"]])
    assert np.isfinite(loss) and not np.array_equal(parameters()[0], before[0])


@pytest.mark.multirank
def test_a_positive_dropped_by_one_ranks_fused_kernel_stops_every_rank(tmp_path):
    """The fused backend's check that every positive center was kept is made on the table every rank
    gathers: a faulty kernel on rank 1 alone stops both ranks at the same check (none is left
    waiting in a collective), and each names the kernel, not a label."""
    batch = [[4, [0, 3, 5, 9]], [4, [1, 2, 6, 8]]]
    launch(REPO / "tests" / "workers" / "batch_worker.py", 2,
           ["--out", str(tmp_path), "--cases", json.dumps([batch]), "--drop-positive-on", "1"], tmp_path / "log",
           timeout=240)
    for r in range(2):
        outcome, = json.loads((tmp_path / f"rank{r}.json").read_text())
        assert outcome["error"] == "RuntimeError" and "every rank's labels lie in [0, 10), but a rank's fused " \
            "class_center_sample kernel dropped one of its positive centers" in outcome["message"], outcome
        assert outcome["unchanged"]

@pytest.mark.multirank
def test_out_of_range_label_stops_every_rank(tmp_path):
    case = dict(name="bad_label", batch=4, dim=8, in_dim=6, steps=1, lr=0.1, momentum=0.9, weight_decay=0.0,
                scale=16.0, optimizer="momentum", num_classes=9, margins=[1.0, 0.5, 0.0], sample_ratio=1.0,
                seed=5, label_override=[0, 5, 999])  # global row 5 = rank 1's row 1
    (tmp_path / "cases.json").write_text(json.dumps([case]))
    proc = launch(REPO / "tests" / "workers" / "head_worker.py", 2,
                  ["--cases", str(tmp_path / "cases.json"), "--out", str(tmp_path)], tmp_path / "log",
                  timeout=180, check=False)
    assert proc.returncode != 0, worker_logs(tmp_path / "log")
    errors = {r: (tmp_path / f"bad_label.rank{r}.error").read_text() for r in range(2)}
    for r in range(2):  # every rank names the rank that fed the label (paddle_pfc.run gathers the feeds)
        assert errors[r].startswith("LabelRangeError") and "on rank 1: row 1: 999" in errors[r], errors


@pytest.mark.multirank
@pytest.mark.parametrize("world", [2, 3])
def test_bad_batches_and_labels_on_several_ranks_stop_every_rank_naming_the_rank(tmp_path, world):
    """Dynamic batch sizes on several ranks, Paddle's multi-threaded executor: ranks of different
    batch sizes used to abort in gloo ("op.preamble.length <= op.nbytes"); a rank with fewer labels
    than images, or an out-of-range label, stopped every rank with an error that could not say which
    rank. Now every rank raises the same named error, no parameter moves, and the next good step
    trains."""
    last = world - 1
    good = [[4, [0, 3, 5, 9]] for _ in range(world)]
    uneven = [[4, [0, 3, 5, 9]] for _ in range(last)] + [[2, [1, 2]]]
    few_labels = [[4, [0, 3, 5, 9]] for _ in range(last)] + [[4, [1, 2, 7]]]
    bad_label = [[4, [0, 3, 5, 9]] for _ in range(last)] + [[4, [1, 2, 10, -1]]]
    launch(REPO / "tests" / "workers" / "batch_worker.py", world,
           ["--out", str(tmp_path), "--cases", json.dumps([uneven, few_labels, bad_label, good])], tmp_path / "log",
           timeout=240)
    for r in range(world):
        uneven_out, few_out, label_out, good_out = json.loads((tmp_path / f"rank{r}.json").read_text())
        sizes = ", ".join([f"rank {k}: 4" for k in range(last)] + [f"rank {last}: 2"])
        assert uneven_out["error"] == "BatchSizeError" and f"different sizes ({sizes} samples)" in uneven_out["message"]
        assert few_out["error"] == "BatchSizeError" and (
            f"rank {last} fed 3 labels ('labels') for 4 rows of 'images'" in few_out["message"]), few_out
        assert label_out["error"] == "LabelRangeError" and (
            f"outside [0, 10) for dist@fc@rank@{r:05d} on rank {last}: row 2: 10 and 1 more" in label_out["message"])
        assert uneven_out["unchanged"] and few_out["unchanged"] and label_out["unchanged"]
        assert np.isfinite(good_out["loss"]) and not good_out["unchanged"]
