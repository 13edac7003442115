"""ROC curves: computation (scikit-learn's ``roc_curve`` semantics, pure numpy), TAR at FAR as
insightface reports it, CSV output and PNG plots drawn with OpenCV (no matplotlib).

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
from typing import Mapping, Sequence

import numpy as np

__all__ = ["DEFAULT_FARS", "roc_curve", "tar_at_far", "write_roc_csv", "plot_roc", "plot_verification",
           "verification_curves"]

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
    fpr, tpr = np.asarray(fpr, np.float64)[::-1], np.asarray(tpr, np.float64)[::-1]
    return {float(far): float(tpr[int(np.argmin(np.abs(fpr - far)))]) for far in fars}


def write_roc_csv(path: str | os.PathLike, fpr, tpr, thresholds) -> None:
    """``fpr,tpr,threshold`` rows (the first threshold is ``inf``)."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["fpr", "tpr", "threshold"])
        for a, b, t in zip(np.asarray(fpr), np.asarray(tpr), np.asarray(thresholds)):
            w.writerow([repr(float(a)), repr(float(b)), "inf" if math.isinf(t) else repr(float(t))])


# ------------------------------------------------------------------------------------ plotting
_COLORS = [(200, 80, 30), (40, 40, 200), (40, 150, 40), (150, 40, 150), (30, 150, 200), (90, 90, 90)]
_W, _H, _L, _R, _T, _B = 720, 520, 80, 30, 50, 70  # canvas and margins (pixels)


def _canvas(title: str):
    import cv2

    img = np.full((_H, _W, 3), 255, np.uint8)
    cv2.putText(img, title, (_L, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 0), 1, cv2.LINE_AA)
    return img


def _frame(img, xlabel: str, ylabel: str) -> None:
    import cv2

    cv2.rectangle(img, (_L, _T), (_W - _R, _H - _B), (0, 0, 0), 1)
    cv2.putText(img, xlabel, (_L + (_W - _L - _R) // 2 - 60, _H - 20), cv2.FONT_HERSHEY_SIMPLEX, 0.5,
                (0, 0, 0), 1, cv2.LINE_AA)
    cv2.putText(img, ylabel, (5, _T - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 1, cv2.LINE_AA)


def _write_png(path: str | os.PathLike, img) -> None:
    import cv2

    if not cv2.imwrite(os.fspath(path), img):
        raise OSError(f"{path}: could not write the PNG (does the folder exist?)")


def plot_roc(path: str | os.PathLike, curves: Mapping[str, tuple[np.ndarray, np.ndarray]],
             title: str = "ROC", log_far: bool = True, far_min: float = 1e-6) -> None:
    """PNG of TPR against FPR for each ``name: (fpr, tpr)`` (log FPR axis from ``far_min`` to 1
    by default, as IJB plots are drawn)."""
    import cv2

    img = _canvas(title)
    x0, x1, y0, y1 = _L, _W - _R, _H - _B, _T
    lo = math.log10(far_min) if log_far else 0.0

    def px(f):
        f = np.asarray(f, np.float64)
        t = (np.log10(np.clip(f, far_min, 1.0)) - lo) / -lo if log_far else f
        return (x0 + t * (x1 - x0)).round().astype(np.int32)

    def py(v):
        return (y0 + np.asarray(v, np.float64) * (y1 - y0)).round().astype(np.int32)

    ticks = [10.0 ** e for e in range(int(lo), 1)] if log_far else [i / 5 for i in range(6)]
    for t in ticks:
        x = int(px([t])[0])
        cv2.line(img, (x, y0), (x, y1), (225, 225, 225), 1)
        text = f"1e{int(round(math.log10(t)))}" if log_far else f"{t:.1f}"
        cv2.putText(img, text, (x - 15, y0 + 18), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 0), 1, cv2.LINE_AA)
    for v in [i / 5 for i in range(6)]:
        y = int(py([v])[0])
        cv2.line(img, (x0, y), (x1, y), (225, 225, 225), 1)
        cv2.putText(img, f"{v:.1f}", (x0 - 35, y + 4), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 0), 1, cv2.LINE_AA)
    _frame(img, "False Positive Rate" + (" (log)" if log_far else ""), "True Positive Rate")
    for k, (name, (fpr, tpr)) in enumerate(curves.items()):
        color = _COLORS[k % len(_COLORS)]
        pts = np.stack([px(fpr), py(tpr)], axis=1).reshape(-1, 1, 2)
        cv2.polylines(img, [pts], False, color, 2, cv2.LINE_AA)
        cv2.putText(img, name, (x1 - 200, y0 - 15 - 20 * k), cv2.FONT_HERSHEY_SIMPLEX, 0.5, color, 1,
                    cv2.LINE_AA)
    _write_png(path, img)


def plot_verification(path: str | os.PathLike, curves: Mapping[str, tuple[np.ndarray, np.ndarray]],
                      fold_accuracies: Mapping[str, Sequence[float]]) -> None:
    """One PNG: the ROC of each set (linear axes) above a bar chart of its per-fold accuracy."""
    import cv2

    top, bottom = _plot_to_array(curves, "ROC", log_far=False), _canvas("accuracy per fold")
    x0, x1, y0, y1 = _L, _W - _R, _H - _B, _T
    accs = [a for v in fold_accuracies.values() for a in v]
    low = min(0.5, math.floor(min(accs) * 10) / 10) if accs else 0.5
    for v in np.linspace(low, 1.0, 6):
        y = int(round(y0 + (v - low) / (1.0 - low) * (y1 - y0)))
        cv2.line(bottom, (x0, y), (x1, y), (225, 225, 225), 1)
        cv2.putText(bottom, f"{v:.2f}", (x0 - 40, y + 4), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 0), 1,
                    cv2.LINE_AA)
    _frame(bottom, "fold (one group of bars per set)", "accuracy")
    groups = list(fold_accuracies.items())
    slots = sum(len(v) + 1 for _, v in groups) or 1
    width = (x1 - x0) / slots
    slot = 0.5
    for k, (name, values) in enumerate(groups):
        color = _COLORS[k % len(_COLORS)]
        left = slot
        for a in values:
            xa = int(x0 + slot * width)
            ya = int(round(y0 + (max(a, low) - low) / (1.0 - low) * (y1 - y0)))
            cv2.rectangle(bottom, (xa, ya), (int(xa + 0.8 * width), y0), color, -1)
            slot += 1
        cv2.putText(bottom, name, (int(x0 + left * width), y0 + 18), cv2.FONT_HERSHEY_SIMPLEX, 0.45, color,
                    1, cv2.LINE_AA)
        slot += 1
    _write_png(path, np.concatenate([top, bottom], axis=0))


def _plot_to_array(curves, title: str, log_far: bool) -> np.ndarray:
    import tempfile

    import cv2

    with tempfile.TemporaryDirectory() as tmp:
        png = os.path.join(tmp, "roc.png")
        plot_roc(png, curves, title, log_far=log_far)
        return cv2.imread(png)


def verification_curves(embeddings: np.ndarray, issame, nrof_folds: int = 10
                        ) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """``(fpr, tpr, fold_accuracies)`` of ``[2P, D]`` flip-summed pair embeddings: the ROC of
    the cosine similarity of each pair, and the test accuracy of each fold of the protocol of
    :func:`paddle_pfc.evaluation.verification.evaluate_pairs` (their mean is its ``accuracy``)."""
    from paddle_pfc.evaluation.verification import THRESHOLDS, kfold_splits

    emb = np.asarray(embeddings, np.float64)
    same = np.asarray(issame, bool)
    norms = np.linalg.norm(emb, axis=1, keepdims=True)
    unit = emb / np.where(norms == 0.0, 1.0, norms)
    dist = np.sum(np.square(unit[0::2] - unit[1::2]), axis=1)
    fpr, tpr, _ = roc_curve(same.astype(np.int64), -dist)  # smaller distance = more similar
    correct = (dist[None, :] < THRESHOLDS[:, None]) == same[None, :]
    folds = []
    for train, test in kfold_splits(len(dist), nrof_folds):
        best = int(np.argmax(correct[:, train].sum(axis=1)))
        folds.append(float(np.count_nonzero(correct[best, test])) / test.size)
    return fpr, tpr, folds
