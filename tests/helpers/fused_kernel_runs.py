"""The fused kernels' worker runs and their numpy oracles, shared by the CPU (emulated kernels) and the
GPU (Paddle's kernels) tests: :func:`run_world`, :func:`check_margin_cases`, :func:`check_sample_cases`."""
from __future__ import annotations

import json

import numpy as np

from launcher import REPO, launch
from reference import balanced_split
from workers.fused_kernel_worker import margin_case_data, sample_case_labels

ARCFACE, COSFACE, COMBINED, SPHEREFACE = (1.0, 0.5, 0.0), (1.0, 0.0, 0.35), (0.9, 0.4, 0.15), (1.35, 0.0, 0.0)


WORKER = REPO / "tests" / "workers" / "fused_kernel_worker.py"


# --- oracles (float64 numpy) ------------------------------------------------------------------
def margin_oracle(cos, labels, upstream, m1, m2, m3, scale):
    """(loss [N, 1], softmax [N, C], d sum(upstream * loss) / d cos [N, C]) over all classes."""
    x = cos.astype(np.float64)
    rows = np.arange(len(x))
    t = x[rows, labels]
    angular = m1 != 1.0 or m2 != 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        theta = np.arccos(t)  # unclipped, as the kernel
        target = (np.cos(m1 * theta + m2) if angular else t) - m3
        logits = x.copy()
        logits[rows, labels] = target
        logits *= scale
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_softmax = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        softmax = np.exp(log_softmax)
        loss = -log_softmax[rows, labels][:, None]
        g = upstream.astype(np.float64)
        grad = scale * softmax * g
        slope = m1 * np.sin(m1 * theta + m2) / np.sqrt(1.0 - t * t) if angular else np.ones_like(t)
        grad[rows, labels] = scale * (softmax[rows, labels] - 1.0) * g[:, 0] * slope
    return loss, softmax, grad


def sample_oracle(labels, sizes, num_samples):
    """(remapped [N], positives per rank): every rank kept max(num_samples, its distinct labels)
    centers, positives first in ascending order; ``num_samples`` applied to every rank."""
    interval = np.concatenate([[0], np.cumsum(sizes)])
    distinct = np.unique(labels)
    positives = [distinct[(distinct >= interval[k]) & (distinct < interval[k + 1])] - interval[k]
                 for k in range(len(sizes))]
    kept = np.array([max(num_samples, len(p)) for p in positives])
    offset = np.concatenate([[0], np.cumsum(kept)])
    table = {}
    for k, p in enumerate(positives):
        for j, local in enumerate(p):
            table[local + interval[k]] = offset[k] + j
    return np.array([table[v] for v in labels]), positives


# --- cases --------------------------------------------------------------------------------------
def margin_cases(world_size: int) -> list[dict]:
    rng = np.random.default_rng(100 + world_size)
    cases, margins = [], [ARCFACE, COSFACE, COMBINED, SPHEREFACE]
    scales = [1.0, 2.0, 16.0, 30.0, 64.0]
    for k in range(10):
        classes = int(rng.integers(world_size * 2, 40)) + (k % 2)
        cases.append(dict(kind="margin", name=f"margin_random{k}", seed=int(rng.integers(1 << 30)),
                          batch=int(rng.integers(1, 9)), num_classes=classes, margins=margins[k % 4],
                          scale=scales[k % 5], label_2d=bool(k % 3 == 0)))
    split = balanced_split(23, world_size)
    edges = sorted({v for s, c in split for v in (s, s + c - 1)})
    cases.append(dict(kind="margin", name="margin_shard_edges", seed=7, batch=len(edges), num_classes=23,
                      margins=COMBINED, scale=64.0, labels=edges))
    first = split[-1]  # every label on the last shard, the other ranks only contribute negatives
    cases.append(dict(kind="margin", name="margin_one_shard", seed=8, batch=6, num_classes=23, margins=ARCFACE,
                      scale=32.0, labels=[first[0] + i % first[1] for i in range(6)]))
    # Target cosines of exactly +1 and -1: the angular margin's slope divides by sqrt(1 - x^2) = 0
    # (the kernel does not clip): an infinite target gradient; CosFace's stays finite.
    for margins, tag in ((ARCFACE, "arcface"), (COSFACE, "cosface")):
        cases.append(dict(kind="margin", name=f"margin_cos_pm1_{tag}", seed=10, batch=4, num_classes=13,
                          margins=margins, scale=4.0, labels=[2, 12, 5, 0], exact={"0": [2, 1.0], "1": [12, -1.0]}))
    cases.append(dict(kind="margin", name="margin_float64", seed=9, batch=5, num_classes=17, margins=ARCFACE,
                      scale=8.0, dtype="float64"))
    return cases


def sample_cases(world_size: int) -> list[dict]:
    cases = []
    rng = np.random.default_rng(200 + world_size)
    for k in range(8):
        classes = int(rng.integers(world_size * 3, 60))
        smallest = classes // world_size
        cases.append(dict(kind="sample", name=f"sample_random{k}", seed=int(rng.integers(1 << 30)),
                          batch=int(rng.integers(1, 24)), num_classes=classes,
                          num_samples=int(rng.integers(1, smallest + 1)), runs=2,
                          dtype="int32" if k == 3 else "int64"))
    split = balanced_split(31, world_size)
    edges = sorted({v for s, c in split for v in (s, s + c - 1)})
    cases.append(dict(kind="sample", name="sample_shard_edges", seed=1, batch=len(edges), num_classes=31,
                      num_samples=2, labels=edges))
    start, count = split[0]  # every class of shard 0 is a positive: more positives than num_samples
    cases.append(dict(kind="sample", name="sample_all_positive", seed=2, batch=count + 2, num_classes=31,
                      num_samples=3, labels=list(range(start, start + count)) + [start, start + count - 1]))
    last_start, last_count = split[-1]  # earlier ranks without positives, the last crowded
    cases.append(dict(kind="sample", name="sample_crowded_last", seed=5, batch=8, num_classes=31, num_samples=2,
                      labels=[last_start + i % last_count for i in range(8)]))
    cases.append(dict(kind="sample", name="sample_fix_seed", seed=3, batch=5, num_classes=40, num_samples=6,
                      fix_seed=True, runs=2))
    if world_size > 1:  # ranks that disagree on num_samples (uneven shards): each counts with its own
        cases.append(dict(kind="sample", name="sample_uneven_num_samples", seed=4, batch=6, num_classes=37,
                          num_samples=[4 + r for r in range(world_size)]))
    return cases


RUNS: dict = {}


def run_world(world_size: int, tmp_path_factory, kernels: str = "emulated"):
    """Run every case on ``world_size`` ranks with the ``emulated`` or the ``real`` kernels (once)."""
    key = (world_size, kernels)
    if key not in RUNS:
        out = tmp_path_factory.mktemp(f"fused_kernels_{kernels}_w{world_size}")
        cases = margin_cases(world_size) + sample_cases(world_size)
        (out / "cases.json").write_text(json.dumps(cases))
        launch(WORKER, world_size, ["--cases", str(out / "cases.json"), "--out", str(out), "--kernels", kernels],
               out / "log")
        RUNS[key] = (out, cases)
    return RUNS[key]


def load(out, name, world_size):
    return [dict(np.load(out / f"{name}.rank{r}.npz")) for r in range(world_size)]


def check_margin_cases(out, cases, world_size: int) -> None:
    for case in (c for c in cases if c["kind"] == "margin"):
        cos, labels, upstream = margin_case_data(case)
        loss, softmax, grad = margin_oracle(cos, labels, upstream, *case["margins"], case["scale"])
        ranks = load(out, case["name"], world_size)
        wide = case.get("dtype") == "float64"
        rtol, atol = (1e-12, 1e-14) if wide else (2e-5 * max(1.0, case["scale"] / 8), 1e-6)
        for r, got in enumerate(ranks):
            start, width = int(got["start"]), int(got["width"])
            assert (start, width) == balanced_split(case["num_classes"], world_size)[r]
            assert list(got["dtypes"]) == [str(cos.dtype)] * 3, case["name"]
            assert got["loss"].shape == (case["batch"], 1) and got["softmax"].shape == (case["batch"], width)
            # The same per-sample loss on every rank, bit for bit (all-reduced).
            np.testing.assert_array_equal(got["loss"], ranks[0]["loss"])
            np.testing.assert_allclose(got["loss"], loss, rtol=rtol, atol=atol, err_msg=case["name"])
            np.testing.assert_allclose(got["softmax"], softmax[:, start:start + width], rtol=rtol, atol=atol,
                                       err_msg=case["name"])
            scale_atol = atol * case["scale"] * float(np.abs(upstream).max())
            np.testing.assert_allclose(got["grad"], grad[:, start:start + width], rtol=rtol, atol=scale_atol,
                                       err_msg=f"{case['name']} gradient rank {r}")
        if case["name"].startswith("margin_cos_pm1"):
            full = np.concatenate([g["grad"] for g in ranks], axis=1)
            assert np.isfinite(np.concatenate([g["loss"] for g in ranks])).all()
            expected_inf = tuple(case["margins"]) == ARCFACE
            assert (full[0, 2] == -np.inf and full[1, 12] == np.inf) == expected_inf, full[:2]
            assert np.isfinite(full).all() != expected_inf


def check_sample_cases(out, cases, world_size: int) -> None:
    for case in (c for c in cases if c["kind"] == "sample"):
        labels = sample_case_labels(case)
        ranks = load(out, case["name"], world_size)
        sizes = [int(r["num_local"]) for r in ranks]
        assert [(int(r["start"]), n) for r, n in zip(ranks, sizes)] == balanced_split(case["num_classes"], world_size)
        for run in range(case.get("runs", 1)):
            kept_global = []
            for r, got in enumerate(ranks):
                remapped, positives = sample_oracle(labels, sizes, int(got["num_samples"]))
                sampled = got[f"sampled_{run}"]
                assert sampled.dtype == np.dtype(case.get("dtype", "int64")), case["name"]
                assert got[f"remapped_{run}"].dtype == sampled.dtype
                np.testing.assert_array_equal(got[f"remapped_{run}"], remapped, err_msg=case["name"])
                p = positives[r]
                assert len(sampled) == max(int(got["num_samples"]), len(p)), case["name"]
                np.testing.assert_array_equal(sampled[:len(p)], p)  # positives first, ascending
                assert len(np.unique(sampled)) == len(sampled), "kept centers are unique"
                assert sampled.min() >= 0 and sampled.max() < sizes[r]
                assert not np.isin(sampled[len(p):], p).any(), "negatives are not positives"
                kept_global.append(sampled.astype(np.int64) + int(got["start"]))
            if not isinstance(case["num_samples"], list):
                # Every rank's remapped label indexes the concatenation of the kept centers.
                np.testing.assert_array_equal(np.concatenate(kept_global)[ranks[0][f"remapped_{run}"]], labels)
        if case.get("fix_seed"):
            for got in ranks:
                np.testing.assert_array_equal(got["sampled_0"], got["sampled_1"])
        if case["name"] == "sample_uneven_num_samples":
            # The kernel's remap depends on the calling rank's num_samples: ranks disagree.
            assert any((r["remapped_0"] != ranks[0]["remapped_0"]).any() for r in ranks[1:])
    # Without a fixed seed the negatives change from run to run (on some rank, some case).
    changed = [any((g["sampled_0"] != g["sampled_1"]).any() for g in load(out, c["name"], world_size))
               for c in cases if c["kind"] == "sample" and c.get("runs") == 2 and not c.get("fix_seed")]
    assert any(changed)
