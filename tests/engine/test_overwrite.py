"""``--overwrite`` deletes only what a run wrote, only when it can delete all of it, and never the
data; rotation that cannot delete a checkpoint says so."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.checkpoint_runs import copy_run
from launcher import REPO
from paddle_pfc.engine import checkpoint as ckpt

CONFIG = str(REPO / "tests" / "train_tiny.yaml")


def train(*args: str) -> subprocess.CompletedProcess:
    """``paddle-pfc-train`` of this worktree on the tiny config."""
    return subprocess.run([sys.executable, "-m", "paddle_pfc.cli.train", "-c", CONFIG, *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def tree(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """A tiny run's output folder with checkpoints at steps 2 and 4."""
    out = tmp_path_factory.mktemp("overwrite") / "run"
    done = train("-o", "train.max_steps=4", "-o", "train.checkpoint_every_steps=2", "-o", f"train.output_dir={out}")
    assert done.returncode == 0, done.stderr[-2000:]
    return out


@pytest.fixture
def out(run, tmp_path) -> Path:
    return copy_run(run, tmp_path)


@pytest.fixture
def immutable():
    """``immutable(path)``: ``chattr +i path`` (undone after the test); skips where it is not possible."""
    locked = []

    def lock(path: Path) -> None:
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)]).returncode != 0:
            pytest.skip("chattr +i is not available here")
        locked.append(path)

    yield lock
    for path in locked:
        subprocess.run(["chattr", "-i", str(path)])


@pytest.mark.parametrize("where", ["data root", "inside the data", "holds the data"])
def test_an_output_dir_at_the_data_is_refused_and_no_identity_is_deleted(tmp_path, where):
    """An image folder with an identity named ``best``: --overwrite deleted it as an earlier run's best model."""
    data = tmp_path / "faces"
    for identity in ("alice", "best"):
        (data / identity).mkdir(parents=True)
        (data / identity / "0.jpg").write_bytes(b"\xff\xd8 not decoded")
    output_dir = {"data root": data, "inside the data": data / "runs", "holds the data": tmp_path}[where]
    before = tree(data)
    done = train("-o", "data.kind=folder", "-o", f"data.root={data}", "-o", f"train.output_dir={output_dir}",
                 "--overwrite")
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"train.output_dir {output_dir} is, holds or lies inside data.root {data}" in done.stderr
    assert "Traceback" not in done.stderr
    assert tree(data) == before  # every identity and image still there, nothing written into the data


@pytest.mark.parametrize("stranger", ["best/notes.txt", "checkpoints/step_000000009/weights.bin",
                                      "checkpoints/step_000000010.partial/photo.jpg"])
def test_overwrite_refuses_folders_no_run_wrote_and_deletes_nothing(out, stranger):
    (out / stranger).parent.mkdir(parents=True, exist_ok=True)
    (out / stranger).write_text("someone's file")
    before = tree(out)
    done = train("-o", "train.max_steps=2", "-o", f"train.output_dir={out}", "--overwrite")
    assert done.returncode == 2, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert (len(lines) == 1 and "Traceback" not in done.stderr
            and f"--overwrite refused: {out / Path(stranger).parent}" in lines[0]), done.stderr
    assert "Nothing was deleted" in lines[0]
    assert [p for p in tree(out) if "error_rank" not in p and "lock" not in p] == \
        [p for p in before if "lock" not in p]


def test_overwrite_checks_every_deletion_before_deleting_any(out, immutable):
    """A checkpoint that cannot be deleted (immutable meta.json): the old checkpoints and ``latest``
    stay as they were, and the error names the folder."""
    root = out / "checkpoints"
    immutable(root / "step_000000004" / "meta.json")
    before = tree(out)
    done = train("-o", "train.max_steps=2", "-o", f"train.output_dir={out}", "--overwrite")
    assert done.returncode == 2, done.stderr[-2000:]
    assert (f"--overwrite cannot delete {root / 'step_000000004'}: {root / 'step_000000004' / 'meta.json'} is "
            "immutable or append-only (lsattr). Nothing was deleted") in done.stderr
    assert "Traceback" not in done.stderr
    assert [p for p in tree(out) if "error_rank" not in p and "lock" not in p] == \
        [p for p in before if "lock" not in p]
    assert ckpt.latest_checkpoint(root) == root / "step_000000004"


def test_overwrite_deletes_a_run_in_order_and_starts_fresh(out):
    shutil.copytree(out / "checkpoints" / "step_000000004", out / "best")  # a best/ with our marker
    done = train("-o", "train.max_steps=2", "-o", "train.checkpoint_every_steps=2", "-o",
                 f"train.output_dir={out}", "--overwrite")
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["latest", "step_000000002"]
    assert not (out / "best").exists()


def test_rotation_that_cannot_delete_a_checkpoint_warns_naming_it(out, immutable):
    root = out / "checkpoints"
    immutable(root / "step_000000002" / "meta.json")
    done = train("-o", "train.max_steps=6", "-o", "train.checkpoint_every_steps=2", "-o", "train.keep_checkpoints=1",
                 "-o", f"train.output_dir={out}", "--resume", "auto")
    assert done.returncode == 0, done.stderr[-2000:]
    assert (f"checkpoint rotation (train.keep_checkpoints=1) could not delete {root / 'step_000000002'}: "
            f"{root / 'step_000000002' / 'meta.json'} is immutable or append-only (lsattr); it stays") in done.stdout
    assert sorted(p.name for p in root.iterdir()) == ["latest", "step_000000002", "step_000000006"]
    ckpt.verify_checkpoint(root / "step_000000002")  # kept whole, not half deleted


def test_a_run_leaves_an_unfinished_folder_holding_a_strangers_file(out):
    """A run removes the ``step_N.partial`` folders a killed save left, but not one holding
    something no save writes."""
    root = out / "checkpoints"
    (root / "step_000000010.partial").mkdir()
    (root / "step_000000010.partial" / "photo.jpg").write_text("someone's file")
    (root / "step_000000012.partial" / "centers").mkdir(parents=True)  # what a killed save leaves
    done = train("-o", "train.max_steps=6", "-o", f"train.output_dir={out}", "--resume", "auto")
    assert done.returncode == 0, done.stderr[-2000:]
    assert (root / "step_000000010.partial" / "photo.jpg").exists()
    assert not (root / "step_000000012.partial").exists()
    assert (f"left {root / 'step_000000010.partial'} as it is: {root / 'step_000000010.partial'} holds "
            "'photo.jpg', which no checkpoint save writes") in done.stdout
