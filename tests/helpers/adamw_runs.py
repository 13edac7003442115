"""The AdamW runs of the head worker (:func:`helpers.head_runs.adamw_cases`) against torch's AdamW step in
float64 (:func:`reference.adamw_step`): the kept center rows each with its own step count, the backbone
with the global one.

Each step is checked from the state the ranks held before it. The reference's gradient is float64 and
the ranks' float32, so its error goes through the rule: with ``dg = GRAD_RTOL * max|g|`` of a row, the
moments move by at most ``(1 - beta1) dg`` and ``(1 - beta2) 2 |g| dg``, and the step
``mhat / (sqrt(vhat) + eps)`` by at most ``dm / (sqrt(vhat) + eps) + |mhat| dv / (2 sqrt(vhat)
(sqrt(vhat) + eps)^2)`` (the bias corrections applied): the bound the values are held to, plus
float32's (or, stored, bfloat16's) rounding of the values themselves.
"""
from __future__ import annotations

import numpy as np

from helpers.head_runs import kept_classes, reference_step
from reference import adamw_step, balanced_split
from workers.head_worker import case_data

#: The float32 gradient's error, relative to the largest magnitude of its row (or of the backbone's).
GRAD_RTOL = 2e-5
#: float32's relative rounding of the stored values (a few ulps of the arithmetic).
VALUE_RTOL = 4e-7
BACKBONE_KEYS = ("backbone", "backbone_moment1", "backbone_moment2")


def correction_rtol(beta: float, steps) -> np.ndarray:
    """The relative error of a float32 ``1 - beta**t``: ``beta`` rounded to float32, its power taken by
    ``t`` float32 products (Paddle's beta-power accumulators), and the subtraction's rounding."""
    beta32 = float(np.float32(beta))
    power_error = steps * (2.0 ** -24 + abs(beta32 - beta) / beta) * beta ** steps
    return (power_error + 2.0 ** -24) / (1 - beta ** steps)


def step_bound(grad, moment1, moment2, steps, lr, beta1, beta2, eps, row_max) -> tuple:
    """``(parameter, moment1, moment2)`` error bounds of a step whose gradient ``grad`` is off by at
    most ``GRAD_RTOL * row_max`` (module doc), from the float64 moments after the step, plus the
    float32 error of the bias corrections (:func:`correction_rtol`) and of the step's arithmetic."""
    dg = GRAD_RTOL * row_max
    dm, dv = (1 - beta1) * dg, (1 - beta2) * 2 * np.abs(grad) * dg
    c1, c2 = 1 - beta1 ** steps, 1 - beta2 ** steps
    mhat, vhat = np.abs(moment1) / c1, moment2 / c2
    root = np.sqrt(vhat)
    with np.errstate(divide="ignore", invalid="ignore"):
        radial = np.where(root > 0, mhat * (dv / c2) / (2 * root * (root + eps) ** 2), 0.0)
    update = mhat / (root + eps)
    arithmetic = update * (correction_rtol(beta1, steps) + correction_rtol(beta2, steps) / 2 + 8 * 2.0 ** -24)
    return lr * ((dm / c1) / (root + eps) + radial + arithmetic), dm, dv


def _close(got, expected, bound, storage_rtol, what):
    excess = np.abs(got - expected) - bound - storage_rtol * np.abs(expected) - 1e-12
    where = np.unravel_index(excess.argmax(), excess.shape)
    assert excess.max() <= 0, f"{what}: off by {excess.max():.3g} beyond its bound at {where}"


def check_adamw_case(case: dict, ranks: list[dict], world_size: int) -> None:
    """Every step of an AdamW case against :func:`reference.adamw_step` (module doc); rows not kept,
    their moments and step counts bit-identical; the step counts exact."""
    name, lr, (beta1, beta2), eps, wd = case["name"], case["lr"], case["betas"], case["eps"], case["weight_decay"]
    inputs, labels, _, backbone0 = case_data(case, world_size)
    split = balanced_split(case["num_classes"], world_size)
    storage = 2.0 ** -8 if case.get("center_dtype") == "bfloat16" else VALUE_RTOL
    cat = lambda key: np.concatenate([r[key] for r in ranks]).astype(np.float64)  # noqa: E731
    centers, backbone = cat("shard_initial"), backbone0.astype(np.float64)
    m1, m2, steps = np.zeros_like(centers), np.zeros_like(centers), np.zeros((len(centers), 1))
    b1, b2 = np.zeros_like(backbone), np.zeros_like(backbone)
    lagging = False
    for step in range(case["steps"]):
        losses = {float(r[f"loss_{step}"]) for r in ranks}
        assert len(losses) == 1, (name, step, losses)
        kept = kept_classes(case, ranks, split, labels[step], step)
        features = inputs[step].astype(np.float64) @ backbone
        _, grad_f, grad_c = reference_step(case, ranks, step, features, centers, labels[step], kept)
        new_steps = steps.copy()
        new_steps[kept] += 1
        np.testing.assert_array_equal(cat(f"steps_{step}"), new_steps, err_msg=f"{name} step {step} step counts")
        g = grad_c[kept]
        expected = adamw_step(centers[kept], g, m1[kept], m2[kept], new_steps[kept], lr, beta1, beta2, eps, wd)
        bounds = step_bound(g, *expected[1:], new_steps[kept], lr, beta1, beta2, eps,
                            np.abs(g).max(axis=1, keepdims=True))
        got = [cat(f"{key}_{step}") for key in ("shard", "moment1", "moment2")]
        for value, want, bound, rtol, what in zip(got, expected, bounds, (storage, VALUE_RTOL, VALUE_RTOL),
                                                  ("centers", "moment1", "moment2")):
            _close(value[kept], want, bound, rtol, f"{name} step {step} {what}")
        untouched = np.setdiff1d(np.arange(case["num_classes"]), kept)
        for value, before in zip(got, (centers, m1, m2)):
            np.testing.assert_array_equal(value[untouched], before[untouched], err_msg=f"{name} step {step}")
        grad_b = inputs[step].astype(np.float64).T @ grad_f
        expected_b = adamw_step(backbone, grad_b, b1, b2, step + 1, lr, beta1, beta2, eps, wd)
        bounds_b = step_bound(grad_b, *expected_b[1:], step + 1, lr, beta1, beta2, eps, np.abs(grad_b).max())
        for r in ranks:
            got_b = [r[f"{key}_{step}"].astype(np.float64) for key in BACKBONE_KEYS]
            for value, want, bound, what in zip(got_b, expected_b, bounds_b, ("backbone", "moment1", "moment2")):
                _close(value, want, bound, VALUE_RTOL, f"{name} step {step} backbone {what}")
        centers, m1, m2, steps = got[0], got[1], got[2], new_steps
        lagging |= bool((new_steps[kept] < step + 1).any())  # a kept row that skipped an earlier step
        backbone, b1, b2 = (ranks[0][f"{key}_{step}"].astype(np.float64)
                            for key in BACKBONE_KEYS)
    # sampled: rows are bias-corrected by their own counts, not the global step (else: dense AdamW)
    assert lagging == (case["sample_ratio"] < 1), (name, "no kept row with a count below the global step")
