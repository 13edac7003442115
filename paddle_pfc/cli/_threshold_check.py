"""paddle-pfc-validate's check of one threshold on every set: its error rates with 95 % intervals,
whether the rates of sets that did not choose it stay within the intervals its record gave for new
people, and one verdict line a set."""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ThresholdToCheck", "check_sets", "verdict"]


@dataclass(frozen=True)
class ThresholdToCheck:
    """``threshold`` (cosine), ``source`` (where from, in words), ``chose`` (SHA-256 of the set that
    chose it, or None), ``far`` (the rate the rule chose it at; None for the middle rule),
    ``predicted`` (the ``error_rates`` recorded on the set that chose it, with intervals for new
    people, and ``set``: its name; None without), ``by_rule`` (the rule chose it on that set:
    False for a threshold given by hand)."""

    threshold: float
    source: str
    chose: str | None = None
    far: float | None = None
    predicted: dict | None = None
    by_rule: bool = True


def _held(rates, predicted: dict) -> str | None:
    """Whether ``rates`` lie within the intervals ``predicted`` for new people, in words (None
    when the record has no intervals over people)."""
    if predicted.get("people") is None:
        return None
    parts = []
    for what, rate, key in (("false rejects", rates.frr, "frr_interval"), ("false accepts", rates.far, "far_interval")):
        lo, hi = predicted[key]
        side = "inside" if lo - 1e-12 <= rate <= hi + 1e-12 else ("ABOVE" if rate > hi else "below")
        parts.append(f"{what} {100 * rate:.2f} % {side} {100 * lo:.2f}-{100 * hi:.2f} %")
    return (f"the record's intervals for new people (from {predicted['set']}'s {predicted['people']} people): "
            + ", ".join(parts))


def check_sets(check: ThresholdToCheck, scores: dict, results: dict, plotted: dict) -> list[str]:
    """Print the error rates of ``check.threshold`` on every set of ``scores`` (``{name: (cosines,
    issame, people or None)}``), add them to each set's ``results[name]["checked"]``; the verdict
    lines. The set that chose the threshold gets intervals cross-validated over its people."""
    from paddle_pfc.evaluation.operating_point import chosen_error_rates, error_rates

    print(f"threshold {check.threshold:.3f} ({check.source}):")
    verdicts = []
    for name, (cosines, issame, people) in scores.items():
        res = results[name]
        biased = check.chose is not None and res["sha256"] == check.chose
        if biased and check.by_rule:
            rates = chosen_error_rates(cosines, issame, check.threshold, people, check.far)
        else:
            rates = error_rates(cosines, issame, check.threshold, people)
        if name in plotted:
            plotted[name]["threshold"] = check.threshold
        held = None if biased or check.predicted is None else _held(rates, check.predicted)
        res["checked"] = {"threshold": check.threshold, "source": check.source, **rates.as_dict(),
                          "selection_biased": biased, "against_record": held}
        said = "selection-biased: these pairs chose the model's threshold" if biased else \
            "pairs that did not choose the model's threshold"
        print(f"  {name}: {rates.line()}  ({said})")
        print(f"    {rates.basis()}")
        if rates.warning:
            print(f"    warning: {rates.warning}")
        if held:
            print(f"    {held}")
        verdicts.append(verdict(name, res["accuracy"], check.threshold, rates, biased))
    return verdicts


def verdict(name: str, accuracy: float, threshold: float, rates, biased: bool) -> str:
    """One set's verdict in words."""
    def share(what: str, k: int, n: int, interval: tuple[float, float], kind: str) -> str:
        return f"wrongly {what} {k:,} of {n:,} {kind} pairs ({100 * k / n:.2f} %, at most {100 * interval[1]:.2f} %)"

    parts = []
    if rates.genuine:
        parts.append(share("rejects", rates.false_rejects, rates.genuine, rates.frr_interval, "genuine"))
    if rates.impostor:
        parts.append(share("accepts", rates.false_accepts, rates.impostor, rates.far_interval, "impostor"))
    whose = ("the people that chose it: selection-biased, not what new people get" if biased else
             "people that did not choose it")
    unit = f"over {rates.people} people" if rates.people is not None else "over pairs assumed independent"
    return (f"verdict: {name}: {100 * accuracy:.2f} % accuracy; threshold {threshold:.3f} {' and '.join(parts)} "
            f"(95 % bounds {unit}), on {whose}")
