"""A training run whose data, pretrained model or verification set is missing is refused before
its output folder exists, naming what is missing and the command that makes it."""
from __future__ import annotations

from pathlib import Path

import pytest

from paddle_pfc.cli.train import main
from paddle_pfc.engine.config import load_config, resolve_validation_sets

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def rec_folder(root: Path, pairs: bool = True) -> Path:
    """A data root that holds what the preflight looks for (``train.rec``, ``pairs.bin``)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "train.rec").write_bytes(b"")
    if pairs:
        (root / "pairs.bin").write_bytes(b"")
    return root


def unvalidated_run(run: Path) -> Path:
    """A finished training run that validated nothing: checkpoints, no best/."""
    (run / "checkpoints" / "step_000000012").mkdir(parents=True)
    (run / "config.yaml").write_text("validation:\n  sets: []\n")
    return run


def train(tmp_path: Path, recipe: str, *options: str) -> int:
    return main(["-c", str(CONFIGS / recipe), "-o", f"train.output_dir={tmp_path / 'out'}", *options])


def test_pretrained_best_of_a_run_that_validated_nothing(tmp_path, capsys):
    data, run = rec_folder(tmp_path / "rec"), unvalidated_run(tmp_path / "train_small")
    assert train(tmp_path, "finetune_small.yaml", "--pretrained", str(run / "best"), "-o", f"data.root={data}") == 2
    err = capsys.readouterr().err
    assert f"no best/ in {run}, because the run validated nothing" in err
    assert f"Use its newest checkpoint, {run / 'checkpoints'}" in err and "validation.sets" in err
    assert not (tmp_path / "out").exists()  # no output skeleton left behind


def test_pretrained_best_of_no_run(tmp_path, capsys):
    data = rec_folder(tmp_path / "rec")
    assert train(tmp_path, "finetune_small.yaml", "--pretrained", str(tmp_path / "nowhere" / "best"),
                 "-o", f"data.root={data}") == 2
    err = capsys.readouterr().err
    assert f"no training run in {tmp_path / 'nowhere'}" in err and f"train.output_dir={tmp_path / 'nowhere'}" in err
    assert not (tmp_path / "out").exists()


def test_missing_pairs_names_the_pairs_command(tmp_path, capsys):
    data = rec_folder(tmp_path / "rec", pairs=False)
    assert train(tmp_path, "train_small.yaml", "-o", f"data.root={data}") == 2
    err = capsys.readouterr().err
    assert f"validation.sets 'heldout': {data / 'pairs.bin'} not found" in err
    assert "tools/pairs.py --root" in err and "validation.sets=[]" in err
    assert not (tmp_path / "out").exists()


def test_missing_data_names_the_command_that_makes_it(tmp_path, capsys):
    empty = tmp_path / "rec"
    empty.mkdir()
    assert train(tmp_path, "train_small.yaml", "-o", f"data.root={empty}") == 2
    assert "no train.rec. python tools/im2rec.py --root" in capsys.readouterr().err
    folder = rec_folder(tmp_path / "faces")
    assert train(tmp_path, "train_small.yaml", "-o", "data.kind=folder", "-o", f"data.root={folder}") == 2
    err = capsys.readouterr().err
    assert f"data.label_file {folder / 'train_label.txt'}: not found" in err and "tools/pairs.py" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("recipe", ["train_small.yaml", "finetune_small.yaml"])
def test_the_small_recipes_validate_on_the_held_out_pairs(recipe):
    cfg = load_config(str(CONFIGS / recipe), ["data.root=my_faces_rec"])
    assert resolve_validation_sets(cfg) == [("heldout", "my_faces_rec/pairs.bin")]
    assert cfg.data.label_file == "train_label.txt"


def test_export_of_a_missing_best_names_the_checkpoints(tmp_path):
    from paddle_pfc.cli.export import explain_missing_best

    run = unvalidated_run(tmp_path / "run")
    with pytest.raises(ValueError, match=f"the run validated nothing.*--checkpoint {run / 'checkpoints'}"):
        explain_missing_best(str(run / "best"))


def run_tiny(tmp_path: Path, *options: str) -> str:
    """tools/train.py on tests/train_tiny.yaml for 4 steps; its stdout (the log)."""
    import subprocess
    import sys

    repo = CONFIGS.parent
    proc = subprocess.run([sys.executable, str(repo / "tools" / "train.py"), "-c",
                           str(repo / "tests" / "train_tiny.yaml"),
                           "-o", "train.max_steps=4", "-o", f"train.output_dir={tmp_path / 'run'}", *options],
                          cwd=repo, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_a_run_without_validation_names_its_model_at_the_end(tmp_path):
    last = run_tiny(tmp_path).strip().splitlines()[-1]
    checkpoints = tmp_path / "run" / "checkpoints"
    assert "no validation set (validation.sets: []), so no best/" in last
    assert f"--checkpoint {checkpoints}" in last and f"--pretrained {checkpoints}" in last


def test_a_best_that_is_the_starting_model_is_said(tmp_path):
    """lr 0 trains nothing: no validation beats step 0's, and the last line says best/ is that model."""
    last = run_tiny(tmp_path, "-o", "validation.synthetic_pairs=40", "-o", "train.lr=1e-12").strip().splitlines()[-1]
    assert "no validation beat the model as it started (step 0" in last and "UNCHANGED starting model" in last


@pytest.mark.parametrize("history, best_step, said, verdict", [
    ([(0, {"heldout": 0.95, "lfw": 0.97}), (54, {"heldout": 0.98, "lfw": 0.98})], 54,
     "best model: step 54, mean accuracy 0.98000 on the validation sets (the model as it started, step 0: "
     "0.96000), in ", "; training beat the model as it started by 2.00 points. "),
    ([(6, {"heldout": 0.97}), (12, {"heldout": 0.98})], 12,  # a resumed run: no step 0 of its own
     "best model: step 12, mean accuracy 0.98000 on the validation sets, in ", ". "),
])
def test_the_last_line_sets_best_against_the_start(tmp_path, caplog, history, best_step, said, verdict):
    """A fine-tuning run's last line says whether training beat the model it started from."""
    import logging
    from types import SimpleNamespace

    from paddle_pfc.engine.validator import Validator

    validator = Validator.__new__(Validator)  # the state a finished run leaves, without programs
    validator.rank, validator.sets, validator.output_dir = 0, {"heldout": None}, tmp_path
    validator.history, validator.best_step = history, best_step
    validator.state = SimpleNamespace(best_accuracy=0.98)
    with caplog.at_level(logging.INFO, logger="paddle_pfc.train"):
        validator.on_train_end(validator.state)
    [message] = [r.getMessage() for r in caplog.records]
    assert message.startswith(f"{said}{tmp_path / 'best'}{verdict}That accuracy is selection-biased (these pairs "
                              "chose best/ and its threshold): score people neither training nor selection saw with "
                              f"python tools/validate.py --checkpoint {tmp_path / 'best'} --bin TEST.bin")
