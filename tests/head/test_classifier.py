"""LargeScaleClassifier + minimize on 1, 2 and 3 real ranks against the float64 numpy reference."""
from __future__ import annotations

import collections
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from launcher import REPO, launch
from reference import balanced_split, loss_and_grads, momentum_step
from workers.head_worker import case_data

WORKER = REPO / "tests" / "workers" / "head_worker.py"
ARCFACE, COSFACE, COMBINED = (1.0, 0.5, 0.0), (1.0, 0.0, 0.4), (0.9, 0.4, 0.15)


def make_cases(world_size: int) -> list[dict]:
    uneven = {1: 13, 2: 37, 3: 31}[world_size]
    base = dict(batch=4, dim=16, in_dim=12, steps=2, lr=0.2, momentum=0.9, weight_decay=5e-4,
                scale=16.0, optimizer="momentum")
    return [
        # chunk_rows: the kept centers in blocks of that many rows (the last block of a sampled
        # shard has a dynamic length), so the block-wise head and update are checked too.
        dict(base, name="arcface_full", num_classes=uneven, margins=ARCFACE, sample_ratio=1.0, seed=1,
             chunk_rows=4),
        dict(base, name="cosface_sampled", num_classes=uneven * 3, margins=COSFACE, sample_ratio=0.4,
             seed=2, label_rank1=False, chunk_rows=3),
        dict(base, name="combined_sampled", num_classes=uneven * 2 + 1, margins=COMBINED,
             sample_ratio=0.3, seed=3, scale=24.0),
        dict(base, name="sgd_sampled", num_classes=uneven * 2, margins=ARCFACE, sample_ratio=0.5,
             seed=4, optimizer="sgd", weight_decay=1e-3, batch=3, chunk_rows=2),
    ]


RUNS: dict[tuple[str, int], tuple[Path, list[dict]]] = {}
#: The head-worker runs test modules declare at import (:func:`declare`): tag -> (world sizes,
#: cases_for, native, kernels). The first run_world of a world size makes every declared run of
#: that size in the same job: one launch and one Paddle start-up per rank instead of one per run
#: (~6.5 s each on 2 cores).
DECLARED: dict[str, tuple] = {}


def declare(tag: str, world_sizes: tuple[int, ...], cases_for=None, native: bool = True,
            kernels: str = "composite") -> None:
    """Declare a run of :func:`run_world` (same arguments) for the given world sizes."""
    DECLARED[tag] = (tuple(world_sizes), cases_for, native, kernels)


def run_world(world_size: int, tmp_path_factory, tag: str = "head", cases_for=None,
              native: bool = True, kernels: str = "composite", real: bool = False) -> tuple[Path, list[dict]]:
    """Run the head worker once per (tag, world size) on ``cases_for(world_size)`` (default: this
    module's cases), on the road ``kernels`` (``PADDLE_PFC_KERNELS``: composite, or fused with the
    emulated kernels), with the native CPU kernels or Paddle's (``PADDLE_PFC_NATIVE``, composite
    only); return its output folder and the cases. ``real``: on a GPU, where the fused kernels are
    Paddle's (not emulated). The declared runs of this world size not made yet run in the same job."""
    if (tag, world_size) not in RUNS:
        runs = {tag: (cases_for, native, kernels, real)}
        for other, (sizes, other_cases, other_native, other_kernels) in DECLARED.items():
            # (not with a GPU run: the declared runs are the CPU ones)
            if not real and world_size in sizes and other not in runs and (other, world_size) not in RUNS:
                runs[other] = (other_cases, other_native, other_kernels, False)
        root = tmp_path_factory.mktemp(f"head_w{world_size}")
        specs = []
        for name, (make, run_native, run_kernels, _) in runs.items():
            (root / name).mkdir()
            specs.append(dict(out=str(root / name), cases=(make or make_cases)(world_size),
                              native="on" if run_native else "off", kernels=run_kernels))
        (root / "runs.json").write_text(json.dumps(specs))
        launch(WORKER, world_size, ["--runs", str(root / "runs.json")], root / "log")
        for (name, (_, run_native, run_kernels, run_real)), spec in zip(runs.items(), specs):
            for case in spec["cases"]:
                for r in load_ranks(Path(spec["out"]), case["name"], world_size):
                    assert str(r["kernels"]) == run_kernels
                    assert bool(r["emulated"]) == (run_kernels == "fused" and not run_real)
                    assert bool(r["native"]) == (run_native and run_kernels == "composite")
            RUNS[(name, world_size)] = (Path(spec["out"]), spec["cases"])
    return RUNS[(tag, world_size)]


def load_ranks(out: Path, name: str, world_size: int) -> list[dict]:
    return [dict(np.load(out / f"{name}.rank{r}.npz")) for r in range(world_size)]


WORLD_SIZES = [1, pytest.param(2, marks=pytest.mark.multirank), pytest.param(3, marks=pytest.mark.multirank)]


@pytest.mark.parametrize("world_size", WORLD_SIZES)
def test_matches_reference(world_size, tmp_path_factory):
    out, cases = run_world(world_size, tmp_path_factory)
    for case in cases:
        ranks = load_ranks(out, case["name"], world_size)
        check_case(case, ranks, world_size)


@pytest.mark.parametrize("world_size", WORLD_SIZES)
def test_fused_emulated_matches_reference(world_size, tmp_path_factory):
    """The same cases on the fused road (the GPU program's Python path) with the emulated
    ``class_center_sample`` / ``margin_cross_entropy`` (``PADDLE_PFC_KERNELS=fused`` on CPU), plus
    cases that only the fused glue can get wrong (ranks with different ``num_sample``)."""
    out, cases = run_world(world_size, tmp_path_factory, tag="fused", cases_for=fused_cases, kernels="fused")
    for case in cases:
        check_case(case, load_ranks(out, case["name"], world_size), world_size)


def fused_cases(world_size: int) -> list[dict]:
    """This module's cases plus uneven shards whose ranks sample different numbers of centers, and
    a crowded batch (more positives than ``num_sample`` on some rank)."""
    base = make_cases(world_size)[0]
    extra = []
    if world_size > 1:
        # 2 ranks: 19 / 18 classes, num_sample 11 / 10; 3 ranks: 13 / 12 / 12, num_sample 7 / 6 / 6.
        classes, ratio = {2: (37, 0.58), 3: (37, 0.55)}[world_size]
        extra.append(dict(base, name="uneven_num_sample", num_classes=classes, margins=COMBINED,
                          sample_ratio=ratio, seed=5, chunk_rows=None))
    extra.append(dict(base, name="crowded", num_classes=7 * world_size + 1, margins=ARCFACE, sample_ratio=0.2,
                      seed=6, batch=6, chunk_rows=None))
    return make_cases(world_size) + extra


declare("head", (1, 2, 3))
declare("fused", (1, 2, 3), fused_cases, kernels="fused")
declare("paddle_kernels", (1, 2), native=False)


@pytest.mark.parametrize("world_size", [1, pytest.param(2, marks=pytest.mark.multirank)])
def test_paddle_kernels_match_reference(world_size, tmp_path_factory):
    """The same cases on Paddle's own kernels (``PADDLE_PFC_NATIVE=off``: the path taken where
    the native kernels cannot be built)."""
    out, cases = run_world(world_size, tmp_path_factory, tag="paddle_kernels", native=False)
    for case in cases:
        check_case(case, load_ranks(out, case["name"], world_size), world_size)


def check_case(case: dict, ranks: list[dict], world_size: int) -> list[float]:
    """Every step against the float64 reference, from the state the ranks held before it; returns
    the loss's relative error per checked step.

    Tolerances default to float32's. A case that computes or stores in bfloat16 states its own
    (``tolerance``): ``loss`` (relative), ``rtol`` / ``atol`` on the values, and ``step``: a fraction
    of the step's largest change (of the parameter, or of the momentum's new gradient term) that is
    added to ``atol``, because rounded operands perturb the gradient, not the value it is added to.
    ``skipped_steps``: steps whose gradients are non-finite (loss scaling): nothing may change in
    them, bit for bit, on any rank.
    """
    name = case["name"]
    inputs, labels, _, backbone0 = case_data(case, world_size)
    tol = case.get("tolerance", {})
    loss_rtol, rtol, atol = tol.get("loss", 2e-5), tol.get("rtol", 1e-4), tol.get("atol", 2e-5)
    step_tol = tol.get("step", 0.0)

    def assert_step(got, expected, before, what):
        """``got`` against ``expected`` = ``before`` + the reference's change."""
        change = np.abs(expected - before).max()
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol + step_tol * change,
                                   err_msg=f"{name} step {step} {what} (largest change {change:.3g})")
    split = balanced_split(case["num_classes"], world_size)
    assert [(int(r["class_start"]), int(r["num_local"])) for r in ranks] == split, name
    # Start-up: the data-parallel parameter is rank 0's on every rank.
    for r in ranks[1:]:
        np.testing.assert_array_equal(r["backbone_after_startup"], ranks[0]["backbone_after_startup"])

    centers0 = np.concatenate([r["shard_initial"] for r in ranks])  # as stored (bf16-rounded or not)
    centers, backbone = centers0.astype(np.float64), backbone0.astype(np.float64)
    velocity_c = np.zeros_like(centers)
    velocity_b = np.zeros_like(backbone)
    m1, m2, m3 = case["margins"]
    momentum = case["momentum"] if case["optimizer"] == "momentum" else 0.0
    loss_errors = []
    previous_scale = case.get("loss_scaling", {}).get("init_loss_scaling") \
        if isinstance(case.get("loss_scaling"), dict) else 2.0**16
    for step in range(case["steps"]):
        got_c = np.concatenate([r[f"shard_{step}"] for r in ranks])
        previous = np.concatenate([r[f"shard_{step - 1}"] for r in ranks]) if step else centers0
        if step in case.get("skipped_steps", ()):
            check_skipped(case, ranks, step, previous, centers0, backbone0, previous_scale)
            previous_scale /= 2
            continue
        # Every rank reports the same loss, bit for bit.
        losses = [float(r[f"loss_{step}"]) for r in ranks]
        assert len(set(losses)) == 1, (name, step, losses)
        if case.get("loss_scaling"):
            for r in ranks:
                assert float(r[f"scale_{step}"][0]) == previous_scale, (name, step, "loss scale")
        kept = kept_classes(case, ranks, split, labels[step], step)
        features = inputs[step].astype(np.float64) @ backbone
        loss, grad_f, grad_c = loss_and_grads(features, centers, labels[step], kept, m1, m2, m3, case["scale"])
        np.testing.assert_allclose(losses[0], loss, rtol=loss_rtol, err_msg=f"{name} step {step} loss")
        loss_errors.append(abs(losses[0] / loss - 1))
        grad_b = inputs[step].astype(np.float64).T @ grad_f
        new_c = centers.copy()
        new_vc = velocity_c.copy()
        new_c[kept], new_vc[kept] = momentum_step(centers[kept], grad_c[kept], velocity_c[kept], case["lr"],
                                                  momentum, case["weight_decay"])
        new_b, new_vb = momentum_step(backbone, grad_b, velocity_b, case["lr"], momentum, case["weight_decay"])
        assert_step(got_c, new_c, centers, "centers")
        for r in ranks:
            assert_step(r[f"backbone_{step}"], new_b, backbone, "backbone")
        # Rows that were not kept, and their momentum, are bit-identical to before the step.
        untouched = np.setdiff1d(np.arange(case["num_classes"]), kept)
        np.testing.assert_array_equal(got_c[untouched], previous[untouched])
        if momentum:
            got_v = np.concatenate([r[f"velocity_{step}"] for r in ranks])
            assert_step(got_v[kept], new_vc[kept], momentum * velocity_c[kept], "center momentum")
            for r in ranks:
                assert_step(r[f"backbone_velocity_{step}"], new_vb, momentum * velocity_b, "backbone momentum")
            prev_v = np.concatenate([r[f"velocity_{step - 1}"] for r in ranks]) if step else np.zeros_like(got_v)
            np.testing.assert_array_equal(got_v[untouched], prev_v[untouched])
        # Continue from what the ranks hold, so each step is checked on its own.
        centers, backbone = got_c.astype(np.float64), ranks[0][f"backbone_{step}"].astype(np.float64)
        if momentum:
            velocity_c = np.concatenate([r[f"velocity_{step}"] for r in ranks]).astype(np.float64)
            velocity_b = ranks[0][f"backbone_velocity_{step}"].astype(np.float64)
    return loss_errors


def check_skipped(case, ranks, step, previous, centers0, backbone0, previous_scale) -> None:
    """A step with a non-finite gradient: no parameter or optimizer state moved, scale halved."""
    name = case["name"]
    assert all(not np.isfinite(float(r[f"loss_{step}"])) for r in ranks), (name, step, "loss is finite")
    np.testing.assert_array_equal(np.concatenate([r[f"shard_{step}"] for r in ranks]), previous)
    for r in ranks:
        before_b = r[f"backbone_{step - 1}"] if step else backbone0
        np.testing.assert_array_equal(r[f"backbone_{step}"], before_b, err_msg=f"{name} backbone moved")
        before_vb = r[f"backbone_velocity_{step - 1}"] if step else np.zeros_like(before_b)
        np.testing.assert_array_equal(r[f"backbone_velocity_{step}"], before_vb)
        if f"velocity_{step}" in r:
            before_v = r[f"velocity_{step - 1}"] if step else np.zeros_like(r[f"velocity_{step}"])
            np.testing.assert_array_equal(r[f"velocity_{step}"], before_v, err_msg=f"{name} momentum moved")
        if case.get("loss_scaling"):
            assert float(r[f"scale_{step}"][0]) == previous_scale / 2, (name, step, "scale not halved")


def kept_classes(case, ranks, split, step_labels, step) -> np.ndarray:
    """Union of the ranks' kept centers (global ids), after checking the sampling contract."""
    if case["sample_ratio"] >= 1.0:
        return np.arange(case["num_classes"])
    kept = []
    for r, (start, count) in zip(ranks, split):
        local = r[f"sampled_{step}"]
        positives = np.unique(step_labels[(step_labels >= start) & (step_labels < start + count)]) - start
        num_sample = int(r["num_sample"])
        assert num_sample == max(1, int(case["sample_ratio"] * count))
        if str(r.get("kernels", "composite")) == "fused":  # the kernel's order: positives first, ascending
            np.testing.assert_array_equal(local[:len(positives)], positives)
            assert len(np.unique(local)) == len(local), "kept centers are unique"
        else:
            assert np.all(np.diff(local) > 0), "kept centers are sorted and unique"
        assert local.min() >= 0 and local.max() < count
        assert np.isin(positives, local).all(), "every positive center is kept"
        assert len(local) == max(num_sample, len(positives))
        kept.append(local + start)
    return np.sort(np.concatenate(kept))


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
    from paddle_pfc.head.margin import Margin

    with pytest.raises(ValueError, match=name):
        Margin(*margins)


def test_margin_holds_floats():
    from paddle_pfc.head.margin import Margin

    margin = Margin(1, 0, 0, 64)
    assert (margin.m1, margin.m2, margin.m3, margin.s) == (1.0, 0.0, 0.0, 64.0)
    assert all(type(v) is float for v in (margin.m1, margin.m2, margin.m3, margin.s))
    assert not margin.angular and Margin(0.9, 0.0, 0.0, 64.0).angular


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
