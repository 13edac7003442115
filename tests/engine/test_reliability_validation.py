"""Validation on every rank (each embeds its share, embeddings gathered): the same result as one
rank; verification sets checked at start-up; progress lines; a validation longer than gloo's 30 s on 2 ranks."""
from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from launcher import REPO, launch
from paddle_pfc.data.synthetic import make_verification_set
from paddle_pfc.evaluation.bin_set import read_bin, write_bin

TRAIN = REPO / "tools" / "train.py"
CONFIG = REPO / "tests" / "train_tiny.yaml"


def write_set(path: Path, pairs: int, size: int = 32) -> Path:
    bins, issame = make_verification_set(12, pairs, size, seed=5)
    write_bin(str(path), bins, issame)
    return path


def validations(output_dir: Path, name: str) -> dict[int, float]:
    out = {}
    for line in (output_dir / "metrics.jsonl").read_text().splitlines():
        record = json.loads(line)
        if f"val/{name}" in record:
            out[record["step"]] = record[f"val/{name}"]
    return out


@pytest.fixture(scope="module")
def two_rank_run(tmp_path_factory) -> tuple[Path, Path]:
    """(output folder, .bin): 1 step of tests/train_tiny.yaml on 2 ranks that validates a
    600-pair set (1200 images, 600 a rank) at steps 0 and 1, with the checkpoint of step 1."""
    tmp = tmp_path_factory.mktemp("two_rank_validation")
    bin_path = write_set(tmp / "pairs.bin", 600)
    out = tmp / "run"
    launch(TRAIN, 2, ["-c", str(CONFIG), "-o", "train.max_steps=1", "-o", "train.checkpoint_every_steps=1",
                      "-o", f"validation.sets=[{{name: pairs, path: {bin_path}}}]", "-o", "validation.batch_size=128",
                      "-o", f"train.output_dir={out}"], tmp / "log")
    return out, bin_path


@pytest.mark.multirank
def test_two_rank_validation_equals_one_rank_validation_of_the_checkpoint(two_rank_run):
    out, bin_path = two_rank_run
    log = (out / "train.log").read_text()
    assert "validate pairs (rank 0: 600 of 1,200 pair images): 600/600 (100%)" in log  # the progress line
    got = validations(out, "pairs")
    assert sorted(got) == [0, 1]
    reference = out.parent / "reference.json"
    proc = subprocess.run([sys.executable, "tools/validate.py",
                           "--checkpoint", str(out / "checkpoints" / "step_000000001"),
                           "--bin", str(bin_path), "--batch-size", "32", "--json", str(reference)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    expected = json.loads(reference.read_text())["sets"]["pairs"]
    assert got[1] == expected["accuracy"]
    assert f"threshold {expected['threshold']:.3f} (cosine)  xnorm {expected['xnorm']:.3f}" in log


def test_wrong_verification_path_fails_before_the_first_step_naming_it(tmp_path):
    missing = tmp_path / "no_such_dir" / "lfw.bin"
    broken = tmp_path / "broken.bin"
    broken.write_bytes(b"not a pickle")
    for name, path in (("lfw", missing), ("cfp", broken)):
        out = tmp_path / name
        proc = subprocess.run([sys.executable, "tools/train.py", "-c", str(CONFIG), "-o", "train.max_steps=2",
                               "-o", f"validation.sets=[{{name: {name}, path: {path}}}]",
                               "-o", f"train.output_dir={out}"], cwd=REPO, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode != 0
        if name == "lfw":  # a set that is not there: refused before the output folder is made
            assert proc.returncode == 2 and f"error: validation.sets 'lfw': {path} not found" in proc.stderr
            assert not out.exists()
            continue
        summary = (out / "error_rank0.txt").read_text().splitlines()[0]
        assert f"[rank 0] ValidationSetError: validation.sets '{name}': {path}" in summary, summary
        assert summary.split(" ", 2)[2] in proc.stderr  # the same line, without the time stamp
        assert "step 1/" not in (out / "train.log").read_text()
        assert not (out / "checkpoints").exists() or not list((out / "checkpoints").iterdir())


@pytest.mark.multirank
def test_validation_longer_than_gloo_timeout_on_two_ranks_completes(two_rank_run, tmp_path):
    """A 45 s validation on rank 0 must not kill rank 1 (gloo's limit is 30 s). Here a set sized for
    ~40 s of validation on this machine (copies of the 600-pair set of ``two_rank_run``, each copy's
    images altered in one pixel so that each is embedded, sized from the
    time it took there) is validated once, at step 2 of a copy of that run resumed, and the
    checkpoint after it (a barrier, then rank 0 completes it) and the end of the job go through.
    A rank working alone past 30 s before a collective is tests/engine/test_reliability_barrier.py."""
    first, bin_600 = two_rank_run
    out = tmp_path / "run"
    shutil.copytree(first, out)
    seconds_600 = min(_validation_seconds(out, "pairs"))  # steps 0 and 1
    copies = min(100, math.ceil(40.0 / seconds_600))
    bins, issame = read_bin(str(bin_600))
    pairs = 600 * copies
    bin_path = tmp_path / "big.bin"
    # each copy's images differ in one pixel: validation embeds each distinct image once
    write_bin(str(bin_path), [_variant(b, k) for k in range(copies) for b in bins], issame * copies)
    # Resumed at step 1 (so no step-0 validation): trains step 2, validates (the last step).
    launch(TRAIN, 2, ["-c", str(CONFIG), "-o", "train.checkpoint_every_steps=1", "-o", f"train.output_dir={out}",
                      "--resume", "auto", "-o", "train.max_steps=2", "-o", "validation.every_steps=2",
                      "-o", f"validation.sets=[{{name: big, path: {bin_path}}}]", "-o", "validation.batch_size=128"],
           tmp_path / "log_second", timeout=900)
    log = (out / "train.log").read_text()
    seconds, = _validation_seconds(out, "big")
    assert seconds > 30, (f"test premise: the validation must outlast gloo's 30 s, took {seconds} s "
                          f"({pairs} pairs; 600 took {seconds_600} s)")
    assert "step 2/2" in log
    assert (out / "checkpoints" / "step_000000002" / "meta.json").exists()


def _variant(encoded: bytes, k: int) -> bytes:
    """``encoded`` as a PNG whose first pixel's blue value is moved by ``k`` (mod 256): another image
    for ``k`` in 1..255, the same for 0."""
    if k == 0:
        return encoded
    image = cv2.imdecode(np.frombuffer(encoded, np.uint8), cv2.IMREAD_COLOR)
    image[0, 0, 0] = (int(image[0, 0, 0]) + k) % 256
    return cv2.imencode(".png", image)[1].tobytes()


def _validation_seconds(output_dir: Path, name: str) -> list[float]:
    """The durations of the validations of set ``name`` in ``output_dir/train.log``."""
    lines = [line for line in (output_dir / "train.log").read_text().splitlines()
             if f"[{name}][" in line and "] accuracy " in line]  # not a collapse warning about the set
    return [float(line.rsplit("(", 1)[1].split(" s on 2 ranks")[0]) for line in lines]
