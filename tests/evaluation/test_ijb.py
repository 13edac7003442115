"""IJB 1:1 protocol on a synthetic set written in insightface's release layout, checked against an
independent numpy computation (alignment by the known inverse warp, template aggregation by loops,
ROC by brute force over thresholds)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from helpers.ijb_set import SIZE, build_ijb
from launcher import REPO, launch
from paddle_pfc.evaluation import ijb, roc

FARS = [0.01, 0.05, 0.1, 0.2, 0.5]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    from paddle_pfc.backbones.state import random_state
    from paddle_pfc.deploy.export import export_backbone

    out = tmp_path_factory.mktemp("model")
    export_backbone("mobilefacenet", 16, SIZE, random_state("mobilefacenet", 16, SIZE, seed=3), out)
    return out


@pytest.fixture(scope="module")
def ijb_set(tmp_path_factory):
    root = tmp_path_factory.mktemp("ijb") / "IJBC"
    truth, pairs = build_ijb(root)
    return root, truth, pairs


def reference_features(root: Path, truth, model_dir: Path) -> np.ndarray:
    """Each face aligned by the known inverse of its warp, embedded + flipped with Paddle Inference."""
    from paddle_pfc.deploy.inference import FaceEmbedder

    emb = FaceEmbedder(model_dir)
    out = []
    for face in truth:
        loose = cv2.cvtColor(cv2.imread(str(root / "loose_crop" / face["name"])), cv2.COLOR_BGR2RGB)
        aligned = cv2.warpAffine(loose, cv2.invertAffineTransform(face["m"]), (SIZE, SIZE), flags=cv2.INTER_LINEAR)
        x = ((aligned.astype(np.float32) - 127.5) / 128.0).transpose(2, 0, 1)[None]
        out.append(emb.forward(x)[0] + emb.forward(np.ascontiguousarray(x[:, :, :, ::-1]))[0])
    return np.array(out, np.float64)


def reference_scores(truth, features: np.ndarray, pairs) -> np.ndarray:
    """insightface's aggregation written as plain loops: detector-weighted faces, media mean, template sum."""
    template_feats = {}
    for t in sorted({f["template"] for f in truth}):
        medias = {}
        for f, x in zip(truth, features):
            if f["template"] == t:
                medias.setdefault(f["media"], []).append(x * f["score"])
        total = sum(np.mean(v, axis=0) for v in medias.values())
        template_feats[t] = total / np.linalg.norm(total)
    return np.array([float(template_feats[a] @ template_feats[b]) for a, b, _ in pairs])


def reference_tar_at_far(labels: np.ndarray, scores: np.ndarray, fars) -> dict[float, float]:
    """Brute force: one ROC point per distinct score (accept score >= t) after (0, 0); points lying on
    the straight line between their neighbours removed; nearest FPR, highest TPR among ties."""
    pos, neg = scores[labels == 1], scores[labels == 0]
    points = [(0.0, 0.0)] + [(float(np.mean(neg >= t)), float(np.mean(pos >= t)))
                             for t in sorted(set(scores.tolist()), reverse=True)]
    counts = [(round(f * len(neg)), round(p * len(pos))) for f, p in points]
    kept = [points[0]]
    for i in range(1, len(points) - 1):
        (f0, p0), (f1, p1), (f2, p2) = counts[i - 1], counts[i], counts[i + 1]
        if i == 1 or (f2 - f1, p2 - p1) != (f1 - f0, p1 - p0):  # sklearn keeps its first point
            kept.append(points[i])
    kept.append(points[-1])
    out = {}
    for far in fars:
        best = min(abs(f - far) for f, _ in kept)
        out[far] = max(p for f, p in kept if abs(f - far) == best)
    return out


def test_roc_matches_brute_force():
    rng = np.random.default_rng(0)
    for trial in range(30):
        n = int(rng.integers(5, 300))
        labels = rng.integers(0, 2, n)
        labels[:2] = [0, 1]
        scores = np.round(rng.normal(labels * rng.uniform(0, 2), 1.0), int(rng.integers(1, 3)))  # ties
        fpr, tpr, thr = roc.roc_curve(labels, scores)
        assert fpr[0] == tpr[0] == 0 and np.isinf(thr[0]) and fpr[-1] == tpr[-1] == 1
        assert np.all(np.diff(fpr) >= 0) and np.all(np.diff(tpr) >= 0)
        fars = [1e-3, 0.01, 0.05, 0.1, 0.3, 0.7]
        assert roc.tar_at_far(fpr, tpr, fars) == pytest.approx(reference_tar_at_far(labels, scores, fars)), trial


def test_protocol_arithmetic_against_independent_reference(ijb_set, model_dir):
    from paddle_pfc.deploy.inference import FaceEmbedder

    root, truth, pairs = ijb_set
    protocol = ijb.read_protocol(root)
    assert protocol.prefix == "ijbc" and protocol.images.tolist() == [f["name"] for f in truth]
    np.testing.assert_allclose(protocol.landmarks, [f["points"] for f in truth], atol=1e-5)
    feats = ijb.embed_faces(protocol, FaceEmbedder(model_dir).forward, SIZE, batch_size=7)
    reference = reference_features(root, truth, model_dir)
    np.testing.assert_allclose(feats, reference, rtol=1e-3, atol=2e-3 * np.abs(reference).max())
    result = ijb.evaluate_features(protocol, feats, FARS)
    expected_scores = reference_scores(truth, feats.astype(np.float64), pairs)
    np.testing.assert_allclose(result.scores, expected_scores, atol=1e-9)
    labels = np.array([lab for _, _, lab in pairs])
    assert result.tar_at_far == pytest.approx(reference_tar_at_far(labels, expected_scores, FARS))
    assert result.num_templates == 24 and result.num_pairs == len(pairs) == 276
    # the embedding carries identity: genuine pairs score higher than impostors on average
    assert expected_scores[labels == 1].mean() > expected_scores[labels == 0].mean()


def run_tool(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "tools" / "eval_ijb.py"), *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_tool_writes_table_csv_and_plot(ijb_set, model_dir, tmp_path):
    root, truth, pairs = ijb_set
    proc = run_tool(["--model", str(model_dir), "--root", str(root), "--out", str(tmp_path / "out"),
                     "--batch-size", "5", "--far", *map(str, FARS)])
    assert proc.returncode == 0, proc.stderr
    assert f"IJB-C embedding (rank 0/1): {len(truth)}/{len(truth)} (100%)" in proc.stdout
    assert "faces/s" in proc.stdout
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    feats = reference_features(root, truth, model_dir)
    labels = np.array([lab for _, _, lab in pairs])
    expected = reference_tar_at_far(labels, reference_scores(truth, feats, pairs), FARS)
    assert [result["tar_at_far"][f"{far:g}"] for far in FARS] == pytest.approx([expected[f] for f in FARS])
    csv = np.genfromtxt(tmp_path / "out" / "roc.csv", delimiter=",", names=True)
    assert csv["fpr"][0] == 0 and csv["fpr"][-1] == 1 and np.all(np.diff(csv["tpr"]) >= 0)
    assert result["auc"] == pytest.approx(roc.auc(csv["fpr"], csv["tpr"]), abs=1e-9)
    png = cv2.imread(str(tmp_path / "out" / "roc.png"))
    assert png is not None and png.shape[0] > 100 and (png < 250).any()


@pytest.mark.multirank
def test_two_ranks_give_the_single_rank_result(ijb_set, model_dir, tmp_path):
    root, _, _ = ijb_set
    single = run_tool(["--model", str(model_dir), "--root", str(root), "--out", str(tmp_path / "one")])
    assert single.returncode == 0, single.stderr
    launch(REPO / "tools" / "eval_ijb.py", 2, ["--model", str(model_dir), "--root", str(root),
                                               "--out", str(tmp_path / "two")], tmp_path / "log", timeout=300)
    one = json.loads((tmp_path / "one" / "result.json").read_text())
    two = json.loads((tmp_path / "two" / "result.json").read_text())
    assert two["tar_at_far"] == pytest.approx(one["tar_at_far"], abs=1e-12)
    parts = [np.load(tmp_path / "two" / "ijb_parts" / f"rank{r}.npz") for r in range(2)]
    assert int(parts[0]["stop"]) == int(parts[1]["start"]) and int(parts[1]["stop"]) == one["faces"]


def test_bad_protocol_files_name_the_line(ijb_set, tmp_path):
    import shutil

    root, _, _ = ijb_set
    bad = tmp_path / "IJBB"
    shutil.copytree(root, bad)
    for name in (bad / "meta").iterdir():
        name.rename(name.with_name(name.name.replace("ijbc_", "ijbb_")))
    assert ijb.read_protocol(bad).prefix == "ijbb"
    lmk = bad / "meta" / "ijbb_name_5pts_score.txt"
    lines = lmk.read_text().splitlines()
    lmk.write_text("\n".join(lines[:2] + [lines[2].rsplit(" ", 1)[0]] + lines[3:]) + "\n")
    with pytest.raises(ijb.IJBError, match=r"ijbb_name_5pts_score.txt:3: expected 12 columns"):
        ijb.read_protocol(bad)
    lmk.write_text("\n".join(lines[1:]) + "\n")
    missing = lines[0].split()[0]
    with pytest.raises(ijb.IJBError, match=f"no landmarks for image '{missing}'"):
        ijb.read_protocol(bad)
    lmk.write_text("\n".join(lines) + "\n")
    pairs = bad / "meta" / "ijbb_template_pair_label.txt"
    pairs.write_text("101 99999 1\n")
    with pytest.raises(ijb.IJBError, match=r"ijbb_template_pair_label.txt:1: template 99999 has no face"):
        ijb.read_protocol(bad)
    template = next(line.split()[1] for line in (bad / "meta" / "ijbb_face_tid_mid.txt").read_text().splitlines())
    pairs.write_text(f"{template} {template} 1\n{template} {template} 1\n")
    with pytest.raises(ijb.IJBError, match=r"template_pair_label.txt: a ROC needs genuine \(label 1\) and "
                                           r"impostor \(label 0\) pairs, got 2 genuine and 0 impostor"):
        ijb.read_protocol(bad)
    with pytest.raises(ijb.IJBError, match="neither ijbc_face_tid_mid.txt nor ijbb"):
        ijb.read_protocol(tmp_path)
