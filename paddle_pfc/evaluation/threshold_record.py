"""The decision threshold a validation chose for a model, kept beside the model.

A model folder (an export, a checkpoint, a run's ``best/``) holds it as ``validation.json``; a
model file ``X.onnx`` as ``X.validation.json`` beside it (or its folder's ``validation.json``
when the folder is an export). The threshold is a cosine similarity of flip-summed embeddings
(``emb(x) + emb(flipped x)``, L2-normalized): a pair is "same" at or above it. It is chosen on
the first set validated by a rule of :mod:`paddle_pfc.evaluation.operating_point` (the middle of
the best-accuracy range, or a false-accept rate), which the record names; that set's accuracy is
selection-biased for the model the record belongs to (the set chose it).

File: ``{"threshold": 0.45, "threshold_kind": "cosine similarity", "flip": true, "rule":
"best_accuracy_middle", "rule_text": "middle of ...", "far": null, "genuine_pairs": 300,
"impostor_pairs": 300, "set": "pairs", "set_sha256": "...", "num_pairs": 600, "accuracy": 0.995,
"error_rates": {"frr": 0.01, "frr_interval": [lo, hi], "far": ..., "far_interval": [lo, hi],
"interval_method": "people_bootstrap_cross_validated" | "wilson_pairs", "people": 10, ...},
"sets": {name: {...}}}`` (``error_rates``: the threshold's rates on the pairs that chose it, with
the 95 % intervals of new people's rates when the set names its people,
:func:`paddle_pfc.evaluation.operating_point.chosen_error_rates`, which ``validate`` holds the
rates of other sets against; a record without ``rule`` holds the 10-fold mean of the per-fold
best thresholds).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

from paddle_pfc.utils.errors import InputDataError

__all__ = ["RECORD_FILE", "record_path", "write_record", "read_record", "ThresholdRecord", "file_sha256",
           "HOW_TO_RECORD", "FOLD_RULE_TEXT"]

RECORD_FILE = "validation.json"
HOW_TO_RECORD = ("record one with paddle-pfc-validate --model MODEL --bin SET.bin --record (a training run's "
                 "best/ holds one, and paddle-pfc-export carries it into the export)")
FOLD_RULE_TEXT = "insightface's 10-fold mean of the per-fold best thresholds"
_RECORDED = ("rule", "rule_text", "far", "genuine_pairs", "impostor_pairs", "warning", "sha256", "error_rates")


@dataclass(frozen=True)
class ThresholdRecord:
    """A record read back: the cosine ``threshold``, ``source`` (the file, set and pair count),
    ``rule_text`` (the rule that chose it), ``set_sha256`` (of the set that chose it, or None),
    ``far`` (the false-accept rate it was chosen at; None for the middle rule), ``predicted`` (the
    threshold's ``error_rates`` on the set that chose it, with ``set``: its name; None without)."""

    threshold: float
    source: str
    rule_text: str
    set_sha256: str | None
    far: float | None = None
    predicted: dict | None = None

    @property
    def where(self) -> str:
        """``FILE (set, N pairs; rule)``."""
        return f"{self.source}; {self.rule_text})"


def file_sha256(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file's bytes (names a verification set whatever its path)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def record_path(model: str | os.PathLike) -> Path:
    """Where the record of ``model`` (a folder or a model file) is written."""
    model = Path(model)
    if model.is_dir():
        return model / RECORD_FILE
    return model.with_name(model.stem + "." + RECORD_FILE)


def write_record(model: str | os.PathLike, sets: dict[str, dict]) -> Path:
    """Write the record of ``model`` from validation results ``{set: {"threshold": cosine,
    "num_pairs", "accuracy", "rule", "rule_text", ...}}`` (the first set's threshold, chosen by
    its ``rule``, decides); returns its path."""
    if not sets:
        raise ValueError("no validated set to record a threshold from")
    name, first = next(iter(sets.items()))
    payload = {"threshold": float(first["threshold"]), "threshold_kind": "cosine similarity", "flip": True,
               **{key: first.get(key) for key in _RECORDED}, "set": name, "num_pairs": int(first["num_pairs"]),
               "accuracy": float(first["accuracy"]),
               "accuracy_note": "selection-biased: these pairs chose the threshold (and best/ for a run)",
               "sets": sets}
    payload["set_sha256"] = payload.pop("sha256")
    path = record_path(model)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def _candidates(model: Path) -> list[Path]:
    if model.is_dir():
        return [model / RECORD_FILE]
    found = [record_path(model)]
    if (model.parent / "export.json").is_file():
        found.append(model.parent / RECORD_FILE)
    return found


def _far(value) -> float | None:
    """A recorded false-accept rate, or None (the middle rule, or not a rate)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 < value < 1.0:
        return None
    return float(value)


def _interval(value) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 <= v <= 1.0 for v in value)


def _predicted(rates, set_name) -> dict | None:
    """The recorded error rates with their intervals over people, or None when a record holds none
    (or not in that form: a record is data, checked, never trusted)."""
    if not isinstance(rates, dict) or not isinstance(rates.get("people"), int) \
            or not _interval(rates.get("frr_interval")) or not _interval(rates.get("far_interval")):
        return None
    return {"people": rates["people"], "frr_interval": list(rates["frr_interval"]),
            "far_interval": list(rates["far_interval"]), "interval_method": rates.get("interval_method"),
            "set": str(set_name)}


def read_record(model: str | os.PathLike) -> ThresholdRecord | None:
    """The :class:`ThresholdRecord` of ``model``, or None when there is no record;
    :class:`InputDataError` naming the file for a record that is not one."""
    for path in _candidates(Path(model)):
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise InputDataError(str(path), f"not a readable JSON record ({e})") from e
        value = data.get("threshold") if isinstance(data, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not -1.0 <= value <= 1.0 or data.get("threshold_kind") != "cosine similarity":
            raise InputDataError(str(path), "holds no cosine-similarity \"threshold\" in [-1, 1]")
        rule = data.get("rule_text") if data.get("rule") else FOLD_RULE_TEXT
        sha = data.get("set_sha256")
        return ThresholdRecord(float(value), f"{path} ({data.get('set', '?')}, {data.get('num_pairs', '?')} pairs",
                               str(rule), sha if isinstance(sha, str) else None, _far(data.get("far")),
                               _predicted(data.get("error_rates"), data.get("set")))
    return None
