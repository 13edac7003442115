"""The decision threshold a validation chose for a model, kept beside the model.

A model folder (an export, a checkpoint, a run's ``best/``) holds it as ``validation.json``; a
model file ``X.onnx`` as ``X.validation.json`` beside it (or its folder's ``validation.json``
when the folder is an export). The threshold is a cosine similarity of flip-summed embeddings
(``emb(x) + emb(flipped x)``, L2-normalized): a pair is "same" at or above it. It is the
threshold of the first set validated (10-fold mean of the per-fold best thresholds).

File: ``{"threshold": 0.31, "threshold_kind": "cosine similarity", "flip": true,
"set": "lfw", "num_pairs": 6000, "accuracy": 0.995, "sets": {name: {...}}}``.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

from paddle_pfc.utils.errors import InputDataError

__all__ = ["RECORD_FILE", "record_path", "write_record", "read_record", "HOW_TO_RECORD"]

RECORD_FILE = "validation.json"
HOW_TO_RECORD = ("record one with paddle-pfc-validate --model MODEL --bin SET.bin --record (a training run's "
                 "best/ holds one, and paddle-pfc-export carries it into the export)")


def record_path(model: str | os.PathLike) -> Path:
    """Where the record of ``model`` (a folder or a model file) is written."""
    model = Path(model)
    if model.is_dir():
        return model / RECORD_FILE
    return model.with_name(model.stem + "." + RECORD_FILE)


def write_record(model: str | os.PathLike, sets: dict[str, dict]) -> Path:
    """Write the record of ``model`` from validation results ``{set: {"threshold": cosine,
    "num_pairs", "accuracy", ...}}`` (the first set's threshold decides); returns its path."""
    if not sets:
        raise ValueError("no validated set to record a threshold from")
    name, first = next(iter(sets.items()))
    payload = {"threshold": float(first["threshold"]), "threshold_kind": "cosine similarity", "flip": True,
               "set": name, "num_pairs": int(first["num_pairs"]), "accuracy": float(first["accuracy"]),
               "sets": sets}
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


def read_record(model: str | os.PathLike) -> tuple[float, str] | None:
    """``(cosine threshold, where it came from)`` recorded for ``model``, or None when there is
    no record; :class:`InputDataError` naming the file for a record that is not one."""
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
        detail = f"{data.get('set', '?')}, {data.get('num_pairs', '?')} pairs"
        return float(value), f"{path} ({detail})"
    return None
