"""``plan_resume``: the :class:`ResumePlan` of each way a run starts, on real run folders (the tiny
run's checkpoints at steps 2 and 4, copied before they are changed)."""
from pathlib import Path

import pytest

from helpers.checkpoint_runs import CONFIG, copy_run
from paddle_pfc.engine import checkpoint as ckpt
from paddle_pfc.engine.config import load_config
from paddle_pfc.engine.overwrite import OutputDirError
from paddle_pfc.engine.protect import SourceInOutputError
from paddle_pfc.engine.resume import ResumePlan, plan_resume


def plan(out: Path, *overrides: str) -> ResumePlan:
    return plan_resume(load_config(CONFIG, [f"train.output_dir={out}", *overrides]))


def damage(folder: Path) -> None:
    (folder / "backbone.npz").write_bytes(b"not the saved backbone")


def test_fresh_start_into_an_empty_folder(tmp_path):
    assert plan(tmp_path / "new") == ResumePlan("nothing", None, 0, "fresh")


def test_fresh_start_from_a_pretrained_model(tmp_path):
    source = tmp_path / "model"
    assert plan(tmp_path / "new", f"model.pretrained={source}") == ResumePlan("pretrained", source, 0, "fresh")


def test_auto_without_checkpoints_starts_fresh(tmp_path):
    assert plan(tmp_path / "new", "train.resume=auto") == ResumePlan("nothing", None, 0, "auto-none")


def test_auto_takes_the_newest_checkpoint(run, tmp_path):
    out = copy_run(run, tmp_path)
    got = plan(out, "train.resume=auto")
    assert got == ResumePlan("checkpoint", out / "checkpoints" / "step_000000004", 4, "auto")
    assert got.checkpoint == got.source


def test_auto_skips_a_damaged_newest_checkpoint(run, tmp_path):
    out = copy_run(run, tmp_path)
    damage(out / "checkpoints" / "step_000000004")
    got = plan(out, "train.resume=auto")
    assert (got.load, got.source, got.step, got.why) == ("checkpoint", out / "checkpoints" / "step_000000002", 2,
                                                          "auto")
    assert [folder.name for folder, _ in got.damaged] == ["step_000000004"]


def test_auto_skips_an_unreadable_meta_and_starts_fresh_when_none_is_intact(run, tmp_path):
    out = copy_run(run, tmp_path)
    (out / "checkpoints" / "step_000000004" / "meta.json").write_text("{")
    damage(out / "checkpoints" / "step_000000002")
    got = plan(out, "train.resume=auto")
    assert (got.load, got.checkpoint, got.step, got.why) == ("nothing", None, 0, "auto-none")
    assert [folder.name for folder, _ in got.unreadable] == ["step_000000004"]
    assert [folder.name for folder, _ in got.damaged] == ["step_000000002"]


def test_a_named_checkpoint(run, tmp_path):
    named = run / "checkpoints" / "step_000000002"
    assert plan(tmp_path / "other", f"train.resume={named}") == ResumePlan("checkpoint", named, 2, "named")


def test_a_checkpoints_root_names_its_latest(run, tmp_path):
    got = plan(tmp_path / "other", f"train.resume={run / 'checkpoints'}")
    assert (got.checkpoint, got.step, got.why) == (run / "checkpoints" / "step_000000004", 4, "named")


def test_a_named_damaged_checkpoint_is_refused(run, tmp_path):
    out = copy_run(run, tmp_path)
    damage(out / "checkpoints" / "step_000000002")
    with pytest.raises(ckpt.CheckpointError, match="backbone.npz"):
        plan(tmp_path / "other", f"train.resume={out / 'checkpoints' / 'step_000000002'}")


def test_a_finished_run_resumes_at_its_end(run, tmp_path):
    """The plan names the last checkpoint whatever the run's length; the trainer finds nothing to train."""
    got = plan(copy_run(run, tmp_path), "train.resume=auto", "train.max_steps=4")
    assert (got.load, got.step) == ("checkpoint", 4)


def test_a_fresh_start_over_an_earlier_run_is_refused(run, tmp_path):
    out = copy_run(run, tmp_path)
    with pytest.raises(OutputDirError, match="newest complete: step_000000004"):
        plan(out)


def test_overwrite_lists_the_earlier_run_to_delete(run, tmp_path):
    out = copy_run(run, tmp_path)
    got = plan(out, "train.overwrite=true")
    root = out / "checkpoints"
    assert (got.load, got.step, got.why) == ("nothing", 0, "overwrite")
    assert got.delete == (root / ckpt.LATEST, root / "step_000000002", root / "step_000000004")
    assert (root / "step_000000002").is_dir()  # planned, not deleted


def test_a_pretrained_model_inside_the_checkpoints_is_refused(run, tmp_path):
    out = copy_run(run, tmp_path)
    with pytest.raises(SourceInOutputError):
        plan(out, "train.overwrite=true", f"model.pretrained={out / 'checkpoints' / 'step_000000004'}")
