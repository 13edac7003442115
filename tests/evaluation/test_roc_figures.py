"""ROC pictures (matplotlib): valid PNGs, log FAR axis, TAR@FAR marks, AUC / accuracy / model and
set names in the image; a collapsed model reads as chance."""
from __future__ import annotations

import numpy as np
import pytest

from paddle_pfc.evaluation import roc

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def texts(fig) -> str:
    out = []
    for ax in fig.axes:
        out += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()] + [t.get_text() for t in ax.texts]
        legend = ax.get_legend()
        if legend is not None:
            out += [t.get_text() for t in legend.get_texts()]
    return "\n".join(out)


def test_auc_against_rectangles():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 400)
    scores = rng.normal(labels, 1.0)
    fpr, tpr, _ = roc.roc_curve(labels, scores)
    pos, neg = scores[labels == 1], scores[labels == 0]
    mann_whitney = np.mean(pos[:, None] > neg[None, :]) + 0.5 * np.mean(pos[:, None] == neg[None, :])
    assert roc.auc(fpr, tpr) == pytest.approx(mann_whitney, abs=1e-12)


def test_ijb_roc_png_has_a_log_axis_marks_and_names(tmp_path):
    import matplotlib.image

    rng = np.random.default_rng(1)
    labels = np.r_[np.ones(500), np.zeros(20000)].astype(int)
    scores = rng.normal(2.5 * labels, 1.0)
    fpr, tpr, _ = roc.roc_curve(labels, scores)
    fars = (1e-4, 1e-3, 1e-2, 1e-1)
    fig = roc.plot_roc(tmp_path / "roc.png", {"paddle:my_model/model.json": (fpr, tpr)}, "IJB-C 1:1 verification",
                       fars=fars)
    data = (tmp_path / "roc.png").read_bytes()
    assert data[:8] == PNG_SIGNATURE and matplotlib.image.imread(tmp_path / "roc.png").shape[2] in (3, 4)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_xlim()[0] == pytest.approx(1e-4)
    words = texts(fig)
    assert "IJB-C 1:1 verification" in words and "paddle:my_model/model.json" in words
    assert f"AUC {roc.auc(fpr, tpr):.4f}" in words
    marks = roc.tar_at_far(fpr, tpr, fars)
    for far, tar in marks.items():
        assert f"{100 * tar:.2f}%" in words
    points = [line for line in ax.get_lines() if line.get_linestyle() == "None"]
    assert points and np.allclose(points[0].get_ydata(), list(marks.values()))
    assert_marks_on_the_curve(points[0], fpr, tpr)


def assert_marks_on_the_curve(marks, fpr, tpr) -> None:
    """Every mark is a point of the ROC itself (its own FPR, not the target FAR it answers)."""
    vertices = set(zip(np.asarray(fpr).tolist(), np.asarray(tpr).tolist()))
    for x, y in zip(marks.get_xdata(), marks.get_ydata()):
        assert (float(x), float(y)) in vertices, (x, y)


def test_marks_of_a_coarse_far_lie_on_the_curve_where_they_were_read(tmp_path):
    # 150 impostor pairs: FAR steps of 1/150, so FAR 1e-2 is read at a point of FPR k/150,
    # and a mark drawn at x = 1e-2 would sit off the drawn curve
    rng = np.random.default_rng(3)
    labels = np.r_[np.ones(150), np.zeros(150)].astype(int)
    scores = rng.normal(1.8 * labels, 1.0)
    fpr, tpr, _ = roc.roc_curve(labels, scores)
    fig = roc.plot_roc(tmp_path / "roc.png", {"m": (fpr, tpr)}, "pairs", fars=(1e-2, 1e-1))
    marks = next(line for line in fig.axes[0].get_lines() if line.get_linestyle() == "None")
    assert_marks_on_the_curve(marks, fpr, tpr)
    points = roc.far_points(fpr, tpr, (1e-2, 1e-1))
    read = points[1e-2][0]
    assert read != 1e-2 and read * 150 == pytest.approx(round(read * 150))  # a multiple of 1/150
    assert list(marks.get_xdata()) == [x for x, _ in points.values()]
    assert list(marks.get_ydata()) == list(roc.tar_at_far(fpr, tpr, (1e-2, 1e-1)).values())


def test_bin_verification_picture_shows_accuracy_and_a_collapsed_model(tmp_path):
    good_fpr, good_tpr, _ = roc.roc_curve([0, 0, 0, 1, 1, 1], [0.1, 0.2, 0.6, 0.5, 0.8, 0.9])
    collapsed_fpr, collapsed_tpr, _ = roc.roc_curve([0, 1, 0, 1], [0.3, 0.3, 0.3, 0.3])  # one score for all
    sets = {"lfw": {"fpr": good_fpr, "tpr": good_tpr, "accuracy": 0.8333, "fold_accuracies": [1.0, 0.6667],
                    "no_roc": None},
            "agedb_30": {"fpr": collapsed_fpr, "tpr": collapsed_tpr, "accuracy": 0.5,
                         "fold_accuracies": [0.5, 0.5], "no_roc": None},
            "same_only": {"fpr": None, "tpr": None, "accuracy": 1.0, "fold_accuracies": [1.0, 1.0],
                          "no_roc": "all 4 pairs are genuine"}}
    fig = roc.plot_verification(tmp_path / "v.png", sets, "onnxruntime:model.onnx")
    assert (tmp_path / "v.png").read_bytes()[:8] == PNG_SIGNATURE
    roc_ax, fold_ax = fig.axes
    assert roc_ax.get_xscale() == "log"
    words = texts(fig)
    assert "onnxruntime:model.onnx" in words
    assert "agedb_30: AUC 0.5000, accuracy 50.00%" in words and "lfw: AUC 0.8889, accuracy 83.33%" in words
    assert "same_only: no ROC, all 4 pairs are genuine" in words
    # 3 impostor pairs: FAR steps of 1/3, so the mark at FAR 0.1 is the nearest point, said in the legend
    assert "lfw: AUC 0.8889, accuracy 83.33%, FAR resolution 3.3e-01: marks below it are its nearest point" in words
    long_reason = "all 4 pairs are genuine (same identity): a ROC needs both genuine and impostor pairs " * 2
    fig = roc.plot_verification(tmp_path / "w.png", {"same_only": dict(sets["same_only"], no_roc=long_reason)}, "m")
    note = next(t.get_text() for t in fig.axes[0].texts)
    assert max(len(line) for line in note.splitlines()) <= 100 and note.replace("\n", " ").startswith("same_only")
    collapsed = next(line for line in roc_ax.get_lines() if line.get_label().startswith("agedb_30"))
    np.testing.assert_allclose(collapsed.get_ydata(), collapsed.get_xdata(), atol=1e-12)  # on the chance line
    heights = [p.get_height() for p in fold_ax.patches]
    assert heights == pytest.approx([1.0, 0.6667, 0.5, 0.5, 1.0, 1.0])
    assert fold_ax.get_ylim()[0] < 0.5  # bars at 0.50 are visible


def test_pairs_that_separate_perfectly_show_a_curve_and_their_score_histograms(tmp_path):
    import warnings

    genuine, impostor = np.array([0.38, 0.45, 0.6, 0.72]), np.array([-0.1, 0.05, 0.2, 0.315, 0.1])
    cosines = np.r_[genuine, impostor]
    same = np.r_[np.ones(4, bool), np.zeros(5, bool)]
    fpr, tpr, _ = roc.roc_curve(same.astype(int), cosines)
    sets = {"test": {"fpr": fpr, "tpr": tpr, "accuracy": 1.0, "fold_accuracies": [1.0, 1.0], "no_roc": None,
                     "cosines": cosines, "issame": same, "threshold": 0.3475}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "identical low and high xlims"
        fig = roc.plot_verification(tmp_path / "v.png", sets, "m")
    roc_ax, _, hist_ax = fig.axes
    assert roc_ax.get_xlim() == pytest.approx((0.1, 1.0))
    words = texts(fig)
    assert "test: genuine (4)" in words and "test: impostor (5)" in words
    assert "test: threshold 0.347" in words  # 0.3475 in binary is below it
    heights = sorted(float(p.get_path().vertices[:, 1].sum()) for p in hist_ax.patches)
    assert len(hist_ax.patches) == 2 and heights[0] > 0  # a genuine and an impostor histogram, both drawn
    lo, hi = hist_ax.get_xlim()
    assert lo == pytest.approx(-0.15) and hi == pytest.approx(0.77)
    threshold_line = next(line for line in hist_ax.get_lines() if line.get_label().startswith("test: threshold"))
    assert list(threshold_line.get_xdata()) == [0.3475, 0.3475]
