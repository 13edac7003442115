"""A tiny training run with checkpoints, shared by the checkpoint tests: the trainer of the tests'
tiny config, ``tiny_run`` (checkpoints at steps 2 and 4; tests/engine/conftest.py's ``run`` fixture),
a copy of it to damage, and ``reseal`` (a changed file's checksum written into meta.json, as an
attacker would)."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import paddle_pfc
from launcher import REPO
from paddle_pfc.engine import checkpoint as ckpt
from paddle_pfc.engine.config import load_config
from paddle_pfc.engine.trainer import Trainer

CONFIG = str(REPO / "tests" / "train_tiny.yaml")


def make_trainer(out: Path, *overrides: str) -> Trainer:
    paddle_pfc.init_distributed()
    return Trainer(load_config(CONFIG, [f"train.output_dir={out}", *overrides]), 0, 1)


def tiny_run(tmp_path_factory) -> Path:
    """A tiny run's output folder with checkpoints at steps 2 and 4."""
    out = tmp_path_factory.mktemp("ckpt_run") / "run"
    make_trainer(out, "train.max_steps=4", "train.checkpoint_every_steps=2").train()
    assert [s for s, _ in ckpt.complete_checkpoints(out / "checkpoints")] == [2, 4]
    return out


def copy_run(run: Path, tmp_path: Path) -> Path:
    target = tmp_path / "run"
    shutil.copytree(run, target)
    return target


def reseal(folder: Path, name: str) -> None:
    """Record the current checksum of ``folder/name`` in meta.json (an edit made to look genuine)."""
    meta = json.loads((folder / "meta.json").read_text())
    path = folder / name
    meta["files"][name] = {"sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "bytes": path.stat().st_size}
    (folder / "meta.json").write_text(json.dumps(meta))
