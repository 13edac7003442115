"""Operating thresholds: the middle of the best-accuracy range, a false-accept rate of the impostor
pairs (with the too-few-pairs warning), and error rates with Wilson intervals, each against a
brute-force float64 reference."""
from __future__ import annotations

import numpy as np
import pytest

from paddle_pfc.evaluation import operating_point as op
from paddle_pfc.evaluation.pair_people import PairPeople


def accuracy_at(scores, same, t) -> float:
    return float(np.mean((np.asarray(scores) >= t) == np.asarray(same)))


def brute_middle(scores, same) -> float:
    """Every gap between neighbouring scores (and the bounds -1, 1): the accuracy at its middle;
    the widest gap of the best accuracy (the lowest on ties)."""
    edges = np.r_[-1.0, np.unique(scores), 1.0]
    best, width, threshold = -1.0, -1.0, None
    for lo, hi in zip(edges[:-1], edges[1:]):
        acc = accuracy_at(scores, same, (lo + hi) / 2)
        if acc > best + 1e-15 or (abs(acc - best) <= 1e-15 and hi - lo > width):
            best, width, threshold = acc, hi - lo, (lo + hi) / 2
    return threshold


def test_separated_pairs_get_the_middle_of_the_gap_not_the_lowest_genuine_score():
    genuine, impostor = [0.38, 0.502, 0.59, 0.7], [0.1, 0.2, 0.315]
    point = op.middle_threshold(genuine + impostor, [True] * 4 + [False] * 3)
    assert point.threshold == pytest.approx((0.315 + 0.38) / 2, abs=1e-15)
    assert point.rule == op.MIDDLE_RULE and point.far is None and point.warning is None
    assert (point.genuine_pairs, point.impostor_pairs) == (4, 3)
    assert "0.315 to 0.380" in point.text and "accuracy 100.00 % on these 7 pairs" in point.text


@pytest.mark.parametrize("seed", range(6))
def test_middle_threshold_matches_a_brute_force_scan(seed):
    rng = np.random.default_rng(seed)
    same = rng.random(300) < 0.4
    scores = np.round(rng.normal(np.where(same, 0.5, 0.1), 0.15), 3)  # ties among the scores
    point = op.middle_threshold(scores, same)
    assert point.threshold == pytest.approx(brute_middle(scores, same), abs=1e-12)


@pytest.mark.parametrize("far", [0.1, 0.01, 0.003])
def test_far_threshold_is_the_lowest_one_accepting_at_most_that_share_of_impostors(far):
    rng = np.random.default_rng(1)
    same = np.r_[np.ones(200, bool), np.zeros(2000, bool)]
    scores = rng.normal(np.where(same, 0.6, 0.1), 0.2)
    point = op.far_threshold(scores, same, far)
    impostor = scores[~same]
    ok = [t for t in np.r_[-1.0, np.nextafter(impostor, np.inf)] if np.mean(impostor >= t) <= far]
    assert point.threshold == min(ok)
    assert np.count_nonzero(impostor >= point.threshold) == np.floor(far * 2000 + 1e-9)
    assert point.rule == op.FAR_RULE and point.far == far and point.impostor_pairs == 2000
    needed = int(np.ceil(10 / far - 1e-9))
    if 2000 < needed:
        assert point.warning.startswith(f"2,000 impostor pairs are too few for a false-accept rate of {far:g}: "
                                        f"it needs at least {needed:,}")
    else:
        assert point.warning is None


def test_far_threshold_refuses_what_it_cannot_estimate():
    with pytest.raises(ValueError, match="no impostor pairs"):
        op.far_threshold([0.5, 0.6], [True, True], 0.01)
    with pytest.raises(ValueError, match=r"in \(0, 1\)"):
        op.far_threshold([0.5, 0.6], [True, False], 1.0)


def wilson_reference(k: int, n: int) -> tuple[float, float]:
    """The two p solving (k/n - p)^2 = z^2 p (1 - p) / n."""
    z2, phat = 1.959963984540054 ** 2, k / n
    roots = np.sort(np.roots([1 + z2 / n, -(2 * phat + z2 / n), phat * phat]).real)
    return max(0.0, roots[0]), min(1.0, roots[1])


@pytest.mark.parametrize("k, n", [(0, 4500), (3, 450), (36, 450), (450, 450), (1, 7)])
def test_wilson_interval_solves_its_quadratic(k, n):
    assert op.wilson_interval(k, n) == pytest.approx(wilson_reference(k, n), abs=1e-12)


def test_error_rates_count_rejects_and_accepts_at_the_threshold():
    rng = np.random.default_rng(4)
    same = rng.random(500) < 0.5
    scores = rng.normal(np.where(same, 0.5, 0.2), 0.15)
    rates = op.error_rates(scores, same, 0.35)
    assert rates.false_rejects == np.count_nonzero(same & (scores < 0.35))
    assert rates.false_accepts == np.count_nonzero(~same & (scores >= 0.35))
    assert (rates.genuine, rates.impostor) == (same.sum(), (~same).sum())
    assert rates.frr_interval == pytest.approx(wilson_reference(rates.false_rejects, rates.genuine), abs=1e-12)
    assert rates.far_interval == pytest.approx(wilson_reference(rates.false_accepts, rates.impostor), abs=1e-12)
    lo, hi = rates.frr_interval
    assert f"false rejects {rates.false_rejects}/{rates.genuine} = {100 * rates.frr:.2f} % " \
           f"(95 % interval {100 * lo:.2f}-{100 * hi:.2f} %)" in rates.line()


def cross_validated_reference(scores, same, pairs, people, folds, far=None):
    """Each pair, for each fold holding one of its people: right or wrong at the brute-force
    threshold of the pairs showing nobody of that fold; the mean of those judgements."""
    judgements = [[] for _ in scores]
    for f in range(folds):
        members = {p for p in range(people) if p % folds == f}
        rest = [k for k, (a, b) in enumerate(pairs) if a not in members and b not in members]
        kinds = [same[k] for k in rest]
        if all(kinds) or not any(kinds):
            continue
        if far is None:
            t = brute_middle([scores[k] for k in rest], kinds)
        else:
            t = op.far_threshold([scores[k] for k in rest], kinds, far).threshold
        for k, (a, b) in enumerate(pairs):
            if a in members or b in members:
                judgements[k].append(float((scores[k] >= t) != same[k]))
    return np.array([np.mean(j) for j in judgements])


@pytest.mark.parametrize("people,far", [(6, None), (13, None), (13, 0.2)])
def test_cross_validated_wrong_judges_each_pair_at_thresholds_chosen_without_its_people(people, far):
    rng = np.random.default_rng(people)
    pairs = [(a, a) for a in range(people) for _ in range(4)]
    pairs += [(a, b) for a in range(people) for b in range(a + 1, people) if rng.random() < 0.6]
    same = np.array([a == b for a, b in pairs])
    quality = rng.normal(0.0, 0.15, people)  # some people verify worse than others
    scores = np.array([(0.5 if a == b else 0.1) + quality[a] * (a == b) + rng.normal(0, 0.15) for a, b in pairs])
    found = op.cross_validated_wrong(scores, same, PairPeople(tuple(map(str, range(people))), np.array(pairs)), far)
    folds = min(people, op.PEOPLE_FOLDS)
    assert found[1] == folds
    assert np.array_equal(found[0], cross_validated_reference(scores, same, pairs, people, folds, far))


def test_intervals_of_the_pairs_that_chose_a_threshold_are_cross_validated():
    """The threshold's own counts, intervals from the cross-validated judgements: wider than the
    ones of a threshold these pairs did not choose, where choosing fits the pairs."""
    rng = np.random.default_rng(4)
    people = 12
    pairs = [(a, a) for a in range(people) for _ in range(6)]
    pairs += [(a, b) for a in range(people) for b in range(a + 1, people)]
    same = np.array([a == b for a, b in pairs])
    scores = np.where(same, 0.45, 0.2) + rng.normal(0, 0.12, len(pairs))
    given = PairPeople(tuple(map(str, range(people))), np.array(pairs))
    point = op.middle_threshold(scores, same)
    plain = op.error_rates(scores, same, point.threshold, given)
    chosen = op.chosen_error_rates(scores, same, point.threshold, given)
    assert (chosen.false_rejects, chosen.false_accepts) == (plain.false_rejects, plain.false_accepts)
    assert chosen.method == op.CHOSEN_METHOD and chosen.folds == 10 and chosen.people == 12
    wrong, _ = op.cross_validated_wrong(scores, same, given)
    for interval, counted, k in ((chosen.frr_interval, same, plain.false_rejects),
                                 (chosen.far_interval, ~same, plain.false_accepts)):
        lo, hi = op.people_interval(wrong, counted, given)
        own = op.wilson_interval(k, int(counted.sum()))
        assert interval == (min(lo, own[0]), max(hi, own[1]))
    assert chosen.frr_interval[1] + chosen.far_interval[1] > plain.frr_interval[1] + plain.far_interval[1]
    assert "10 folds of people" in chosen.basis() and chosen.as_dict()["people_folds"] == 10
    assert op.chosen_error_rates(scores, same, point.threshold) == op.error_rates(scores, same, point.threshold)
