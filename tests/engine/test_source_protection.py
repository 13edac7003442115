"""A run never deletes or replaces the model it fine-tunes from (``--overwrite``, checkpoint
rotation, ``best/``): refused before anything is deleted, naming the conflict and the way out."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from launcher import REPO
from paddle_pfc.engine.protect import SourceInOutputError, check_sources_spared


def _run_folder(root: Path) -> Path:
    step = root / "checkpoints" / "step_000000004"
    step.mkdir(parents=True)
    (step / "meta.json").write_text("{}")
    (root / "checkpoints" / "latest").write_text(step.name)
    (root / "best").mkdir()
    (root / "best" / "meta.json").write_text("{}")
    return step


@pytest.mark.parametrize("source, folder", [
    ("checkpoints/step_000000004", "checkpoints"),   # --overwrite deletes it; rotation too
    ("checkpoints", "checkpoints"),                  # a checkpoints root: its latest
    ("best", "best"),                                # --overwrite deletes it; a better validation replaces it
    ("best/meta.json", "best"),
])
def test_a_source_in_a_deleted_folder_is_refused(tmp_path, source, folder):
    _run_folder(tmp_path / "run")
    with pytest.raises(SourceInOutputError, match=f"inside .*{folder} of train.output_dir.*Nothing was deleted"):
        check_sources_spared(tmp_path / "run", tmp_path / "run" / source)


def test_the_run_folder_itself_and_an_output_inside_the_source_are_refused(tmp_path):
    _run_folder(tmp_path / "run")
    with pytest.raises(SourceInOutputError, match="is \\(or lies inside\\) model.pretrained"):
        check_sources_spared(tmp_path / "run", tmp_path / "run")
    with pytest.raises(SourceInOutputError, match="is \\(or lies inside\\) model.pretrained"):
        check_sources_spared(tmp_path / "run" / "best" / "ft", tmp_path / "run" / "best")


def test_paths_are_compared_resolved(tmp_path, monkeypatch):
    """A symbolic link, ``..`` or a relative path naming the same folder is the same folder."""
    _run_folder(tmp_path / "run")
    os.symlink(tmp_path / "run", tmp_path / "alias")
    with pytest.raises(SourceInOutputError):
        check_sources_spared(tmp_path / "run", tmp_path / "alias" / "checkpoints" / "step_000000004")
    with pytest.raises(SourceInOutputError):
        check_sources_spared(tmp_path / "alias", tmp_path / "run" / "best")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SourceInOutputError):
        check_sources_spared("other/../run", "run/checkpoints")


def test_sources_elsewhere_pass(tmp_path):
    _run_folder(tmp_path / "run")
    check_sources_spared(tmp_path / "run_finetune", tmp_path / "run" / "best")
    check_sources_spared(tmp_path / "run", tmp_path / "run_model")       # an export beside the run
    check_sources_spared(tmp_path / "run", tmp_path / "run" / "export")  # nothing deletes output_dir/export
    check_sources_spared(tmp_path / "run", None)


def _train(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "tools/train.py", "-c", str(REPO / "tests" / "train_tiny.yaml"), *args],
                          cwd=REPO, capture_output=True, text=True, timeout=300)


def test_overwrite_into_the_source_run_deletes_nothing(tmp_path):
    """The trap: fine-tuning with the source run's output_dir and --overwrite deleted every
    checkpoint of the source, then reported it missing."""
    out = tmp_path / "run"
    first = _train("-o", "train.max_steps=4", "-o", f"train.output_dir={out}")
    assert first.returncode == 0, first.stderr[-2000:]
    before = sorted(p.name for p in (out / "checkpoints").iterdir())
    assert "step_000000004" in before
    again = _train("-o", "train.max_steps=2", "-o", f"train.output_dir={out}", "--overwrite",
                   "--pretrained", str(out / "checkpoints"), "-o", "data.num_classes=12")
    assert again.returncode == 2, again.stdout[-2000:] + again.stderr[-2000:]
    assert "Nothing was deleted" in again.stderr and "train.output_dir" in again.stderr, again.stderr[-2000:]
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == before
    # without --overwrite the error names the same way out (not --overwrite)
    plain = _train("-o", "train.max_steps=2", "-o", f"train.output_dir={out}",
                   "--pretrained", str(out / "checkpoints" / "step_000000004"), "-o", "data.num_classes=12")
    assert plain.returncode == 2 and "Nothing was deleted" in plain.stderr and "add --overwrite" not in plain.stderr
