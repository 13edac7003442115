"""The operating threshold of a model, chosen from the cosine similarities of verification pairs,
and the error rates a threshold has on pairs (with their 95 % intervals).

A pair is "same" when its cosine similarity is at or above the threshold. Two rules choose it:

* :func:`middle_threshold` (the default): the middle of the widest range of thresholds at which
  the accuracy on the pairs is best -- for pairs that separate perfectly, halfway between the
  highest impostor and the lowest genuine score, not at the lowest genuine score.
* :func:`far_threshold`: the lowest threshold that accepts at most ``floor(R x N)`` of the ``N``
  impostor pairs (an estimated false-accept rate of at most ``R``). The estimate needs
  ``N >= MIN_EXPECTED_ACCEPTS / R`` impostor pairs (that many impostors expected above the
  threshold); fewer give a warning.

:func:`error_rates` counts the false rejects and false accepts of a threshold on pairs, each with
a 95 % interval: over people when the set says who each pair shows (where the rate of another
group of as many people lands: a person-level bootstrap prediction,
:mod:`paddle_pfc.evaluation.people_bootstrap`), else the Wilson score interval of the pairs
counted as independent (:func:`wilson_interval`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from paddle_pfc.evaluation.people_bootstrap import (
    bootstrap_rates,
    expanded_tail,
    few_people_warning,
    percentile_interval,
)

__all__ = ["OperatingPoint", "ErrorRates", "MIDDLE_RULE", "FAR_RULE", "MIN_EXPECTED_ACCEPTS", "middle_threshold",
           "far_threshold", "choose_threshold", "error_rates", "wilson_interval", "people_interval",
           "PEOPLE_METHOD", "PAIRS_METHOD", "CHOSEN_METHOD", "PEOPLE_FOLDS", "chosen_error_rates",
           "cross_validated_wrong"]

MIDDLE_RULE = "best_accuracy_middle"
FAR_RULE = "false_accept_rate"
#: Impostor pairs a false-accept rate R needs: N >= MIN_EXPECTED_ACCEPTS / R.
MIN_EXPECTED_ACCEPTS = 10
_Z95 = 1.959963984540054  # the standard normal's 97.5 % quantile
PEOPLE_METHOD, PAIRS_METHOD = "people_bootstrap", "wilson_pairs"
#: The intervals of a threshold's rates on the pairs that chose it: cross-validated over people.
CHOSEN_METHOD = "people_bootstrap_cross_validated"
#: Folds of people the cross-validated intervals re-choose a threshold without.
PEOPLE_FOLDS = 10


@dataclass(frozen=True)
class OperatingPoint:
    """A threshold chosen on pairs: ``rule`` (:data:`MIDDLE_RULE` or :data:`FAR_RULE`), ``text``
    (the rule in words), ``far`` (the rate asked, ``None`` for the middle rule), the genuine and
    impostor pair counts it was chosen on, ``warning`` (``None``, or why the pairs are too few)."""

    threshold: float
    rule: str
    text: str
    far: float | None
    genuine_pairs: int
    impostor_pairs: int
    warning: str | None = None

    def record(self) -> dict:
        """The fields a threshold record keeps."""
        return {"threshold": self.threshold, "rule": self.rule, "rule_text": self.text, "far": self.far,
                "genuine_pairs": self.genuine_pairs, "impostor_pairs": self.impostor_pairs,
                "warning": self.warning}


@dataclass(frozen=True)
class ErrorRates:
    """False rejects of ``genuine`` pairs and false accepts of ``impostor`` pairs at a threshold,
    with the 95 % intervals of both rates (``(lo, hi)``; ``(0, 1)`` without such pairs):
    ``method`` :data:`PEOPLE_METHOD` (over the set's ``people``), :data:`CHOSEN_METHOD` (over
    ``people``, cross-validated in ``folds`` folds of people: the pairs chose the threshold) or
    :data:`PAIRS_METHOD` (Wilson, pairs assumed independent; ``people`` None)."""

    false_rejects: int
    genuine: int
    false_accepts: int
    impostor: int
    frr_interval: tuple[float, float]
    far_interval: tuple[float, float]
    method: str = PAIRS_METHOD
    people: int | None = None
    folds: int | None = None

    @property
    def frr(self) -> float:
        """False-reject rate (0 without genuine pairs)."""
        return self.false_rejects / self.genuine if self.genuine else 0.0

    @property
    def far(self) -> float:
        """False-accept rate (0 without impostor pairs)."""
        return self.false_accepts / self.impostor if self.impostor else 0.0

    def line(self) -> str:
        """``false rejects 3/450 = 0.67 % (95 % interval 0.23-1.94 %), false accepts ...``."""
        def part(what: str, k: int, n: int, interval: tuple[float, float]) -> str:
            if not n:
                return f"{what}: no such pairs"
            return (f"{what} {k:,}/{n:,} = {100 * k / n:.2f} % "
                    f"(95 % interval {100 * interval[0]:.2f}-{100 * interval[1]:.2f} %)")
        return (part("false rejects", self.false_rejects, self.genuine, self.frr_interval) + ", "
                + part("false accepts", self.false_accepts, self.impostor, self.far_interval))

    def basis(self) -> str:
        """What the intervals count as the sampled unit, in words."""
        if self.method == CHOSEN_METHOD:
            return (f"95 % intervals over people: where the rates of another {self.people} people land at a threshold "
                    f"chosen this way (each pair judged at the threshold the rule chose without its people, "
                    f"{self.folds} folds of people; then the person-level bootstrap prediction, expanded percentiles; "
                    "no narrower than the pairs' Wilson interval)")
        if self.method == PEOPLE_METHOD:
            return (f"95 % intervals over people: where the rates of another {self.people} people like these land "
                    f"(person-level bootstrap prediction of the set's {self.people} people, expanded percentiles; "
                    "no narrower than the pairs' Wilson interval)")
        return ("95 % Wilson intervals, pairs assumed independent (the set does not say who its pairs show: "
                "paddle-pfc-pairs writes a .people.json beside each set it writes)")

    @property
    def warning(self) -> str | None:
        """Why the intervals cannot be trusted for new people (too few people), or None."""
        return few_people_warning(self.people) if self.people is not None else None

    def as_dict(self) -> dict:
        """JSON fields."""
        return {"false_rejects": self.false_rejects, "genuine_pairs": self.genuine, "frr": self.frr,
                "frr_interval": list(self.frr_interval), "false_accepts": self.false_accepts,
                "impostor_pairs": self.impostor, "far": self.far, "far_interval": list(self.far_interval),
                "interval_method": self.method, "people": self.people, "people_folds": self.folds,
                "interval_warning": self.warning}


def wilson_interval(successes: int, trials: int) -> tuple[float, float]:
    """95 % Wilson score interval of a rate of ``successes`` in ``trials`` (``(0, 1)`` for none)."""
    if trials <= 0:
        return 0.0, 1.0
    p, z2 = successes / trials, _Z95 * _Z95
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = _Z95 * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


def _checked(scores, issame) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, np.float64)
    same = np.asarray(issame, bool)
    if s.ndim != 1 or s.shape != same.shape or s.size == 0:
        raise ValueError(f"scores and issame must be 1-D of one non-zero length, got {s.shape} and {same.shape}")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores contain non-finite values")
    return s, same


def middle_threshold(scores, issame) -> OperatingPoint:
    """The middle of the widest threshold range (within [-1, 1]) whose accuracy on the pairs is
    best (the lowest such range on ties)."""
    s, same = _checked(scores, issame)
    values, inverse = np.unique(s, return_inverse=True)
    genuine = np.bincount(inverse, weights=same, minlength=values.size)
    impostor = np.bincount(inverse, weights=~same, minlength=values.size)
    # range i accepts the scores >= values[i] (i = values.size: none); its bounds are values[i-1], values[i]
    genuine_accepted = np.r_[np.cumsum(genuine[::-1])[::-1], 0.0]
    impostor_rejected = np.r_[0.0, np.cumsum(impostor)]
    correct = genuine_accepted + impostor_rejected
    low = np.r_[min(-1.0, values[0]), values]
    high = np.r_[values, max(1.0, values[-1])]
    best = np.flatnonzero(correct == correct.max())
    widest = best[int(np.argmax((high - low)[best]))]
    threshold = float((low[widest] + high[widest]) / 2)
    accuracy = correct[widest] / s.size
    text = (f"middle of the best-accuracy range {low[widest]:.3f} to {high[widest]:.3f} "
            f"(accuracy {100 * accuracy:.2f} % on these {s.size:,} pairs)")
    return OperatingPoint(threshold, MIDDLE_RULE, text, None, int(same.sum()), int((~same).sum()))


def far_threshold(scores, issame, far: float) -> OperatingPoint:
    """The lowest threshold accepting at most ``floor(far x N)`` of the ``N`` impostor pairs; a
    warning when ``N < MIN_EXPECTED_ACCEPTS / far``. ``ValueError`` without impostor pairs or for
    ``far`` outside (0, 1)."""
    if not 0.0 < far < 1.0:
        raise ValueError(f"a false-accept rate is in (0, 1), got {far!r}")
    s, same = _checked(scores, issame)
    impostor = np.sort(s[~same])[::-1]
    n = impostor.size
    if n == 0:
        raise ValueError("no impostor pairs to estimate a false-accept rate from")
    allowed = math.floor(far * n + 1e-9)
    threshold = -1.0 if allowed >= n else float(np.nextafter(impostor[allowed], np.inf))
    accepted = int(np.count_nonzero(impostor >= threshold))
    text = (f"false-accept rate {far:g}: {accepted:,} of {n:,} impostor pairs accepted "
            f"({100 * accepted / n:.3g} %)")
    needed = math.ceil(MIN_EXPECTED_ACCEPTS / far - 1e-9)
    warning = None
    if n < needed:
        warning = (f"{n:,} impostor pairs are too few for a false-accept rate of {far:g}: it needs at least "
                   f"{needed:,} ({MIN_EXPECTED_ACCEPTS} impostors expected above the threshold); more people "
                   "held out give more")
    return OperatingPoint(threshold, FAR_RULE, text, float(far), int(same.sum()), n, warning)


def choose_threshold(scores, issame, far: float | None = None) -> OperatingPoint:
    """:func:`far_threshold` when ``far`` is given, else :func:`middle_threshold`."""
    return middle_threshold(scores, issame) if far is None else far_threshold(scores, issame, far)


def people_interval(wrong: np.ndarray, counted: np.ndarray, people) -> tuple[float, float]:
    """The 95 % interval of the rate of ``wrong`` among the ``counted`` pairs on another group of as
    many people as ``people`` (a :class:`~paddle_pfc.evaluation.pair_people.PairPeople`): the
    smallest holding both the person-level bootstrap prediction interval (expanded percentiles)
    and the pairs' Wilson interval."""
    wrong, counted = np.asarray(wrong, np.float64), np.asarray(counted, bool)
    k, n = float(wrong[counted].sum()), int(np.count_nonzero(counted))
    wilson = wilson_interval(k, n)
    boot = percentile_interval(bootstrap_rates(wrong, counted, people.pairs, people.count, group_size=people.count),
                               expanded_tail(people.count)) if n else None
    return wilson if boot is None else (min(boot[0], wilson[0]), max(boot[1], wilson[1]))


def error_rates(scores, issame, threshold: float, people=None) -> ErrorRates:
    """False rejects (genuine below ``threshold``) and false accepts (impostor at or above it);
    intervals over ``people`` (a :class:`~paddle_pfc.evaluation.pair_people.PairPeople` of the
    pairs) when given, else Wilson's."""
    s, same = _checked(scores, issame)
    accepted = s >= threshold
    genuine, impostor = int(same.sum()), int((~same).sum())
    rejects, accepts = int(np.count_nonzero(same & ~accepted)), int(np.count_nonzero(~same & accepted))
    if people is None:
        return ErrorRates(rejects, genuine, accepts, impostor, wilson_interval(rejects, genuine),
                          wilson_interval(accepts, impostor))
    if len(people.pairs) != s.size:
        raise ValueError(f"people of {len(people.pairs)} pairs for {s.size} scores")
    wrong = same != accepted
    return ErrorRates(rejects, genuine, accepts, impostor, people_interval(wrong, same, people),
                      people_interval(wrong, ~same, people), PEOPLE_METHOD, people.count)


def cross_validated_wrong(scores, issame, people, far: float | None = None,
                          folds: int = PEOPLE_FOLDS) -> tuple[np.ndarray, int]:
    """How wrong each pair is at thresholds chosen without its people (float ``[P]`` in [0, 1]) and
    the folds used: person ``i`` is in fold ``i % K`` (``K = min(folds, people)``); for each fold, the
    rule (:func:`choose_threshold` with ``far``) chooses a threshold on the pairs showing nobody of
    the fold and judges the pairs showing somebody of it (a pair of two folds: the mean of both
    judgements). A fold whose other pairs lack a kind judges its pairs at the threshold of all pairs."""
    s, same = _checked(scores, issame)
    count = min(folds, people.count)
    fold = np.arange(people.count) % count
    first, second = fold[people.pairs[:, 0]], fold[people.pairs[:, 1]]
    wrong, judged = np.zeros(s.size), np.zeros(s.size)
    for f in range(count):
        rest = (first != f) & (second != f)
        kinds = same[rest]
        if kinds.all() or not kinds.any():
            continue
        threshold = choose_threshold(s[rest], kinds, far).threshold
        wrong[~rest] += same[~rest] != (s[~rest] >= threshold)
        judged[~rest] += 1
    whole = same != (s >= choose_threshold(s, same, far).threshold)
    return np.where(judged > 0, wrong / np.maximum(judged, 1), whole), count


def chosen_error_rates(scores, issame, threshold: float, people=None, far: float | None = None) -> ErrorRates:
    """:func:`error_rates` of ``threshold`` on the pairs that chose it (by :func:`choose_threshold`
    with ``far``); with ``people``, the intervals are of new people (:data:`CHOSEN_METHOD`): from
    :func:`cross_validated_wrong`, so that choosing the threshold on these pairs does not narrow them,
    and no narrower than the Wilson intervals of the threshold's own counts."""
    counts = error_rates(scores, issame, threshold)  # the threshold's own counts, with their Wilson intervals
    if people is None:
        return counts
    if len(people.pairs) != counts.genuine + counts.impostor:
        raise ValueError(f"people of {len(people.pairs)} pairs for {counts.genuine + counts.impostor} scores")
    wrong, folds = cross_validated_wrong(scores, issame, people, far)
    same = np.asarray(issame, bool)

    def interval(counted: np.ndarray, own: tuple[float, float]) -> tuple[float, float]:
        lo, hi = people_interval(wrong, counted, people)
        return min(lo, own[0]), max(hi, own[1])
    return ErrorRates(counts.false_rejects, counts.genuine, counts.false_accepts, counts.impostor,
                      interval(same, counts.frr_interval), interval(~same, counts.far_interval),
                      CHOSEN_METHOD, people.count, folds)
