"""ROC curves: computation (scikit-learn's ``roc_curve`` semantics, pure numpy), TAR at FAR as
insightface reports it, AUC, CSV output and PNG plots (matplotlib, imported only to plot).

* :func:`roc_curve` ``(labels, scores) -> (fpr, tpr, thresholds)``: one point per distinct score
  (a pair is accepted when ``score >= threshold``), collinear intermediate points dropped, a
  first point ``(0, 0)`` at threshold ``+inf`` -- the curve ``sklearn.metrics.roc_curve`` returns
  with its defaults, which insightface's IJB evaluation uses.
* :func:`tar_at_far`: for each target FAR, the TPR of the curve point whose FPR is closest to
  it, the highest TPR among equally close points (insightface: ``argmin |fpr - far|`` over the
  reversed curve). Not an interpolation: at a FAR below ``1 / negatives`` it is the nearest point.
"""
from __future__ import annotations

import csv
import math
import os
from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["DEFAULT_FARS", "roc_curve", "tar_at_far", "far_points", "auc", "no_roc_reason", "write_roc_csv", "plot_roc",
           "plot_verification", "verification_curves"]

DEFAULT_FARS = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1)


def roc_curve(labels, scores) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(fpr, tpr, thresholds)`` of binary ``labels`` (1 = genuine) ranked by ``scores``."""
    y = np.asarray(labels)
    s = np.asarray(scores, dtype=np.float64)
    if y.ndim != 1 or s.ndim != 1 or y.shape != s.shape:
        raise ValueError(f"labels and scores must be 1-D of one length, got {y.shape} and {s.shape}")
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("labels must be 0/1")
    if not np.all(np.isfinite(s)):
        raise ValueError(f"scores contain {int(np.count_nonzero(~np.isfinite(s)))} non-finite values")
    y = y.astype(np.int64)
    positives, negatives = int(y.sum()), int(y.size - y.sum())
    if positives == 0 or negatives == 0:
        raise ValueError(f"a ROC needs genuine and impostor pairs, got {positives} genuine and "
                         f"{negatives} impostor")
    order = np.argsort(-s, kind="stable")
    s, y = s[order], y[order]
    last_of_value = np.r_[np.flatnonzero(s[1:] != s[:-1]), s.size - 1]
    tps = np.cumsum(y)[last_of_value]
    fps = last_of_value + 1 - tps
    thresholds = s[last_of_value]
    if tps.size > 2:  # drop points on a straight segment between their neighbours
        bend = (fps[2:] - 2 * fps[1:-1] + fps[:-2] != 0) | (tps[2:] - 2 * tps[1:-1] + tps[:-2] != 0)
        keep = np.r_[True, bend, True]
        tps, fps, thresholds = tps[keep], fps[keep], thresholds[keep]
    tps, fps = np.r_[0, tps], np.r_[0, fps]
    thresholds = np.r_[np.inf, thresholds]
    return fps / negatives, tps / positives, thresholds


def tar_at_far(fpr: np.ndarray, tpr: np.ndarray, fars: Sequence[float] = DEFAULT_FARS) -> dict[float, float]:
    """``{far: tar}`` read off the curve as insightface does (see the module doc)."""
    return {far: tar for far, (_, tar) in far_points(fpr, tpr, fars).items()}


def far_points(fpr: np.ndarray, tpr: np.ndarray, fars: Sequence[float] = DEFAULT_FARS
               ) -> dict[float, tuple[float, float]]:
    """``{far: (fpr, tpr)}``: the curve point :func:`tar_at_far` reads for each target FAR (its own
    FPR is the nearest to ``far``, equal to it only where the impostor count allows)."""
    fpr, tpr = np.asarray(fpr, np.float64)[::-1], np.asarray(tpr, np.float64)[::-1]
    points = {}
    for far in fars:
        nearest = int(np.argmin(np.abs(fpr - far)))
        points[float(far)] = (float(fpr[nearest]), float(tpr[nearest]))
    return points


def write_roc_csv(path: str | os.PathLike, fpr, tpr, thresholds) -> None:
    """``fpr,tpr,threshold`` rows (the first threshold is ``inf``)."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["fpr", "tpr", "threshold"])
        for a, b, t in zip(np.asarray(fpr), np.asarray(tpr), np.asarray(thresholds)):
            w.writerow([repr(float(a)), repr(float(b)), "inf" if math.isinf(t) else repr(float(t))])


def auc(fpr, tpr) -> float:
    """Area under the ROC (trapezoids over the points, linear axes)."""
    fpr, tpr = np.asarray(fpr, np.float64), np.asarray(tpr, np.float64)
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2.0))


def no_roc_reason(issame) -> str | None:
    """Why pairs with ground truth ``issame`` have no ROC (one kind of pair only), else ``None``."""
    same = np.asarray(issame, bool)
    genuine = int(np.count_nonzero(same))
    if genuine == 0 or genuine == same.size:
        kind = "genuine (same identity)" if genuine else "impostor (different identities)"
        return (f"all {same.size} pairs are {kind}: a ROC needs both genuine and impostor pairs "
                "(accuracy is still reported)")
    return None


# ------------------------------------------------------------------------------------ plotting
# matplotlib (Agg, through Figure objects: no pyplot state, no display) is imported only here.

def _figure(rows: int):
    from matplotlib.figure import Figure

    return Figure(figsize=(8.0, 5.5 * rows), dpi=100, layout="constrained")


def _save(fig, path: str | os.PathLike) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)) or ".", exist_ok=True)
    fig.savefig(os.fspath(path), format="png")


def _log_path(fpr: np.ndarray, tpr: np.ndarray, lo: float) -> tuple[np.ndarray, np.ndarray]:
    """The ROC's points with ``fpr > 0`` plus its straight segments sampled on a log grid from
    ``lo`` to 1, so that a segment (e.g. a collapsed model's diagonal) shows on a log axis."""
    grid = np.logspace(math.log10(lo), 0.0, 400)
    keep = fpr > 0
    x = np.concatenate([fpr[keep], grid])
    y = np.concatenate([tpr[keep], np.interp(grid, fpr, tpr)])
    order = np.lexsort((y, x))
    return x[order], y[order]


def _draw_roc(ax, curves: Mapping[str, tuple[np.ndarray, np.ndarray]], fars: Sequence[float],
              notes: Mapping[str, str] | None = None, title: str = "") -> None:
    """ROCs on a log FAR axis with each curve's TAR@FAR marked; ``notes``: extra legend text."""
    positive = [float(np.min(f[f > 0])) for f, _ in (tuple(np.asarray(a) for a in c) for c in curves.values())
                if np.any(f > 0)]
    lo = 10.0 ** math.floor(math.log10(min(positive))) if positive else min(fars)
    lo = min(lo, 0.1)  # a decade at least: curves that separate perfectly have no FPR below 1
    ax.set_xscale("log")
    ax.set_xlim(lo, 1.0)
    ax.set_ylim(0.0, 1.01)
    chance = np.logspace(math.log10(lo), 0.0, 200)
    ax.plot(chance, chance, color="0.6", linestyle=":", linewidth=1, label="chance (TAR = FAR)")
    shown = [far for far in fars if lo <= far <= 1.0]
    for k, (name, (fpr, tpr)) in enumerate(curves.items()):
        fpr, tpr = np.asarray(fpr, np.float64), np.asarray(tpr, np.float64)
        label = f"{name}: AUC {auc(fpr, tpr):.4f}"
        if notes and name in notes:
            label += f", {notes[name]}"
        step = float(np.min(fpr[fpr > 0])) if np.any(fpr > 0) else None  # 1 / impostor pairs
        if step is not None and any(far < step for far in shown):
            label += f", FAR resolution {step:.1e}: marks below it are its nearest point"
        line, = ax.plot(*_log_path(fpr, tpr, lo), linewidth=1.8, label=label)
        # each mark where it lies on the curve (its own FPR; a point at FPR 0 on the axis' left edge)
        marks = [(max(x, lo), tar) for x, tar in far_points(fpr, tpr, shown).values()]
        ax.plot([x for x, _ in marks], [tar for _, tar in marks], "o", color=line.get_color(), markersize=5)
        for x, tar in marks:
            ax.annotate(f"{100 * tar:.2f}%", (x, tar), textcoords="offset points",
                        xytext=(4, -12 - 11 * k if tar > 0.5 else 6 + 11 * k), fontsize=7,
                        color=line.get_color())
    for far in shown:
        ax.axvline(far, color="0.85", linewidth=0.8, zorder=0)
    ax.set_xlabel("False Accept Rate (log)")
    ax.set_ylabel("True Accept Rate")
    ax.grid(True, which="major", axis="y", color="0.9")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="lower right", fontsize=8)


def plot_roc(path: str | os.PathLike, curves: Mapping[str, tuple[np.ndarray, np.ndarray]],
             title: str = "ROC", fars: Sequence[float] = DEFAULT_FARS):
    """PNG of TAR against FAR (log axis) for each ``label: (fpr, tpr)``, with the TAR at each of
    ``fars`` marked and the AUC in the legend; returns the matplotlib ``Figure``."""
    fig = _figure(1)
    _draw_roc(fig.add_subplot(1, 1, 1), curves, fars, title=title)
    _save(fig, path)
    return fig


def _draw_histograms(ax, sets: Mapping[str, Mapping]) -> None:
    """Histograms of each set's genuine and impostor cosine similarities (``cosines``, ``issame``)
    with its ``threshold`` (when given) as a dashed line."""
    every = np.concatenate([np.asarray(v["cosines"], np.float64) for v in sets.values()])
    low, high = float(every.min()), float(every.max())
    bins = np.linspace(low, high, 41) if high > low else np.array([low - 0.01, high + 0.01])
    for k, (name, v) in enumerate(sets.items()):
        cosines, same = np.asarray(v["cosines"], np.float64), np.asarray(v["issame"], bool)
        color = f"C{k}"
        for part, style, kind in ((same, "-", "genuine"), (~same, ":", "impostor")):
            if part.any():
                ax.hist(cosines[part], bins=bins, histtype="step", linestyle=style, color=color, linewidth=1.5,
                        label=f"{name}: {kind} ({int(part.sum()):,})")
        if v.get("threshold") is not None:
            ax.axvline(v["threshold"], color=color, linestyle="--", linewidth=1,
                       label=f"{name}: threshold {v['threshold']:.3f}")
    pad = 0.05
    ax.set_xlim(max(-1.0, low - pad), min(1.0, high + pad))
    ax.set_xlabel("cosine similarity of the pair")
    ax.set_ylabel("pairs")
    ax.set_title("genuine (solid) and impostor (dotted) pairs", fontsize=10)
    ax.legend(loc="upper left", fontsize=7)


def plot_verification(path: str | os.PathLike, sets: Mapping[str, Mapping], model: str,
                      fars: Sequence[float] = (1e-3, 1e-2, 1e-1)):
    """One PNG for .bin sets: their ROCs (log FAR axis, TAR@FAR marks, AUC and accuracy in the
    legend) beside the histograms of their genuine and impostor scores (when ``cosines`` are given),
    above their accuracy per fold. ``sets``: name -> {``accuracy``, ``fold_accuracies``,
    ``fpr``/``tpr`` (``None`` without a ROC), ``no_roc`` (why, or ``None``), optionally
    ``cosines``/``issame``/``threshold``}. Returns the Figure."""
    scored = {n: v for n, v in sets.items() if v.get("cosines") is not None}
    fig = _figure(2)
    if scored:
        fig.set_size_inches(15.0, 11.0)
        grid = fig.add_gridspec(2, 2)
        top, bottom = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[1, :])
        _draw_histograms(fig.add_subplot(grid[0, 1]), scored)
    else:
        top, bottom = fig.add_subplot(2, 1, 1), fig.add_subplot(2, 1, 2)
    curves = {n: (v["fpr"], v["tpr"]) for n, v in sets.items() if v.get("fpr") is not None}
    notes = {n: f"accuracy {100 * v['accuracy']:.2f}%" for n, v in sets.items()}
    title = f"{model}\nverification ROC: {', '.join(sets)}"
    if curves:
        _draw_roc(top, curves, fars, notes, title)
    else:
        top.set_axis_off()
        top.set_title(title, fontsize=10)
    missing = [f"{n}: no ROC, {v['no_roc']}" for n, v in sets.items() if v.get("fpr") is None]
    if missing:
        import textwrap

        lines = [part for note in missing for part in textwrap.wrap(note, 100)]  # inside the plot's width
        top.text(0.02, 0.98, "\n".join(lines), transform=top.transAxes, va="top", fontsize=8, color="firebrick")
    accs = [a for v in sets.values() for a in v["fold_accuracies"]]
    low = max(0.0, math.floor(min(accs) * 20) / 20 - 0.05) if accs else 0.0
    x = 0
    ticks, names = [], []
    for name, v in sets.items():
        folds = list(v["fold_accuracies"])
        xs = np.arange(x, x + len(folds))
        bars = bottom.bar(xs, folds, width=0.8, label=f"{name}: {100 * v['accuracy']:.2f}%")
        bottom.hlines(v["accuracy"], xs[0] - 0.4, xs[-1] + 0.4, colors=bars.patches[0].get_facecolor(),
                      linestyles="--", linewidth=1)
        ticks.append(float(xs.mean()))
        names.append(name)
        x += len(folds) + 1
    bottom.set_xticks(ticks, names)
    bottom.set_ylim(low, 1.0)
    bottom.set_ylabel("test accuracy per fold")
    bottom.set_title("accuracy per fold (dashed: mean)", fontsize=10)
    bottom.legend(loc="lower right", fontsize=8)
    _save(fig, path)
    return fig


def verification_curves(embeddings: np.ndarray, issame, nrof_folds: int = 10
                        ) -> tuple[np.ndarray | None, np.ndarray | None, list[float]]:
    """``(fpr, tpr, fold_accuracies)`` of ``[2P, D]`` flip-summed pair embeddings: the ROC of
    the cosine similarity of each pair (``None, None`` when the pairs are of one kind, see
    :func:`no_roc_reason`), and the test accuracy of each fold of the protocol of
    :func:`paddle_pfc.evaluation.verification.evaluate_pairs` (their mean is its ``accuracy``)."""
    from paddle_pfc.evaluation.verification import THRESHOLDS, kfold_splits

    emb = np.asarray(embeddings, np.float64)
    same = np.asarray(issame, bool)
    norms = np.linalg.norm(emb, axis=1, keepdims=True)
    unit = emb / np.where(norms == 0.0, 1.0, norms)
    dist = np.sum(np.square(unit[0::2] - unit[1::2]), axis=1)
    fpr = tpr = None
    if no_roc_reason(same) is None:
        fpr, tpr, _ = roc_curve(same.astype(np.int64), -dist)  # smaller distance = more similar
    correct = (dist[None, :] < THRESHOLDS[:, None]) == same[None, :]
    folds = []
    for train, test in kfold_splits(len(dist), nrof_folds):
        best = int(np.argmax(correct[:, train].sum(axis=1)))
        folds.append(float(np.count_nonzero(correct[best, test])) / test.size)
    return fpr, tpr, folds
