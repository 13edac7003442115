"""The head worker's runs and their checks, shared by the head's, the engine's and the GPU tests:
the cases (:func:`classifier_cases`, :func:`fused_cases`, :func:`mixed_cases`, :func:`nonfinite_cases`,
...), :func:`run_world` (one job per world size for every run listed in :data:`HEAD_RUNS`), and
:func:`check_case` (every step against the float64 numpy reference)."""
from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from launcher import REPO, launch, start_launch, worker_logs
from reference import (
    adaface_statistics,
    adaface_target,
    balanced_split,
    loss_and_grads,
    momentum_step,
    target_loss_and_grads,
)
from workers.head_worker import case_data

WORKER = REPO / "tests" / "workers" / "head_worker.py"


ARCFACE, COSFACE, COMBINED = (1.0, 0.5, 0.0), (1.0, 0.0, 0.4), (0.9, 0.4, 0.15)


def classifier_cases(world_size: int) -> list[dict]:
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


def run_world(world_size: int, tmp_path_factory, tag: str = "head", cases_for=None,
              native: bool = True, kernels: str = "composite", real: bool = False) -> tuple[Path, list[dict]]:
    """Run the head worker once per (tag, world size) on ``cases_for(world_size)`` (default:
    :func:`classifier_cases`), with the kernels ``kernels`` (``PADDLE_PFC_KERNELS``: composite, or fused with the
    emulated kernels), with the native CPU kernels or Paddle's (``PADDLE_PFC_NATIVE``, composite
    only); return its output folder and the cases. ``real``: on a GPU, where the fused kernels are
    Paddle's (not emulated). The runs of :data:`HEAD_RUNS` of this world size whose test module is
    collected and that are not made yet run in the same job; a job :func:`start_early` started
    for this run is waited for instead."""
    if (tag, world_size) not in RUNS:
        wanted = (cases_for or classifier_cases, native, kernels)
        job = PENDING.get(world_size)
        if not real and job is not None and job.runs.get(tag, (None,) * 4)[:3] == wanted:
            _finish(PENDING.pop(world_size))
        else:
            runs = {tag: (cases_for, native, kernels, real)}
            if not real:  # (not the runs a started job makes)
                runs.update(_listed_runs(world_size, COLLECTED, exclude={**runs, **(job.runs if job else {})}))
            _finish(_start(world_size, runs, tmp_path_factory))
    return RUNS[(tag, world_size)]


@dataclass
class _Job:
    """A head worker job: its world size, runs ({tag: (cases_for, native, kernels, real)}), their
    specs, its folder and (started in the background) its launcher process."""

    world_size: int
    runs: dict[str, tuple]
    specs: list[dict]
    root: Path
    process: subprocess.Popen | None = None


#: Jobs started by :func:`start_early` and not yet waited for, by world size.
PENDING: dict[int, _Job] = {}


def start_early(modules: set[str], tmp_path_factory) -> None:
    """Start in the background, for each world size, the job of every :data:`HEAD_RUNS` run whose
    test module is in ``modules`` (the session's selected tests'): they run while the tests
    before theirs do, on the core a one-process test leaves idle; :func:`run_world` waits."""
    for world_size in (1, 2, 3):
        runs = _listed_runs(world_size, modules, exclude={})
        if runs:
            job = _start(world_size, runs, tmp_path_factory)
            job.process = start_launch(WORKER, world_size, ["--runs", str(job.root / "runs.json")], job.root / "log")
            PENDING[world_size] = job


def stop_pending() -> None:
    """Kill the jobs :func:`start_early` started that no test waited for."""
    for job in PENDING.values():
        if job.process is not None and job.process.poll() is None:
            job.process.kill()
    PENDING.clear()


def _listed_runs(world_size: int, modules: set[str], exclude) -> dict[str, tuple]:
    """The CPU runs of :data:`HEAD_RUNS` of ``world_size`` whose test module is in ``modules``, not made
    yet and not in ``exclude``."""
    return {tag: (cases, native, kernels, False)
            for tag, (module, sizes, cases, native, kernels) in HEAD_RUNS.items()
            if module in modules and world_size in sizes and tag not in exclude and (tag, world_size) not in RUNS}


def _start(world_size: int, runs: dict[str, tuple], tmp_path_factory) -> _Job:
    """The job's folder, with ``runs.json`` (every run's output folder, cases and kernels)."""
    root = tmp_path_factory.mktemp(f"head_w{world_size}")
    specs = []
    for name, (make, run_native, run_kernels, _) in runs.items():
        (root / name).mkdir()
        specs.append(dict(out=str(root / name), cases=(make or classifier_cases)(world_size),
                          native="on" if run_native else "off", kernels=run_kernels))
    (root / "runs.json").write_text(json.dumps(specs))
    return _Job(world_size, {tag: (make or classifier_cases, *rest) for tag, (make, *rest) in runs.items()},
                specs, root)


def _finish(job: _Job) -> None:
    """Run the job (one not started) or wait for its background process, check that each run used
    the kernels asked for, and record its runs in :data:`RUNS`."""
    if job.process is None:
        launch(WORKER, job.world_size, ["--runs", str(job.root / "runs.json")], job.root / "log")
    else:
        try:
            code = job.process.wait(timeout=900)
        finally:
            if job.process.poll() is None:
                job.process.kill()
        if code != 0:
            raise AssertionError(f"head worker job ({job.world_size} ranks) failed ({code}):\n"
                                 + (job.root / "log" / "launcher.out").read_text(errors="replace")[-3000:]
                                 + worker_logs(job.root / "log"))
    for (name, (_, run_native, run_kernels, run_real)), spec in zip(job.runs.items(), job.specs):
        for case in spec["cases"]:
            for r in load_ranks(Path(spec["out"]), case["name"], job.world_size):
                assert str(r["kernels"]) == run_kernels
                assert bool(r["emulated"]) == (run_kernels == "fused" and not run_real)
                assert bool(r["native"]) == (run_native and run_kernels == "composite")
        RUNS[(name, job.world_size)] = (Path(spec["out"]), spec["cases"])


def load_ranks(out: Path, name: str, world_size: int) -> list[dict]:
    return [dict(np.load(out / f"{name}.rank{r}.npz")) for r in range(world_size)]


def fused_cases(world_size: int) -> list[dict]:
    """:func:`classifier_cases` plus uneven shards whose ranks sample different numbers of centers, and
    a crowded batch (more positives than ``num_sample`` on some rank)."""
    base = classifier_cases(world_size)[0]
    extra = []
    if world_size > 1:
        # 2 ranks: 19 / 18 classes, num_sample 11 / 10; 3 ranks: 13 / 12 / 12, num_sample 7 / 6 / 6.
        classes, ratio = {2: (37, 0.58), 3: (37, 0.55)}[world_size]
        extra.append(dict(base, name="uneven_num_sample", num_classes=classes, margins=COMBINED,
                          sample_ratio=ratio, seed=5, chunk_rows=None))
    extra.append(dict(base, name="crowded", num_classes=7 * world_size + 1, margins=ARCFACE, sample_ratio=0.2,
                      seed=6, batch=6, chunk_rows=None))
    return classifier_cases(world_size) + extra


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
        loss, grad_f, grad_c = reference_step(case, ranks, step, features, centers, labels[step], kept)
        np.testing.assert_allclose(losses[0], loss, rtol=loss_rtol, err_msg=f"{name} step {step} loss")
        loss_errors.append(abs(losses[0] / loss - 1))
        grad_b = inputs[step].astype(np.float64).T @ grad_f
        new_c = centers.copy()
        new_vc = velocity_c.copy()
        nesterov = case.get("nesterov", False)
        new_c[kept], new_vc[kept] = momentum_step(centers[kept], grad_c[kept], velocity_c[kept], case["lr"],
                                                  momentum, case["weight_decay"], nesterov)
        new_b, new_vb = momentum_step(backbone, grad_b, velocity_b, case["lr"], momentum, case["weight_decay"],
                                      nesterov)
        assert_step(got_c, new_c, centers, "centers")
        for r in ranks:
            assert_step(r[f"backbone_{step}"], new_b, backbone, "backbone")
        # Rows that were not kept, and their momentum, are bit-identical to before the step.
        untouched = np.setdiff1d(np.arange(case["num_classes"]), kept)
        np.testing.assert_array_equal(got_c[untouched], previous[untouched])
        if momentum:
            got_v = np.concatenate([r[f"velocity_{step}"] for r in ranks])
            if case.get("momentum_dtype") == "int8":
                codes = np.concatenate([r[f"velocity_codes_{step}"] for r in ranks])
                scales = np.concatenate([r[f"velocity_scale_{step}"] for r in ranks])
                assert_int8_momentum(codes[kept], scales[kept], new_vc[kept], tol.get("int8_row", INT8_ROW_RTOL),
                                     f"{name} step {step}", tol.get("int8_clear", 0.9))
            else:
                assert_step(got_v[kept], new_vc[kept], momentum * velocity_c[kept], "center momentum")
            for r in ranks:
                assert_step(r[f"backbone_velocity_{step}"], new_vb, momentum * velocity_b, "backbone momentum")
            prev_v = np.concatenate([r[f"velocity_{step - 1}"] for r in ranks]) if step else np.zeros_like(got_v)
            np.testing.assert_array_equal(got_v[untouched], prev_v[untouched])
            for key in ("velocity_codes", "velocity_scale"):
                if f"{key}_{step}" in ranks[0]:
                    got = np.concatenate([r[f"{key}_{step}"] for r in ranks])
                    prev = np.concatenate([r[f"{key}_{step - 1}"] for r in ranks]) if step else np.zeros_like(got)
                    np.testing.assert_array_equal(got[untouched], prev[untouched], err_msg=f"{name} {key}")
        # Continue from what the ranks hold, so each step is checked on its own.
        centers, backbone = got_c.astype(np.float64), ranks[0][f"backbone_{step}"].astype(np.float64)
        if momentum:
            velocity_c = np.concatenate([r[f"velocity_{step}"] for r in ranks]).astype(np.float64)
            velocity_b = ranks[0][f"backbone_velocity_{step}"].astype(np.float64)
    return loss_errors


def reference_step(case: dict, ranks: list[dict], step: int, features, centers, labels, kept):
    """The float64 loss and gradients of ``case``'s margin at ``step``. AdaFace (``case["adaface"]``):
    from the moving averages the ranks held before the step (20 and 100 at first), after checking
    the ones they hold after it: equal on every rank, bit for bit, and to the reference's."""
    if "adaface" not in case:
        return loss_and_grads(features, centers, labels, kept, *case["margins"], case["scale"])
    ada = case["adaface"]
    before = [float(ranks[0][f"margin_state{k}_{step - 1}"][0]) for k in (0, 1)] if step else [20.0, 100.0]
    norms, mean, std = adaface_statistics(features, *before, ada.get("t_alpha", 0.01))
    for k, expected in enumerate((mean, std)):
        got = {float(r[f"margin_state{k}_{step}"][0]) for r in ranks}
        assert len(got) == 1, (case["name"], step, "moving averages differ between ranks", got)
        np.testing.assert_allclose(got.pop(), expected, rtol=2e-6, err_msg=f"{case['name']} step {step} EMA {k}")
    target = adaface_target(norms, mean, std, ada.get("m", 0.4), ada.get("h", 0.333))
    return target_loss_and_grads(features, centers, labels, kept, case["scale"], target)


def adaface_cases(world_size: int) -> list[dict]:
    """AdaFace's margin (three steps: the moving averages move): the reference's defaults, a
    fast-moving average with norms that clip the margin's scaler at ±1, sampled shards in blocks,
    a skipped non-finite step."""
    classes = {1: 13, 2: 37, 3: 31}[world_size]
    base = dict(batch=4, dim=16, in_dim=12, steps=3, lr=0.2, momentum=0.9, weight_decay=5e-4, scale=16.0,
                optimizer="momentum")
    return [
        dict(base, name="adaface_defaults", num_classes=classes, sample_ratio=1.0, seed=51, adaface={},
             chunk_rows=4, scale=64.0),
        dict(base, name="adaface_clipped", num_classes=classes * 2, sample_ratio=0.4, seed=52, chunk_rows=3,
             adaface=dict(m=0.5, h=2.0, t_alpha=1.0)),
        dict(base, name="adaface_sgd", num_classes=classes * 2 + 1, sample_ratio=0.5, seed=53, optimizer="sgd",
             adaface=dict(m=0.4, h=0.333, t_alpha=0.5), label_rank1=False),
        # Step 1: the first sample's input is inf (its feature NaN): the step is skipped and the
        # moving averages hold; step 2 is an ordinary step from them.
        dict(base, name="adaface_nonfinite_holds", num_classes=classes * 2, sample_ratio=0.5, seed=54,
             chunk_rows=3, adaface=dict(t_alpha=0.5), inject_inf=[1, 0], skipped_steps=[1]),
    ]


def adamw_cases(world_size: int) -> list[dict]:
    """AdamW (:mod:`paddle_pfc.head.sparse_adamw`) over four steps: sampled shards in blocks (rows
    kept at some steps and not others, so their step counts differ), every row kept (dense AdamW),
    bfloat16 centers (float32 moments)."""
    classes = {1: 13, 2: 37, 3: 31}[world_size]
    base = dict(batch=4, dim=16, in_dim=12, steps=4, lr=0.02, momentum=0.0, weight_decay=0.05, scale=16.0,
                optimizer="adamw", betas=[0.9, 0.999], eps=1e-8)
    return [
        dict(base, name="adamw_sampled", num_classes=classes * 3, margins=ARCFACE, sample_ratio=0.3, seed=61,
             chunk_rows=3),
        dict(base, name="adamw_full", num_classes=classes, margins=COSFACE, sample_ratio=1.0, seed=62, chunk_rows=4,
             betas=[0.8, 0.99], eps=1e-6, label_rank1=False),
        dict(base, name="adamw_bfloat16", num_classes=classes * 2, margins=COMBINED, sample_ratio=0.5, seed=63,
             center_dtype="bfloat16"),
    ]


#: The float32 step's error on a momentum row, relative to the row's largest magnitude: the center
#: gradients are float32 sums over the batch (measured: 1.4e-6 on the scales, 1 to 3 ranks).
INT8_ROW_RTOL = 2e-5


def assert_int8_momentum(codes, scales, expected, row_rtol: float, what: str, min_clear: float) -> None:
    """int8 momentum rows (codes [k, D], scales [k, 1]) against the float64 quantization of the
    reference's momentum ``expected``: with ``err_v = row_rtol max_row|v|`` the float32 step's
    error on ``v`` and ``err_s = err_v / 127`` on the scale, a code ``v / s`` lies within ``m =
    (err_v + |v / s| err_s) / s`` code units of the float64 one (at most ``254 row_rtol``). Codes
    must equal the float64 ones rounded (to nearest even) wherever the float64 ratio is farther than
    ``m`` from a half-integer, and lie within ``0.5 + m`` of it everywhere; at least ``min_clear`` of
    them must be that far (bfloat16 operands leave few)."""
    scale64 = np.abs(expected).max(axis=1, keepdims=True) / 127.0
    ratio = np.divide(expected, scale64, out=np.zeros_like(expected), where=scale64 > 0)
    err_v = row_rtol * np.abs(expected).max(axis=1, keepdims=True)
    err_s = err_v / 127.0
    np.testing.assert_allclose(scales, scale64, rtol=0, atol=float(err_s.max()), err_msg=f"{what} momentum scales")
    margin = (err_v + np.abs(ratio) * err_s) / np.where(scale64 > 0, scale64, 1.0)
    clear = np.abs(np.abs(ratio - np.floor(ratio)) - 0.5) > margin
    assert clear.mean() >= min_clear, f"{what}: too few codes away from a rounding boundary to check"
    np.testing.assert_array_equal(codes[clear], np.clip(np.round(ratio), -127, 127)[clear],
                                  err_msg=f"{what} momentum codes")
    assert np.all(np.abs(codes - ratio) <= 0.5 + margin), f"{what} momentum codes beyond rounding"


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
        for key in ("margin_state0", "margin_state1"):  # a margin's state held through a non-finite batch
            if step and f"{key}_{step}" in r:
                np.testing.assert_array_equal(r[f"{key}_{step}"], r[f"{key}_{step - 1}"], err_msg=f"{name} {key}")


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


# bfloat16 keeps 8 significant bits: rounding moves a value by at most u = 2^-8 (0.4 %) relative.
# Stated tolerances, against the float64 step taken from the state the ranks held before it:
# * bfloat16 operands (dtype): loss within u relative; parameters and momentum within 4u (1.6 %) of
#   the step's largest change (rounded operands perturb the gradient, not the value it moves).
#   Measured on 1-3 ranks: loss <= 6.6e-4 relative, state <= 0.53 % of the largest change; another
#   CPU sums in another order, so the bound leaves room for that.
# * bfloat16 storage (center_dtype): the stored centers and momentum are also rounded once per step,
#   so within u relative of that step's value on top of the above.
U_BF16 = 2.0**-8


BF16_OPERANDS = {"loss": U_BF16, "rtol": 0.0, "atol": 2e-5, "step": 4 * U_BF16}


BF16_STORAGE = dict(BF16_OPERANDS, rtol=U_BF16)


def mixed_cases(world_size: int) -> list[dict]:
    classes = {1: 13, 2: 37, 3: 31}[world_size]
    base = dict(batch=4, dim=16, in_dim=12, steps=2, lr=0.2, momentum=0.9, weight_decay=5e-4,
                scale=16.0, optimizer="momentum", margins=ARCFACE)
    return [
        dict(base, name="bf16_operands", num_classes=classes * 2, sample_ratio=0.5, seed=11,
             dtype="bfloat16", chunk_rows=3, tolerance=BF16_OPERANDS),
        dict(base, name="bf16_storage", num_classes=classes * 2, sample_ratio=0.5, seed=12,
             dtype="bfloat16", center_dtype="bfloat16", chunk_rows=2, tolerance=BF16_STORAGE,
             margins=COMBINED),
        dict(base, name="bf16_storage_f32_operands", num_classes=classes, sample_ratio=1.0, seed=13,
             center_dtype="bfloat16", chunk_rows=4, tolerance=BF16_STORAGE),
        dict(base, name="loss_scaled", num_classes=classes * 2, sample_ratio=0.5, seed=14,
             chunk_rows=3, loss_scaling=True),
        # Step 0: rank 0's first sample is inf, so every gradient on every rank is NaN: the step
        # must change nothing and halve the scale; step 1 is an ordinary step from the same state.
        dict(base, name="inf_skips_step", num_classes=classes * 2, sample_ratio=0.5, seed=15,
             chunk_rows=3, loss_scaling={"init_loss_scaling": 1024.0}, inject_inf=[0, 0],
             skipped_steps=[0], steps=3),
    ]


def mixed_fused_cases(world_size: int) -> list[dict]:
    """:func:`mixed_cases` with the fused backend's step bound for bfloat16 operands (8u, see below)."""
    cases = mixed_cases(world_size)
    for case in cases:
        if case.get("dtype") == "bfloat16":
            case["tolerance"] = dict(case["tolerance"], step=8 * U_BF16)
    return cases


def nonfinite_cases(world_size: int) -> list[dict]:
    classes = {1: 13, 2: 37, 3: 31}[world_size]
    base = dict(batch=4, dim=16, in_dim=12, steps=3, lr=0.2, momentum=0.9, weight_decay=5e-4, scale=16.0,
                optimizer="momentum", margins=ARCFACE, num_classes=classes * 2, sample_ratio=0.5, chunk_rows=3)
    last_row = 4 * world_size - 1  # a sample of the last rank
    return [
        # float32, no loss scaling: the guard of minimize (skip_nonfinite, on by default).
        dict(base, name="float32_inf_skips_step", seed=21, inject_inf=[1, last_row], skipped_steps=[1]),
        # bfloat16 operands and center storage.
        dict(base, name="bfloat16_inf_skips_step", seed=22, dtype="bfloat16", center_dtype="bfloat16",
             tolerance=BF16_STORAGE, margins=COMBINED, inject_inf=[0, 0], skipped_steps=[0]),
    ]


def beyond_limit_cases(world_size: int) -> list[dict]:
    """The last rank holds a center of tiny norm and the loss is scaled by 1e10 (see
    test_center_gradient_beyond_the_limit_skips_the_step_on_every_rank)."""
    classes = 5 * world_size
    return [dict(batch=4, dim=16, in_dim=12, steps=1, lr=0.2, momentum=0.9, weight_decay=5e-4, scale=16.0,
                 optimizer="momentum", margins=ARCFACE, num_classes=classes, sample_ratio=1.0, seed=31,
                 tiny_center=classes - 1, loss_factor=1e10, name="beyond_limit")]

def int8_momentum_cases(world_size: int) -> list[dict]:
    """Momentum stored as int8 codes with row scales (``momentum_dtype``): sampled shards (rows kept and
    not kept), momentum and Nesterov, float32 and bfloat16 centers, several steps."""
    classes = {1: 13, 2: 37, 3: 31}[world_size]
    base = dict(batch=4, dim=16, in_dim=12, steps=4, lr=0.2, momentum=0.9, weight_decay=5e-4, scale=16.0,
                optimizer="momentum", margins=ARCFACE, momentum_dtype="int8")
    return [
        dict(base, name="int8_momentum", num_classes=classes * 2, sample_ratio=0.4, seed=41, chunk_rows=3),
        dict(base, name="int8_nesterov", num_classes=classes * 2, sample_ratio=0.5, seed=42, nesterov=True,
             margins=COMBINED),
        dict(base, name="int8_bf16_centers", num_classes=classes * 2, sample_ratio=0.5, seed=43,
             center_dtype="bfloat16", dtype="bfloat16", chunk_rows=3,
             tolerance=dict(BF16_STORAGE, int8_row=5 * U_BF16, int8_clear=0.0)),
    ]


def int8_momentum_fused_cases(world_size: int) -> list[dict]:
    """:func:`int8_momentum_cases` with the fused backend's bounds for bfloat16 operands: twice the
    composite backend's step and momentum-row bounds (it rounds the unit vectors to bfloat16, see
    :func:`mixed_fused_cases`)."""
    cases = int8_momentum_cases(world_size)
    for case in cases:
        if case.get("dtype") == "bfloat16":
            tolerance = case["tolerance"]
            case["tolerance"] = dict(tolerance, step=2 * tolerance["step"], int8_row=2 * tolerance["int8_row"])
    return cases


#: The CPU runs of the head worker the test modules check, by tag: (test module, world sizes, cases,
#: native kernels, kernels). The first :func:`run_world` of a world size makes every run of that size
#: whose test module the session collected (:data:`COLLECTED`, filled by conftest.py) in the same job:
#: one launch and one Paddle start-up per rank instead of one per run.
HEAD_RUNS: dict[str, tuple] = {
    "head": ("test_classifier", (1, 2, 3), classifier_cases, True, "composite"),
    "fused": ("test_classifier", (1, 2, 3), fused_cases, True, "fused"),
    "paddle_kernels": ("test_classifier", (1, 2), classifier_cases, False, "composite"),
    "mixed_native1": ("test_mixed_precision", (1, 2, 3), mixed_cases, True, "composite"),
    "mixed_native0": ("test_mixed_precision", (1,), mixed_cases, False, "composite"),
    "mixed_fused": ("test_mixed_precision", (1, 2, 3), mixed_fused_cases, True, "fused"),
    "nonfinite": ("test_reliability_nonfinite", (1, 2, 3), nonfinite_cases, True, "composite"),
    "beyond": ("test_reliability_nonfinite", (2, 3), beyond_limit_cases, True, "composite"),
    "int8_native1": ("test_int8_momentum", (1, 2), int8_momentum_cases, True, "composite"),
    "int8_native0": ("test_int8_momentum", (1, 2), int8_momentum_cases, False, "composite"),
    "int8_fused": ("test_int8_momentum", (1,), int8_momentum_fused_cases, True, "fused"),
    "adaface": ("test_adaface", (1, 2, 3), adaface_cases, True, "composite"),
    "adaface_paddle_kernels": ("test_adaface", (1,), adaface_cases, False, "composite"),
    "adamw_native1": ("test_sparse_adamw", (1, 2, 3), adamw_cases, True, "composite"),
    "adamw_native0": ("test_sparse_adamw", (1, 2), adamw_cases, False, "composite"),
    "adamw_fused": ("test_sparse_adamw", (1,), adamw_cases, True, "fused"),
}
#: The basenames of the test modules this session collected.
COLLECTED: set[str] = set()
