"""Tests for paddle_pfc.evaluation.verification (insightface 10-fold verification protocol)."""
import math

import numpy as np
import pytest

from paddle_pfc.evaluation.verification import THRESHOLDS, VerificationResult, evaluate_pairs, kfold_splits


# ---------------------------------------------------------------------------
# Independent brute-force reference: explicit loops, np.array_split folds.
# ---------------------------------------------------------------------------
def _reference(embeddings, issame, nrof_folds=10):
    emb = np.asarray(embeddings, dtype=np.float64)
    same = np.asarray(issame, dtype=bool)
    p = len(same)
    unit = np.zeros_like(emb)
    for r in range(emb.shape[0]):
        n = math.sqrt(sum(float(v) * float(v) for v in emb[r]))
        unit[r] = emb[r] / n if n > 0 else emb[r]
    dist = np.array([np.sum((unit[2 * i] - unit[2 * i + 1]) ** 2) for i in range(p)])
    thresholds = [k * 0.01 for k in range(400)]
    folds = np.array_split(np.arange(p), nrof_folds)
    accs, bests = [], []
    for k in range(nrof_folds):
        test = folds[k]
        train = np.concatenate([folds[j] for j in range(nrof_folds) if j != k])
        best_acc, best_t = -1.0, None
        for t in thresholds:
            acc = sum((dist[i] < t) == same[i] for i in train) / len(train)
            if acc > best_acc:  # strict: first maximum wins
                best_acc, best_t = acc, t
        accs.append(sum((dist[i] < best_t) == same[i] for i in test) / len(test))
        bests.append(best_t)
    return float(np.mean(accs)), float(np.std(accs)), float(np.mean(bests))


def _random_pairs(rng, p, d=16, noise=0.8):
    """Pairs of noisy copies (same) or independent vectors (different)."""
    same = rng.random(p) < 0.5
    a = rng.normal(size=(p, d))
    b = np.where(same[:, None], a + noise * rng.normal(size=(p, d)), rng.normal(size=(p, d)))
    emb = np.empty((2 * p, d))
    emb[0::2], emb[1::2] = a, b
    return emb, same


def test_thresholds_match_insightface():
    assert THRESHOLDS.shape == (400,)
    assert THRESHOLDS[0] == 0.0 and abs(THRESHOLDS[-1] - 3.99) < 1e-12


def test_perfectly_separable_gives_accuracy_one():
    rng = np.random.default_rng(0)
    p, d = 40, 8
    a = rng.normal(size=(p, d))
    same = np.arange(p) % 2 == 0
    b = np.where(same[:, None], a, -a)  # dist 0 for same, 4 (max) for different
    emb = np.empty((2 * p, d))
    emb[0::2], emb[1::2] = a, b
    res = evaluate_pairs(emb, same)
    assert isinstance(res, VerificationResult)
    assert res.accuracy == 1.0 and res.accuracy_std == 0.0
    assert res.num_pairs == p
    # best threshold on every fold is the first one that accepts dist=0: 0.01
    assert res.threshold == pytest.approx(0.01)


def test_hand_computed_case():
    # 10 pairs, 2 folds of 5.  Distances chosen directly via 2-D unit vectors:
    # e1 = (1, 0), e2 = (cos a, sin a) -> dist = 2 - 2 cos a.
    # Distances sit half-way between 0.01 grid points so rounding cannot matter.
    dists = np.array([0.505, 0.605, 1.505, 1.605, 0.705, 0.555, 1.455, 1.805, 1.205, 1.305])
    same = np.array([1, 1, 0, 0, 1, 1, 0, 0, 0, 1], dtype=bool)
    ang = np.arccos(1.0 - dists / 2.0)
    emb = np.zeros((20, 2))
    emb[0::2] = [1.0, 0.0]
    emb[1::2, 0], emb[1::2, 1] = np.cos(ang), np.sin(ang)
    res = evaluate_pairs(emb * 3.0, same, nrof_folds=2)
    # Fold 0 tests pairs 0-4, trains on 5-9: .555(s) 1.455(d) 1.805(d) 1.205(d) 1.305(s).
    #   Train acc is 4/5 for t in (.555, 1.205] and (1.305, 1.455]; first max t=0.56.
    #   Test at .56: .505 s ok, .605 s wrong, 1.505/1.605 d ok, .705 s wrong -> 3/5.
    # Fold 1 tests 5-9, trains on 0-4: .505(s) .605(s) 1.505(d) 1.605(d) .705(s):
    #   perfect for t in (.705, 1.505]; first t=0.71.  Test: .555 s ok, 1.455 d ok,
    #   1.805 d ok, 1.205 d ok, 1.305 s wrong -> 4/5.
    assert res.accuracy == pytest.approx(0.7)
    assert res.accuracy_std == pytest.approx(0.1)
    assert res.threshold == pytest.approx((0.56 + 0.71) / 2)
    assert res.xnorm == pytest.approx(3.0)
    ref = _reference(emb, same, nrof_folds=2)
    assert (res.accuracy, res.accuracy_std, res.threshold) == pytest.approx(ref)


@pytest.mark.parametrize("p,seed", [(60, 1), (63, 2), (97, 3)])
def test_matches_brute_force_reference(p, seed):
    rng = np.random.default_rng(seed)
    emb, same = _random_pairs(rng, p)
    res = evaluate_pairs(emb, same)
    acc, std, thr = _reference(emb, same)
    assert 0.5 < res.accuracy < 1.0  # non-trivial case
    assert res.accuracy == pytest.approx(acc, abs=1e-12)
    assert res.accuracy_std == pytest.approx(std, abs=1e-12)
    assert res.threshold == pytest.approx(thr, abs=1e-12)
    assert res.xnorm == pytest.approx(np.linalg.norm(emb, axis=1).mean())


def test_fold_sizes_uneven():
    # KFold(10, shuffle=False) on 23 items: 3 folds of 3, 7 folds of 2, contiguous.
    splits = kfold_splits(23, 10)
    sizes = [len(test) for _, test in splits]
    assert sizes == [3, 3, 3, 2, 2, 2, 2, 2, 2, 2]
    assert np.array_equal(np.concatenate([t for _, t in splits]), np.arange(23))
    for train, test in splits:
        assert len(train) + len(test) == 23
        assert not set(train) & set(test)
        assert np.all(np.diff(train) > 0)
    assert [len(t) for _, t in kfold_splits(20, 10)] == [2] * 10
    train, test = kfold_splits(5, 1)[0]
    assert np.array_equal(train, np.arange(5)) and np.array_equal(test, np.arange(5))


def test_fold_sizing_affects_result_like_kfold():
    # 13 pairs, 10 folds: folds 0-2 have 2 pairs, folds 3-9 one pair.  Only pair 0
    # is misclassifiable (a 'different' pair at distance 0), so fold 0 has
    # accuracy 1/2 and all others 1 -> mean 0.95 (0.923 would be a pooled mean).
    p, d = 13, 4
    rng = np.random.default_rng(5)
    a = rng.normal(size=(p, d))
    same = np.ones(p, dtype=bool)
    same[0] = False
    emb = np.empty((2 * p, d))
    emb[0::2], emb[1::2] = a, a
    res = evaluate_pairs(emb, same)
    assert res.accuracy == pytest.approx(0.95)
    assert res.accuracy_std == pytest.approx(np.std([0.5] + [1.0] * 9))


def test_invariant_to_positive_row_scaling():
    rng = np.random.default_rng(7)
    emb, same = _random_pairs(rng, 200, d=32)
    base = evaluate_pairs(emb, same)
    scales = rng.uniform(0.1, 50.0, size=(emb.shape[0], 1))
    scaled = evaluate_pairs(emb * scales, same)
    assert scaled.accuracy == base.accuracy
    assert scaled.accuracy_std == base.accuracy_std
    assert scaled.threshold == base.threshold
    assert scaled.xnorm != pytest.approx(base.xnorm)


def test_issame_accepts_int_and_xnorm_override():
    rng = np.random.default_rng(9)
    emb, same = _random_pairs(rng, 30)
    r1 = evaluate_pairs(emb, same)
    r2 = evaluate_pairs(emb, same.astype(np.int64).tolist())
    assert r1 == r2
    raw = np.full((4 * 30, 16), 0.5)  # norm 2 each
    assert evaluate_pairs(emb, same, xnorm_embeddings=raw).xnorm == pytest.approx(2.0)


@pytest.mark.parametrize(
    "emb_shape,issame_len,folds,match",
    [
        ((21, 4), 10, 10, "even number of rows"),
        ((20, 4), 11, 10, "issame has 11"),
        ((20,), 10, 10, "2-D"),
        ((18, 4), 9, 10, "9 pairs into 10 folds"),
        ((20, 4), 10, 0, "nrof_folds"),
    ],
)
def test_input_errors(emb_shape, issame_len, folds, match):
    emb = np.ones(emb_shape)
    with pytest.raises(ValueError, match=match):
        evaluate_pairs(emb, np.ones(issame_len, dtype=bool), nrof_folds=folds)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_rejected(bad):
    emb = np.ones((20, 4))
    emb[3, 1] = bad
    with pytest.raises(ValueError, match="non-finite"):
        evaluate_pairs(emb, np.ones(10, dtype=bool))


def test_issame_must_be_binary():
    with pytest.raises(ValueError, match="0/1"):
        evaluate_pairs(np.ones((20, 4)), np.full(10, 2))
