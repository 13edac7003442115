"""Error-rate intervals over people: the person-level bootstrap against an exhaustive enumeration of
its outcomes, its percentiles against order statistics, and the intervals error_rates prints."""
from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from paddle_pfc.evaluation import operating_point as op
from paddle_pfc.evaluation import people_bootstrap as pb
from paddle_pfc.evaluation.pair_people import PairPeople

# 3 people; (person a, person b, wrong): genuine pairs have a == b
TINY = [(0, 0, True), (0, 0, False), (1, 1, False), (1, 1, False), (2, 2, True),
        (0, 1, True), (0, 2, False), (1, 2, False), (1, 2, True), (0, 1, False)]


def enumerated_rates(pairs, genuine: bool) -> Counter:
    """Every ordered draw of 3 people from 3 (27, equally likely), the draw's pairs listed copy by
    copy (a genuine pair once per drawn copy of its person, an impostor pair once per drawn copy of
    a with each drawn copy of b): ``{rate: probability}``, None for a draw without such pairs."""
    found = Counter()
    for draw in itertools.product(range(3), repeat=3):
        kept = []
        for a, b, wrong in pairs:
            if (a == b) != genuine:
                continue
            if a == b:
                kept += [wrong] * sum(1 for p in draw if p == a)
            else:
                kept += [wrong for p in draw if p == a for q in draw if q == b]
        found[None if not kept else round(sum(kept) / len(kept), 12)] += 1 / 27
    return found


@pytest.mark.parametrize("genuine", [True, False])
def test_bootstrap_draws_follow_the_enumerated_distribution(genuine):
    wrong = np.array([w for *_, w in TINY])
    counted = np.array([(a == b) == genuine for a, b, _ in TINY])
    table = np.array([(a, b) for a, b, _ in TINY])
    draws = 20000
    rates = pb.bootstrap_rates(wrong, counted, table, 3, draws=draws, seed=11)
    seen = Counter(None if np.isnan(r) else round(float(r), 12) for r in rates)
    exact = enumerated_rates(TINY, genuine)
    assert set(seen) <= set(exact)
    for value, p in exact.items():
        sigma = np.sqrt(p * (1 - p) / draws)
        assert abs(seen[value] / draws - p) <= 5 * sigma + 1e-12, (value, seen[value] / draws, p)


def test_same_seed_same_draws_and_a_draw_without_counted_pairs_is_nan():
    wrong = np.array([w for *_, w in TINY])
    table = np.array([(a, b) for a, b, _ in TINY])
    impostor = table[:, 0] != table[:, 1]
    first = pb.bootstrap_rates(wrong, impostor, table, 3, draws=500)
    assert np.array_equal(first, pb.bootstrap_rates(wrong, impostor, table, 3, draws=500), equal_nan=True)
    # a draw of one person three times has no impostor pair: 3 of 27 draws
    assert np.isnan(first).mean() == pytest.approx(3 / 27, abs=0.05)
    assert np.isnan(pb.bootstrap_rates(wrong, np.zeros(len(TINY), bool), table, 3, draws=5)).all()


def linear_percentile(values: np.ndarray, q: float) -> float:
    """The q-quantile interpolated between the order statistics at ranks floor/ceil of q (n - 1)."""
    ordered = sorted(values)
    h = q * (len(ordered) - 1)
    low = int(np.floor(h))
    return ordered[low] + (h - low) * (ordered[min(low + 1, len(ordered) - 1)] - ordered[low])


def test_percentile_interval_leaves_nan_out():
    values = np.random.default_rng(2).random(101)
    values[[3, 50]] = np.nan
    kept = values[~np.isnan(values)]
    lo, hi = pb.percentile_interval(values)
    assert (lo, hi) == pytest.approx((linear_percentile(kept, 0.025), linear_percentile(kept, 0.975)), abs=1e-15)
    assert pb.percentile_interval(np.full(4, np.nan)) is None


def clustered_set(errors_of_first: int = 20, people: int = 10, genuine_each: int = 45):
    """``people`` people with ``genuine_each`` genuine pairs each, only person 0's pairs wrong
    (``errors_of_first`` of them), and one impostor pair per two people, none wrong."""
    table = [(i, i) for i in range(people) for _ in range(genuine_each)]
    table += list(itertools.combinations(range(people), 2))
    same = np.array([a == b for a, b in table])
    scores = np.where(same, 0.9, -0.5)
    scores[:errors_of_first] = 0.1  # person 0's first pairs fall below a threshold of 0.5
    return scores, same, PairPeople(tuple(f"p{i}" for i in range(people)), np.array(table))


def binomial_quantile(n: int, p: float, q: float) -> int:
    """The smallest k with P(Binomial(n, p) <= k) >= q."""
    total = 0.0
    for k in range(n + 1):
        total += math.comb(n, k) * p ** k * (1 - p) ** (n - k)
        if total >= q:
            return k
    return n


def group_count_distribution(people: int, p: float) -> list[float]:
    """P(g = k): person 0 drawn m ~ Binomial(people, p) times into a population, then g ~
    Binomial(people, m / people) times into a group of as many people."""
    def binomial(n: int, q: float, k: int) -> float:
        return math.comb(n, k) * q ** k * (1 - q) ** (n - k)
    return [sum(binomial(people, p, m) * binomial(people, m / people, k) for m in range(people + 1))
            for k in range(people + 1)]


def quantile_index(probabilities: list[float], q: float) -> int:
    """The smallest k with P(X <= k) >= q."""
    return int(np.searchsorted(np.cumsum(probabilities), q))


def test_prediction_draws_follow_the_two_stage_distribution():
    """A group drawn from a resampled population: how often person 0 (the only one with errors)
    is in it, against the exact two-stage binomial mixture."""
    scores, same, people = clustered_set()
    wrong = scores < 0.5
    draws = 20000
    rates = pb.bootstrap_rates(wrong, same, people.pairs, 10, draws=draws, seed=3, group_size=10)
    seen = Counter(int(round(r * 450 / 20)) for r in rates)  # every draw holds 10 x 45 genuine pairs
    for k, p in enumerate(group_count_distribution(10, 0.1)):
        assert abs(seen[k] / draws - p) <= 5 * np.sqrt(p * (1 - p) / draws) + 1e-12, (k, seen[k] / draws, p)
    with pytest.raises(ValueError, match="at least one person"):
        pb.bootstrap_rates(wrong, same, people.pairs, 10, group_size=0)


def test_errors_of_one_person_give_the_interval_of_how_often_a_new_group_holds_such_a_person():
    """Person 0 is in a new group of 10 g times (the two-stage distribution): the draw's
    false-reject rate is 20 g / 450; the interval's ends are that distribution's expanded-tail
    quantiles (up to the interpolation between two neighbouring counts)."""
    scores, same, people = clustered_set()
    rates = op.error_rates(scores, same, 0.5, people)
    assert (rates.false_rejects, rates.genuine, rates.method, rates.people) == (20, 450, op.PEOPLE_METHOD, 10)
    tail = pb.expanded_tail(10)
    k_high = quantile_index(group_count_distribution(10, 0.1), 1 - tail)
    lo, hi = rates.frr_interval
    assert lo == 0.0 and 20 * (k_high - 1) / 450 < hi <= 20 * k_high / 450, (hi, k_high)
    wilson = op.wilson_interval(20, 450)
    assert hi > 3 * wilson[1]
    assert rates.far_interval == pytest.approx(op.wilson_interval(0, 45), abs=1e-12)  # no error: Wilson's
    assert rates.warning is None and "where the rates of another 10 people like these land" in rates.basis()
    fields = rates.as_dict()
    assert fields["interval_method"] == "people_bootstrap" and fields["people"] == 10
    assert fields["frr_interval"] == list(rates.frr_interval) and fields["interval_warning"] is None


# Student's t 0.975 quantiles, as printed in the tables (e.g. NIST/SEMATECH e-Handbook, 1.3.6.7.2)
T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 9: 2.262, 29: 2.045, 100: 1.984}


@pytest.mark.parametrize("df", sorted(T_975))
def test_student_t_quantiles_match_the_printed_table(df):
    assert pb.student_t_quantile(0.975, df) == pytest.approx(T_975[df], abs=0.005)


def test_expanded_tail_widens_the_interval_most_for_few_people():
    tails = [pb.expanded_tail(n) for n in (2, 4, 10, 30, 1000)]
    assert tails == sorted(tails) and pb.expanded_tail(1) == 0.0
    assert tails[1] < 0.001 and 0.008 < tails[2] < 0.009 and tails[-1] == pytest.approx(0.025, abs=3e-4)


def test_independent_errors_keep_an_interval_near_wilsons():
    """Errors spread evenly over 40 people: resampling people adds little; never narrower than Wilson."""
    rng = np.random.default_rng(5)
    table = np.array([(i, i) for i in range(40) for _ in range(10)])
    same = np.ones(len(table), bool)
    scores = np.where(rng.random(len(table)) < 0.1, 0.0, 1.0)
    rates = op.error_rates(scores, same, 0.5, PairPeople(tuple(map(str, range(40))), table))
    wilson = op.wilson_interval(rates.false_rejects, rates.genuine)
    lo, hi = rates.frr_interval
    assert lo <= wilson[0] and hi >= wilson[1]
    assert hi - lo < 1.5 * (wilson[1] - wilson[0])


def test_few_people_are_warned_about_and_sets_without_people_say_pairs_are_independent():
    scores, same, people = clustered_set(errors_of_first=3, people=4, genuine_each=10)
    rates = op.error_rates(scores, same, 0.5, people)
    assert rates.warning.startswith("only 4 people: error-rate intervals over them cannot be trusted to carry to "
                                    "new people") and f"at least {pb.MIN_PEOPLE}" in rates.warning
    plain = op.error_rates(scores, same, 0.5)
    assert plain.method == op.PAIRS_METHOD and plain.people is None and plain.warning is None
    assert plain.frr_interval == op.wilson_interval(3, 40)
    assert "pairs assumed independent" in plain.basis()
    with pytest.raises(ValueError, match="people of 46 pairs for 45 scores"):
        op.error_rates(scores[1:], same[1:], 0.5, people)


def test_intervals_over_people_cover_the_rate_of_a_new_group_more_often_than_wilsons():
    """People whose own false-reject rates differ (Beta(0.5, 10)), 45 genuine pairs each: how often
    the interval of 10 drawn people holds the rate of 10 further people (95 % nominal; the
    bootstrap reaches about 0.9 with 10 people, counting pairs far less)."""
    rng = np.random.default_rng(1)
    people, trials = 10, 200
    table = np.repeat(np.arange(people), 45)[:, None].repeat(2, axis=1)
    names = tuple(map(str, range(people)))
    covered = {"people": 0, "pairs": 0}
    for _ in range(trials):
        wrong = np.concatenate([rng.random(45) < r for r in rng.beta(0.5, 10.0, 2 * people)])
        chosen, new = wrong[:45 * people], wrong[45 * people:]
        scores, same = np.where(chosen, 0.0, 1.0), np.ones(len(chosen), bool)
        for kind, given in (("people", PairPeople(names, table)), ("pairs", None)):
            lo, hi = op.error_rates(scores, same, 0.5, given).frr_interval
            covered[kind] += lo <= new.mean() <= hi
    assert covered["people"] / trials > 0.85 and covered["people"] - covered["pairs"] > 0.2 * trials, covered
