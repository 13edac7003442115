"""LargeScaleClassifier + minimize on 1, 2 and 3 real ranks against the float64 numpy reference."""
from __future__ import annotations

import collections
import itertools

import numpy as np
import pytest

from helpers.head_runs import check_case, fused_cases, load_ranks, run_world

WORLD_SIZES = [1, pytest.param(2, marks=pytest.mark.multirank), pytest.param(3, marks=pytest.mark.multirank)]


@pytest.mark.parametrize("world_size", WORLD_SIZES)
def test_matches_reference(world_size, tmp_path_factory):
    out, cases = run_world(world_size, tmp_path_factory)
    for case in cases:
        ranks = load_ranks(out, case["name"], world_size)
        check_case(case, ranks, world_size)


@pytest.mark.parametrize("world_size", WORLD_SIZES)
def test_fused_emulated_matches_reference(world_size, tmp_path_factory):
    """The same cases on the fused backend (the GPU program's Python path) with the emulated
    ``class_center_sample`` / ``margin_cross_entropy`` (``PADDLE_PFC_KERNELS=fused`` on CPU), plus
    cases that only the fused glue can get wrong (ranks with different ``num_sample``)."""
    out, cases = run_world(world_size, tmp_path_factory, tag="fused", cases_for=fused_cases, kernels="fused")
    for case in cases:
        check_case(case, load_ranks(out, case["name"], world_size), world_size)


@pytest.mark.parametrize("world_size", [1, pytest.param(2, marks=pytest.mark.multirank)])
def test_paddle_kernels_match_reference(world_size, tmp_path_factory):
    """The same cases on Paddle's own kernels (``PADDLE_PFC_NATIVE=off``: the path taken where
    the native kernels cannot be built)."""
    out, cases = run_world(world_size, tmp_path_factory, tag="paddle_kernels", native=False)
    for case in cases:
        check_case(case, load_ranks(out, case["name"], world_size), world_size)


def _tiny_program(heads: int = 1, minimize: bool = False):
    import paddle

    import paddle_pfc

    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        x = paddle.static.data("x", [4, 8], "float32")
        x.stop_gradient = False
        y = paddle.static.data("y", [4], "int64")
        built = [paddle_pfc.LargeScaleClassifier(x, y, 0, 1, 20, embedding_size=8, name=f"centers{k}")
                 for k in range(heads)]
        if minimize:
            loss = built[0].output_dict["loss"]
            for head in built[1:]:
                loss = loss + head.output_dict["loss"]
            paddle_pfc.minimize(paddle.optimizer.SGD(0.1), loss, startup_program=startup)
    return main, built


def test_registry_records_heads_and_flags_per_program_without_keeping_it(static_mode):
    import gc
    import weakref

    from paddle_pfc.head import registry

    main, heads = _tiny_program(heads=2, minimize=True)
    assert registry.classifiers_of(main) == heads  # build order
    flags = registry.nonfinite_flags(main)
    assert flags is not None and list(flags.shape) == [len(registry.NONFINITE_PARTS)]
    assert not hasattr(main, "_paddle_pfc_classifiers") and not hasattr(main, "_paddle_pfc_nonfinite")
    other, _ = _tiny_program()
    assert len(registry.classifiers_of(other)) == 1 and registry.nonfinite_flags(other) is None
    import paddle

    assert registry.classifiers_of(paddle.static.Program()) == []
    program = weakref.ref(main)
    del main, heads, flags
    gc.collect()
    assert program() is None  # the registry holds no program alive (nor its heads)


@pytest.mark.parametrize("margins, name", [((float("inf"), 0.5, 0.0, 64.0), "margin1 must be a finite"),
                                           ((1.0, True, 0.0, 64.0), "margin2 must be a finite"),
                                           ((1.0, 0.5, "0", 64.0), "margin3 must be a finite"),
                                           ((0.0, 0.5, 0.0, 64.0), "margin1 must be > 0"),
                                           ((1.0, 0.5, 0.0, -1.0), "scale must be > 0")])
def test_margin_names_a_bad_value(margins, name):
    from paddle_pfc.head.margin import CombinedMargin

    with pytest.raises(ValueError, match=name):
        CombinedMargin(*margins)


def test_margin_holds_floats():
    from paddle_pfc.head.margin import CombinedMargin

    margin = CombinedMargin(1, 0, 0, 64)
    assert (margin.m1, margin.m2, margin.m3, margin.s) == (1.0, 0.0, 0.0, 64.0)
    assert all(type(v) is float for v in (margin.m1, margin.m2, margin.m3, margin.s))
    assert not margin.angular and CombinedMargin(0.9, 0.0, 0.0, 64.0).angular


def _sampling_program(num_local: int, num_sample: int, batch: int, native: bool = False):
    import paddle

    from paddle_pfc.head.sampling import sample_shard_composite
    from paddle_pfc.kernels.blockwise import NativeBlockOps, PaddleBlockOps

    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        label = paddle.static.data("label", [batch], "int64")
        sample = sample_shard_composite(label, num_local, num_sample, NativeBlockOps() if native else PaddleBlockOps())
    return main, [sample.sampled_index, sample.local_target]


@pytest.mark.parametrize("native", [False, True], ids=["paddle_ops", "native"])
def test_cpu_sampling_keeps_positives_and_draws_negatives_uniformly(native, static_mode):
    """sample_shard_composite's contract (plain ops, or the native kernel), draw after draw: the kept
    centers sorted and unique, every positive among them, exactly num_sample of them (every
    positive when they are more), each label's column right; each negative kept as often as
    uniform sampling keeps it (7 of 27 here), and on a small shard each subset of negatives drawn
    as often as any other, to within five binomial standard deviations (a sampler that favoured
    low or high indices, any fixed subset, or evenly spaced negatives fails)."""
    import paddle

    num_local, num_sample, draws = 30, 10, 2000
    labels = np.array([4, 17, -1, 29, 4, -1], np.int64)          # 3 positives, 2 labels of other shards
    positives = np.array([4, 17, 29])
    negatives = np.setdiff1d(np.arange(num_local), positives)
    main, fetch = _sampling_program(num_local, num_sample, len(labels), native)
    exe = paddle.static.Executor(paddle.CPUPlace())
    paddle.seed(7)
    counts = np.zeros(num_local)
    for _ in range(draws):
        kept, target = exe.run(main, feed={"label": labels}, fetch_list=fetch)
        assert len(kept) == num_sample and np.all(np.diff(kept) > 0) and kept.min() >= 0 and kept.max() < num_local
        assert np.isin(positives, kept).all()
        np.testing.assert_array_equal(target, np.where(labels >= 0, np.searchsorted(kept, labels), -1))
        counts[kept] += 1
    p = (num_sample - len(positives)) / len(negatives)
    expected, sd = draws * p, np.sqrt(draws * p * (1 - p))
    assert np.all(np.abs(counts[negatives] - expected) < 5 * sd), (counts[negatives], expected)
    # a shard of 6 with positive 2 and 3 kept: each of the 10 pairs of negatives equally often
    main, fetch = _sampling_program(6, 3, 2, native)
    subsets = collections.Counter()
    for _ in range(3000):
        kept, _ = exe.run(main, feed={"label": np.array([2, -1], np.int64)}, fetch_list=fetch)
        assert 2 in kept
        subsets[tuple(int(c) for c in kept if c != 2)] += 1
    assert sorted(subsets) == sorted(itertools.combinations([0, 1, 3, 4, 5], 2))
    sd = np.sqrt(3000 * 0.1 * 0.9)
    assert all(abs(n - 300) < 5 * sd for n in subsets.values()), subsets
    # more positives than num_sample: all of them, and no negative
    crowded = np.arange(0, 24, 2, dtype=np.int64)                 # 12 positives, num_sample 10
    main, fetch = _sampling_program(num_local, num_sample, len(crowded), native)
    for _ in range(3):
        kept, target = exe.run(main, feed={"label": crowded}, fetch_list=fetch)
        np.testing.assert_array_equal(kept, crowded)
        np.testing.assert_array_equal(target, np.arange(12))


def test_cpu_sampling_names_a_shard_too_large_for_its_keys(static_mode):
    with pytest.raises(ValueError, match="fewer than 2\\*\\*31 classes"):
        _sampling_program(2**31, 10, 4)
