"""The files a training run names, checked before anything is written: a run refused for a
missing input leaves no output folder behind. Each message names what is missing and the command
that makes it."""
from __future__ import annotations

import os
from pathlib import Path

from paddle_pfc.data.formats import PAIRS_COMMAND, data_format
from paddle_pfc.engine.run_folder import missing_pretrained_message
from paddle_pfc.utils.errors import UsageError


def _starts_fresh(cfg) -> bool:
    """True when the run takes its backbone from ``model.pretrained`` (no checkpoint to resume)."""
    resume = cfg.train.resume
    if resume in (None, ""):
        return True
    return resume == "auto" and not any((Path(cfg.train.output_dir) / "checkpoints").glob("step_*"))


def check_run_inputs(cfg) -> None:
    """``UsageError`` naming the first missing input of ``cfg``: its data (the files its format's row
    of :data:`~paddle_pfc.data.formats.FORMATS` requires), its ``model.pretrained``
    (when the run starts from it: missing, or of another architecture than ``cfg.model``), a
    ``validation.sets`` file."""
    missing = data_format(cfg.data.kind).missing_input(cfg.data)
    if missing is not None:
        raise UsageError(missing)
    pretrained = cfg.model.pretrained
    if pretrained and _starts_fresh(cfg):
        source = Path(pretrained).expanduser()
        if not source.exists():
            raise UsageError(missing_pretrained_message(pretrained))
        if not (source / "export.json").is_file():  # an export is checked by running it: at the first step
            from paddle_pfc.engine.pretrained import check_architecture, read_pretrained_early

            m = cfg.model
            check_architecture(read_pretrained_early(source), m.backbone, m.embedding_size, m.input_size)
    from paddle_pfc.engine.config import resolve_validation_sets

    for name, path in resolve_validation_sets(cfg):
        if not os.path.isfile(path):
            raise UsageError(f"validation.sets {name!r}: {path} not found. {PAIRS_COMMAND} writes pairs.bin "
                             "(pairs of identities held out of training; tools/im2rec.py copies it next to "
                             "train.rec); -o validation.sets=[] trains without validation (and without best/)")
