"""Gradient accumulation's runs (``tests/workers/accumulate_worker.py``) and their check: each
optimizer step of K micro-batches against the float64 reference of ONE step on the K x batch batch
(every rank's), with the kept set the ranks drew (the same at every micro-step)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from helpers.adamw_runs import VALUE_RTOL, _close, step_bound
from launcher import REPO, launch
from reference import adamw_step, balanced_split, loss_and_grads, momentum_step
from workers.accumulate_worker import accumulate_data

WORKER = REPO / "tests" / "workers" / "accumulate_worker.py"
ARCFACE, COSFACE, COMBINED = (1.0, 0.5, 0.0), (1.0, 0.0, 0.4), (0.9, 0.4, 0.15)


def accumulate_cases(world_size: int, sampled: bool = True) -> list[dict]:
    """Momentum, SGD (with dynamic loss scaling) and AdamW, K = 2 and 3, two optimizer steps each
    (the second starts from the first's buffers: the first micro-step must overwrite them);
    ``sampled``: with ``sample_ratio < 1`` (else every row kept)."""
    classes = {1: 13, 2: 37, 3: 31}[world_size]
    base = dict(batch=3, dim=16, in_dim=12, steps=2, lr=0.2, momentum=0.9, weight_decay=5e-4, scale=16.0,
                optimizer="momentum", margins=ARCFACE)
    adamw = dict(base, optimizer="adamw", lr=0.02, weight_decay=0.05, betas=[0.9, 0.999], eps=1e-8)
    ratio = (lambda r: r) if sampled else (lambda r: 1.0)
    return [
        dict(base, name="momentum_k2", num_classes=classes * 3, sample_ratio=ratio(0.3), seed=71, chunk_rows=3,
             accumulate_steps=2),
        dict(base, name="sgd_k3", num_classes=classes * 2, sample_ratio=ratio(0.4), seed=72, optimizer="sgd",
             weight_decay=1e-3, batch=2, accumulate_steps=3, margins=COSFACE, loss_scaling=True),
        dict(adamw, name="adamw_k3", num_classes=classes * 3, sample_ratio=ratio(0.3), seed=73, chunk_rows=4,
             accumulate_steps=3, margins=COMBINED),
        dict(adamw, name="adamw_k2", num_classes=classes * 2, sample_ratio=ratio(0.5), seed=74, batch=2,
             accumulate_steps=2),
    ]


def nonfinite_cases() -> list[dict]:
    """One rank, three steps; an inf input in a micro-batch of step 1 skips that whole step: in the
    last micro-batch (the first one's gradients dropped with it), and in the first with dynamic loss
    scaling (whose scale then halves once, at the step's last micro-batch, not at each bad one)."""
    case = dict(accumulate_cases(1)[0], steps=3, inject_inf=[1, 1, 0], skipped_steps=[1])
    return [dict(case, name="nonfinite_k2"),
            dict(case, name="scaled_nonfinite_k2", loss_scaling=True, inject_inf=[1, 0, 0]),
            dict(accumulate_cases(1)[2], name="scaled_adamw_k3", loss_scaling=True)]


def run_accumulate(world_size: int, root: Path, runs: dict[str, tuple[list[dict], str, str]]) -> dict:
    """Run the worker once on ``world_size`` ranks for every ``{tag: (cases, native, kernels)}``;
    ``{tag: (folder, cases)}``."""
    specs, out = [], {}
    for tag, (cases, native, kernels) in runs.items():
        (root / tag).mkdir(parents=True)
        specs.append(dict(out=str(root / tag), cases=cases, native=native, kernels=kernels))
        out[tag] = (root / tag, cases)
    (root / "runs.json").write_text(json.dumps(specs))
    launch(WORKER, world_size, ["--runs", str(root / "runs.json")], root / "log", timeout=600)
    return out


def load_ranks(folder: Path, name: str, world_size: int) -> list[dict]:
    return [dict(np.load(folder / f"{name}.rank{r}.npz")) for r in range(world_size)]


def _kept(case: dict, ranks: list[dict], step: int) -> np.ndarray:
    """The classes kept at ``step`` (every rank's kept rows, global ids); the same at every micro-step."""
    if f"sampled_{step}_0" not in ranks[0]:
        return np.arange(case["num_classes"])
    for r in ranks:
        for micro in range(1, case["accumulate_steps"]):
            np.testing.assert_array_equal(r[f"sampled_{step}_{micro}"], r[f"sampled_{step}_0"],
                                          err_msg=f"{case['name']} step {step}: the kept set moved")
    return np.sort(np.concatenate([r[f"sampled_{step}_0"] + int(r["class_start"]) for r in ranks]))


def _step(case: dict, param, grad, states: tuple, steps) -> tuple:
    """``(param, states)`` after one float64 step of ``case``'s optimizer (``states``: AdamW's two
    moments, or the momentum)."""
    if case["optimizer"] == "adamw":
        new, m1, m2 = adamw_step(param, grad, *states, steps, case["lr"], *case["betas"], case["eps"],
                                 case["weight_decay"])
        return new, (m1, m2)
    momentum = case["momentum"] if case["optimizer"] == "momentum" else 0.0
    new, velocity = momentum_step(param, grad, states[0], case["lr"], momentum, case["weight_decay"])
    return new, (velocity,)


def _assert_close(case, step, got, want, before, grad, states, steps, what):
    """``got`` against the reference ``want``: float32's tolerances (momentum / SGD), or AdamW's
    bound of a float32 gradient through the rule (:func:`helpers.adamw_runs.step_bound`)."""
    if case["optimizer"] != "adamw":
        change = np.abs(want - before).max()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-5, err_msg=f"{case['name']} step {step} {what} "
                                   f"(largest change {change:.3g})")
        return
    row_max = np.abs(grad).max(axis=1, keepdims=True) if what == "centers" else np.abs(grad).max()
    bound = step_bound(grad, *states, steps, case["lr"], *case["betas"], case["eps"], row_max)[0]
    _close(got, want, bound, VALUE_RTOL, f"{case['name']} step {step} {what}")


def _states_of(case: dict, ranks: list[dict], step: int) -> tuple[tuple, tuple]:
    """(center states [C, D] each, backbone states) the ranks hold after ``step``."""
    cat = lambda key: np.concatenate([r[f"{key}_{step}"] for r in ranks]).astype(np.float64)  # noqa: E731
    first = lambda key: ranks[0][f"{key}_{step}"].astype(np.float64)  # noqa: E731
    if case["optimizer"] == "adamw":
        return (cat("moment1"), cat("moment2")), (first("backbone_moment1"), first("backbone_moment2"))
    if case["optimizer"] == "momentum":
        return (cat("velocity"),), (first("backbone_velocity"),)
    return None, None


def check_accumulated(case: dict, ranks: list[dict], world_size: int) -> None:
    """Every optimizer step of ``case`` against one float64 step of its K x batch batch (module doc);
    rows not kept (and their states) bit-identical; a skipped step changes nothing."""
    name = case["name"]
    inputs, labels, _, backbone0 = accumulate_data(case, world_size)
    split = balanced_split(case["num_classes"], world_size)
    assert [(int(r["class_start"]), int(r["num_local"])) for r in ranks] == split, name
    centers = np.concatenate([r["shard_initial"] for r in ranks]).astype(np.float64)
    backbone = backbone0.astype(np.float64)
    zeros = 2 if case["optimizer"] == "adamw" else 1
    states_c = tuple(np.zeros_like(centers) for _ in range(zeros))
    states_b = tuple(np.zeros_like(backbone) for _ in range(zeros))
    counts, done, last = np.zeros((case["num_classes"], 1)), 0, case["accumulate_steps"] - 1
    for step in range(case["steps"]):
        got_c = np.concatenate([r[f"shard_{step}"] for r in ranks]).astype(np.float64)
        flags = ranks[0][f"flags_{step}_{last}"]
        if case.get("loss_scaling"):  # halved once by each skipped step so far, at its last micro-batch
            halvings = sum(s <= step for s in case.get("skipped_steps", ()))
            assert {float(r[f"scale_{step}"][0]) for r in ranks} == {2.0 ** (16 - halvings)}, (name, step)
        if step in case.get("skipped_steps", ()):
            assert flags.max() > 0, (name, step, flags)
            np.testing.assert_array_equal(got_c, centers, err_msg=f"{name}: a skipped step moved centers")
            np.testing.assert_array_equal(ranks[0][f"backbone_{step}"], backbone, err_msg=f"{name} skipped step")
            continue
        assert flags.tolist() == [0.0] * 4, (name, step, flags)
        losses = {float(r[f"loss_{step}_{last}"][0]) for r in ranks}
        assert len(losses) == 1, (name, step, losses)
        kept = _kept(case, ranks, step)
        x = inputs[step].reshape(-1, case["in_dim"]).astype(np.float64)
        loss, grad_f, grad_c = loss_and_grads(x @ backbone, centers, labels[step].reshape(-1), kept,
                                              *case["margins"], case["scale"])
        np.testing.assert_allclose(losses.pop(), loss, rtol=2e-5, err_msg=f"{name} step {step} loss")
        done += 1
        counts[kept] += 1
        if case["optimizer"] == "adamw":
            np.testing.assert_array_equal(np.concatenate([r[f"steps_{step}"] for r in ranks]), counts,
                                          err_msg=f"{name} step {step} row step counts")
        want, after = _step(case, centers[kept], grad_c[kept], tuple(v[kept] for v in states_c), counts[kept])
        _assert_close(case, step, got_c[kept], want, centers[kept], grad_c[kept], after, counts[kept], "centers")
        untouched = np.setdiff1d(np.arange(case["num_classes"]), kept)
        np.testing.assert_array_equal(got_c[untouched], centers[untouched], err_msg=f"{name} step {step}")
        grad_b = x.T @ grad_f
        want_b, after_b = _step(case, backbone, grad_b, states_b, done)
        for r in ranks:
            _assert_close(case, step, r[f"backbone_{step}"].astype(np.float64), want_b, backbone, grad_b, after_b,
                          done, "backbone")
        held_c, held_b = _states_of(case, ranks, step)
        if held_c is not None:
            for held, before in zip(held_c, states_c):
                np.testing.assert_array_equal(held[untouched], before[untouched], err_msg=f"{name} step {step}")
            states_c, states_b = held_c, held_b
        centers, backbone = got_c, ranks[0][f"backbone_{step}"].astype(np.float64)
