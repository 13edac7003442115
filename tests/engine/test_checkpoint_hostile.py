"""Crafted checkpoints are refused before they hang, bomb or train on garbage: files that are no
regular files of the checkpoint (a link to /dev/zero, a FIFO) and center shards that do not
partition the classes."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers.checkpoint_runs import copy_run, make_trainer, reseal
from launcher import REPO
from paddle_pfc.engine import checkpoint as ckpt

NEWEST, OLDER = "step_000000004", "step_000000002"


@pytest.fixture
def out(run, tmp_path) -> Path:
    return copy_run(run, tmp_path)


def in_subprocess(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter; a hang is a failure, not a stuck test session."""
    try:
        return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"hung for {timeout} s: {code}")


@pytest.mark.parametrize("kind", ["link to /dev/zero", "fifo"])
@pytest.mark.parametrize("name", ["states.npz", "meta.json"])
def test_a_file_that_is_no_regular_file_is_refused_without_reading_it(out, kind, name):
    """A link to /dev/zero (endless) or a FIFO (blocks on open) in place of a checkpoint file:
    verify, export's loader and ``--resume auto`` name it and go on, instead of hanging."""
    root = out / "checkpoints"
    path = root / NEWEST / name
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    code = (f"from paddle_pfc.engine import checkpoint as c\n"
            f"try:\n    c.verify_checkpoint({str(root / NEWEST)!r})\n"
            f"except c.CheckpointError as e:\n    print('refused:', e)\n"
            f"print(c.newest_intact_checkpoint({str(root)!r})[0])\n")
    proc = in_subprocess(code)
    assert proc.returncode == 0, proc.stderr
    refused, resumed = proc.stdout.splitlines()
    assert refused.startswith(f"refused: checkpoint file {path} is ")
    assert ("outside the checkpoint" if kind != "fifo" else "not a regular file") in refused
    assert resumed == str(root / OLDER)


def test_a_link_inside_the_checkpoint_to_a_device_is_refused(out):
    folder = out / "checkpoints" / NEWEST
    (folder / "zero").symlink_to("/dev/zero")
    (folder / "states.npz").unlink()
    (folder / "states.npz").symlink_to("zero")
    proc = in_subprocess(f"from paddle_pfc.engine import checkpoint as c\nc.verify_checkpoint({str(folder)!r})")
    assert proc.returncode == 1
    assert (f"CheckpointError: checkpoint file {folder / 'states.npz'} is a symbolic link to /dev/zero, outside "
            "the checkpoint") in proc.stderr


def test_a_longer_file_is_refused_by_its_size_before_hashing(out):
    folder = out / "checkpoints" / NEWEST
    path = folder / "states.npz"
    size = path.stat().st_size
    with open(path, "ab") as f:
        f.write(b"\0" * 10)
    with pytest.raises(ckpt.CheckpointError, match=re.escape(f"{path} is damaged: {size + 10} bytes, meta.json "
                                                             f"records {size}")):
        ckpt.verify_checkpoint(folder)


def split_in_two(folder: Path, ranges: list[tuple[int, int]]) -> None:
    """Rewrite the one-rank checkpoint ``folder`` as two ranks' center shards holding ``ranges``
    (``(class_start, num_local)`` each, rows taken from the saved centers), checksums resealed."""
    centers = folder / "centers"
    full = {kind: np.load(centers / f"head0.{kind}.rank0.npy") for kind in ("weight", "velocity")
            if (centers / f"head0.{kind}.rank0.npy").exists()}
    info = json.loads((centers / "head0.rank0.json").read_text())
    for rank, (start, count) in enumerate(ranges):
        for kind, value in full.items():
            np.save(centers / f"head0.{kind}.rank{rank}.npy", value[start:start + count])
            reseal(folder, f"centers/head0.{kind}.rank{rank}.npy")
        (centers / f"head0.rank{rank}.json").write_text(json.dumps(dict(info, class_start=start, num_local=count)))
        reseal(folder, f"centers/head0.rank{rank}.json")
    meta = json.loads((folder / "meta.json").read_text())
    (folder / "meta.json").write_text(json.dumps(dict(meta, world_size=len(ranges))))


def test_overlapping_center_shards_are_refused_and_resume_auto_skips_them(out):
    """Two shards both claiming classes [0, 12) of 24: rows [12, 24) would stay uninitialised."""
    root = out / "checkpoints"
    split_in_two(root / NEWEST, [(0, 12), (0, 12)])
    info = root / NEWEST / "centers" / "head0.rank1.json"
    message = re.escape(f"checkpoint file {info}: shard classes [0, 12) overlaps classes [0, 12) of the ranks "
                        "before it")
    with pytest.raises(ckpt.CheckpointError, match=message):
        ckpt.verify_checkpoint(root / NEWEST)
    with pytest.raises(ckpt.CheckpointError, match=message):
        make_trainer(out / "load").resume(str(root / NEWEST))
    trainer = make_trainer(out, "train.resume=auto", "train.max_steps=4")
    assert trainer.resume_path == str(root / OLDER)


@pytest.mark.parametrize("ranges, problem", [
    ([(0, 10), (12, 12)], "shard classes [12, 24) leaves a gap after classes [0, 10)"),
    ([(0, 12), (12, 6)], "hold classes [0, 18), meta.json records 24 classes"),
    ([(0, 12), (12, 20)], "hold classes [0, 32), meta.json records 24 classes"),
])
def test_center_shards_must_partition_the_classes(out, ranges, problem):
    folder = out / "checkpoints" / NEWEST
    split_in_two(folder, ranges)
    with pytest.raises(ckpt.CheckpointError, match=re.escape(problem)):
        ckpt.verify_checkpoint(folder)


def test_reshard_rows_refuses_overlapping_shards(tmp_path):
    full = np.arange(24 * 3, dtype=np.float32).reshape(24, 3)
    (tmp_path / "centers").mkdir()
    for rank in range(2):
        np.save(tmp_path / "centers" / f"head0.weight.rank{rank}.npy", full[:12])
        (tmp_path / "centers" / f"head0.rank{rank}.json").write_text('{"class_start": 0, "num_local": 12}')
    with pytest.raises(ckpt.CheckpointError, match=r"head0\.rank1\.json: shard classes \[0, 12\) overlaps"):
        ckpt.reshard_rows(tmp_path, 0, "weight", 2, 0, 24, 3)
