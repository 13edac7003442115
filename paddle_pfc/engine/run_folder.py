"""What a missing model path of a training run means (a ``best/`` no validation wrote, a run that
has not trained) and what to give instead: the messages of every command that reads a run's
output. Imports nothing of the engine."""
from __future__ import annotations

import os
from pathlib import Path

from paddle_pfc.data.formats import PAIRS_COMMAND


def missing_best_reason(path: str | os.PathLike) -> tuple[str, Path] | None:
    """For a missing ``RUN/best`` of a run that has ``RUN/checkpoints``: ``(why best/ is missing,
    the checkpoints folder to use instead)``; else None. ``best/`` is written only by a validation."""
    best = Path(path)
    run = best.parent
    if best.name != "best" or best.exists() or not (run / "checkpoints").is_dir():
        return None
    why = "the run validated nothing (validation.sets: [])"
    config = run / "config.yaml"
    if config.is_file():
        import yaml

        try:
            sets = (yaml.safe_load(config.read_text()) or {}).get("validation", {}).get("sets")
        except (yaml.YAMLError, AttributeError):
            sets = None
        if sets:
            why = "no validation of the run has finished yet (validation.every_steps, or each epoch's end)"
    return why, run / "checkpoints"


def missing_model_reason(path: str | os.PathLike) -> str:
    """Why the model folder or file ``path`` (which does not exist) is missing and what to give
    instead: a run's ``best/`` that no validation wrote, a run that has not trained."""
    reason = missing_best_reason(path)
    if reason is not None:
        why, checkpoints = reason
        return (f"no best/ in {Path(path).parent}, because {why}. Use its newest checkpoint, {checkpoints}, or "
                "re-run that training with validation.sets (the recipes validate on data.root/pairs.bin, "
                f"which {PAIRS_COMMAND} writes)")
    run = Path(path).parent if Path(path).name in ("best", "checkpoints") else None
    if run is not None and not (run / "checkpoints").is_dir():
        return (f"not found: no training run in {run} (no checkpoints/); train one there first "
                f"(python tools/train.py -c CONFIG ... -o train.output_dir={run})")
    return "no such file or folder"


def missing_pretrained_message(path: str | os.PathLike) -> str:
    """``model.pretrained`` ``path`` does not exist: why, and what to give instead."""
    reason = missing_model_reason(path)
    if reason == "no such file or folder" or reason.startswith("not found"):
        reason += (" (--pretrained takes a checkpoint, a run's best/, an export or a public model: "
                   "docs/finetuning.md)")
    return f"pretrained {path}: {reason}"
