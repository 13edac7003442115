"""The tools refuse impossible arguments and unusable output paths before any work (status 2,
``<tool>: error: ...`` naming the option), instead of failing at the end or printing nonsense."""
from __future__ import annotations

import pytest

from paddle_pfc.cli import eval_ijb, export, im2rec, infer, train, validate


def refused(capsys, call, *args: str) -> str:
    with pytest.raises(SystemExit) as exit_info:
        call(list(args))
    assert exit_info.value.code == 2
    return capsys.readouterr().err


@pytest.fixture()
def a_file(tmp_path):
    path = tmp_path / "a_file"
    path.write_text("not a folder")
    return path


def test_validate(capsys, tmp_path, a_file):
    base = ("--checkpoint", "ckpt", "--bin", "x.bin")
    assert "--nrof-folds must be >= 1" in refused(capsys, validate.parse_args, *base, "--nrof-folds", "0")
    assert "--plot roc.txt: the file name must end in one of .png" in refused(
        capsys, validate.parse_args, *base, "--plot", "roc.txt")
    assert f"--plot {tmp_path}: is a folder" in refused(capsys, validate.parse_args, *base, "--plot", str(tmp_path))
    assert f"{a_file} is a file, not a folder" in refused(
        capsys, validate.parse_args, *base, "--json", str(a_file / "out.json"))
    args = validate.parse_args([*base, "--json", str(tmp_path / "new" / "out.json"), "--plot", "r.PNG"])
    assert args.json.endswith("out.json")  # a missing folder is created when written


def test_eval_ijb(capsys, a_file):
    base = ("--model", "m", "--root", "r")
    for far in ("0", "1.5", "-1", "nan"):
        assert "a false accept rate is in (0, 1]" in refused(
            capsys, eval_ijb.parse_args, *base, "--out", "o", "--far", "1e-4", far)
    assert f"--out {a_file}: {a_file} is a file" in refused(capsys, eval_ijb.parse_args, *base, "--out", str(a_file))
    assert "--batch-size must be >= 1" in refused(capsys, eval_ijb.parse_args, *base, "--out", "o", "--batch-size", "0")
    assert eval_ijb.parse_args([*base, "--out", "o", "--far", "1", "1e-6"]).far == [1.0, 1e-6]


def test_infer(capsys):
    for threshold in ("5", "-1.5", "nan"):
        assert "a cosine similarity is in [-1, 1]" in refused(
            capsys, infer.parse_args, "--model", "m", "--compare", "a", "b", "--threshold", threshold)
    assert infer.parse_args(["--model", "m", "--compare", "a", "b", "--threshold", "-1"]).threshold == -1.0


def test_export(capsys, a_file):
    assert "-c / -o do not apply with --checkpoint" in refused(
        capsys, export.parse_args, "--checkpoint", "c", "-o", "model.embedding_size=64", "--out", "o")
    assert f"--out {a_file}: {a_file} is a file" in refused(
        capsys, export.parse_args, "--random-init", "--backbone", "mobilefacenet", "--out", str(a_file))


def test_im2rec_and_train_output_folders(capsys, a_file):
    assert f"--output {a_file}: {a_file} is a file" in refused(
        capsys, im2rec.main, "--root", "r", "--output", str(a_file))
    from launcher import REPO

    assert f"train.output_dir {a_file / 'run'}: {a_file} is a file" in refused(
        capsys, train.main, "-c", str(REPO / "tests" / "train_tiny.yaml"), "-o", f"train.output_dir={a_file / 'run'}")


def test_plan_says_whether_a_plan_fits(capsys):
    import json

    from paddle_pfc.cli import plan
    from paddle_pfc.head import planner

    need = planner.plan(1_000_000, 512, 2, 0.1, 128).total  # bytes per rank
    assert plan.main(["--num-classes", "1000000", "--world-size", "2", "--sample-ratio", "0.1",
                      "--memory", str(need - 1)]) == 0
    assert "DOES NOT FIT in --memory" in capsys.readouterr().out
    assert plan.main(["--num-classes", "1000000", "--world-size", "2", "--sample-ratio", "0.1",
                      "--memory", str(need), "--malloc", "memory", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fits"] is True
    assert plan.main(["--max-classes", "--memory", "1KiB"]) == 0
    assert "max_classes = 0 (the costs that do not grow with the classes alone exceed --memory)" in \
        capsys.readouterr().out
