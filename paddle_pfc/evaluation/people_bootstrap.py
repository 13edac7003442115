"""95 % intervals of a false-reject or false-accept rate that treat people, not pairs, as the
sampled unit: where the rate of another group of as many people lands (a prediction interval).

The pairs of a verification set are made from a few people: every genuine pair of one person
shares that person's face, every impostor pair two people's. Their errors are not independent
draws, and how large a rate is on new people depends mostly on which people were drawn. The
interval here is the person-level (cluster) bootstrap that the biometrics literature calls the
"subsets bootstrap" (Bolle, Ratha & Pankanti, "Error analysis of pattern recognition systems --
the subsets bootstrap", Computer Vision and Image Understanding 93(1), 2004; for impostor pairs,
which involve two people, the two-instance bootstrap of Schuckers, "Computational Methods in
Biometric Authentication", Springer 2010):

* Draw ``N`` people with replacement from the set's ``N`` people; person ``i`` drawn ``m_i``
  times (``m`` multinomial): a population the set could have come from.
* For a prediction (``group_size`` ``G``), draw ``G`` people of that population, with
  replacement: person ``i`` drawn ``g_i`` times (``g`` multinomial with probabilities
  ``m / N``), the group whose rate is predicted; it carries both how uncertain the population
  is and how much one group of ``G`` people varies. Without ``group_size``, ``g = m`` (the
  interval of the population's rate).
* Keep each pair whose people were drawn, with multiplicity: a genuine pair of person ``a``
  ``g_a`` times, an impostor pair of ``a`` and ``b`` ``g_a x g_b`` times (every drawn copy of
  ``a`` against every drawn copy of ``b``).
* The draw's rate: its wrong pairs over its pairs of the kind counted (a draw without such a
  pair has none and is left out).
* The interval: the ``a`` and ``1 - a`` percentiles of :data:`DRAWS` draws (numpy's linear
  interpolation) from ``numpy.random.default_rng(SEED)``, so the same pairs give the same
  interval. ``a`` is 2.5 % expanded for few people (:func:`expanded_tail`, Hesterberg's
  "expanded percentile interval": ``a = Phi(-sqrt(N / (N - 1)) t(0.975, N - 1))``, the normal
  and Student-t quantiles), since percentiles of a bootstrap over few units are too narrow.

A resampling of the people at hand cannot produce a person worse than the worst of them (with no
error at all, every draw's rate is 0), so the interval reported is the smallest one holding both
the bootstrap interval and the Wilson interval of the pairs counted as independent
(:func:`paddle_pfc.evaluation.operating_point.wilson_interval`): never narrower than counting pairs.
With fewer than :data:`MIN_PEOPLE` people it still cannot be trusted to carry to new people, and
the commands say so.
"""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

__all__ = ["DRAWS", "SEED", "MIN_PEOPLE", "bootstrap_rates", "percentile_interval", "expanded_tail",
           "student_t_quantile", "few_people_warning"]

DRAWS = 4000
SEED = 0
#: Below this many people an interval is said not to carry to new people.
MIN_PEOPLE = 10
_CHUNK = 250  # draws computed at a time (memory: chunk x distinct person pairs)


def _person_pair_counts(wrong: np.ndarray, counted: np.ndarray,
                        pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(a, b, errors, totals)`` over the distinct unordered person pairs of the counted pairs."""
    people = np.sort(np.asarray(pairs, np.int64)[counted], axis=1)
    keys, inverse = np.unique(people, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    totals = np.bincount(inverse, minlength=len(keys)).astype(np.float64)
    errors = np.bincount(inverse, weights=wrong[counted].astype(np.float64), minlength=len(keys))
    return keys[:, 0], keys[:, 1], errors, totals


def bootstrap_rates(wrong, counted, pairs, num_people: int, draws: int = DRAWS, seed: int = SEED,
                    group_size: int | None = None) -> np.ndarray:
    """The rate of each of ``draws`` person-level resamplings (float64 ``[draws]``, NaN for a draw
    without a counted pair): of a group of ``group_size`` people drawn from each resampled
    population when given (a prediction), else of the resampled population. ``wrong``: ``[P]``,
    how wrong the threshold gets each pair (bool, or a share in [0, 1]); ``counted``: bool
    ``[P]``, the pairs of the rate's kind (genuine for false rejects, impostor for false accepts);
    ``pairs``: int ``[P, 2]``, each pair's two people as indices in ``range(num_people)``."""
    wrong, counted = np.asarray(wrong, np.float64), np.asarray(counted, bool)
    pairs = np.asarray(pairs, np.int64).reshape(-1, 2)
    if not wrong.shape == counted.shape == pairs.shape[:1]:
        raise ValueError(f"wrong {wrong.shape}, counted {counted.shape} and pairs {pairs.shape} differ in length")
    if num_people < 1 or (pairs.size and not 0 <= pairs.min() <= pairs.max() < num_people):
        raise ValueError(f"pairs must index {num_people} people")
    if group_size is not None and group_size < 1:
        raise ValueError(f"a group has at least one person, got {group_size}")
    rates = np.full(draws, np.nan)
    if not counted.any():
        return rates
    a, b, errors, totals = _person_pair_counts(wrong, counted, pairs)
    same = a == b
    rng = np.random.default_rng(seed)
    for start in range(0, draws, _CHUNK):
        times = rng.multinomial(num_people, np.full(num_people, 1.0 / num_people),
                                size=min(_CHUNK, draws - start)).astype(np.float64)
        if group_size is not None:
            times = rng.multinomial(group_size, times / num_people).astype(np.float64)
        weight = np.where(same, times[:, a], times[:, a] * times[:, b])
        kept = weight @ totals
        with np.errstate(invalid="ignore", divide="ignore"):
            rates[start:start + len(times)] = np.where(kept > 0, (weight @ errors) / kept, np.nan)
    return rates


def percentile_interval(rates: np.ndarray, tail: float = 0.025) -> tuple[float, float] | None:
    """The ``tail`` and ``1 - tail`` quantiles of the defined (not NaN) ``rates``; None when none is."""
    defined = np.asarray(rates, np.float64)
    defined = defined[~np.isnan(defined)]
    if not defined.size:
        return None
    lo, hi = np.percentile(defined, [100 * tail, 100 * (1 - tail)])
    return float(lo), float(hi)


def student_t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (``0.5 < p < 1``): exact for
    1 and 2, else the Cornish-Fisher series of Abramowitz & Stegun 26.7.5 (within 0.005 from 3 on)."""
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    z = NormalDist().inv_cdf(p)
    terms = ((z ** 3 + z) / 4, (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96,
             (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384,
             (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160)
    return z + sum(g / df ** (k + 1) for k, g in enumerate(terms))


def expanded_tail(num_people: int) -> float:
    """The tail probability of a 95 % expanded percentile interval over ``num_people`` people
    (0 for one person: the interval of every draw)."""
    if num_people < 2:
        return 0.0
    factor = math.sqrt(num_people / (num_people - 1)) * student_t_quantile(0.975, num_people - 1)
    return NormalDist().cdf(-factor)


def few_people_warning(num_people: int) -> str | None:
    """The warning for a set of ``num_people`` people (None from :data:`MIN_PEOPLE` on)."""
    if num_people >= MIN_PEOPLE:
        return None
    return (f"only {num_people} people: error-rate intervals over them cannot be trusted to carry to new people "
            f"(their rates can lie far outside); hold out more people, at least {MIN_PEOPLE} "
            "(paddle-pfc-pairs --holdout-ids N --test-ids M)")
