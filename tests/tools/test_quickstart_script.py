"""tools/quickstart.sh, short form, as a new user runs it in a fresh clone: sample faces, held-out
pairs, im2rec, train_small from scratch, finetune_small from it on other people, validate both,
export, infer — every step in order, and the commands' own lines without Paddle's start-up noise."""
from __future__ import annotations

import os
import re
import subprocess

from launcher import REPO


def test_quickstart_runs_top_to_bottom(tmp_path):
    work = tmp_path / "quickstart"
    env = {key: value for key, value in os.environ.items() if key not in ("GLOG_minloglevel", "PADDLE_PFC_VERBOSE")}
    proc = subprocess.run(["bash", "tools/quickstart.sh", str(work)], cwd=REPO, capture_output=True, text=True,
                          timeout=600, env={**env, "QUICKSTART_SHORT": "1"})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "quickstart done" in proc.stdout
    for made in ("my_faces/label.txt", "my_faces/pairs.bin", "my_faces/train_label.txt", "my_faces_rec/train.rec",
                 "my_faces_rec/pairs.bin", "scratch/best/meta.json", "finetune/best/meta.json", "model/export.json"):
        assert (work / made).exists(), made
    # the documented recipes, the lr rule and the short-epoch logging, as the log states them
    assert "lr 0.025 = 0.1 x global batch 32 / reference batch 128" in proc.stdout
    assert "logging every 1 steps" in proc.stdout
    assert "backbone initialised from" in proc.stdout and "center init" in proc.stdout
    assert re.search(r"^pairs\s+40\s+\d", proc.stdout, re.M), proc.stdout[-2000:]
    assert re.search(r"^(SAME|DIFFERENT): cosine similarity", proc.stdout, re.M)
    # the held-out split and both runs' held-out accuracy, the step of each best/ said
    assert "pairs: held out: 6 identities, 60 images" in proc.stdout
    assert re.search(r"^pairs: .*my_faces/label\.txt written from 20 sub-folders", proc.stdout, re.M)
    assert "verification set heldout:" in proc.stdout
    assert re.search(r"^  from scratch \d\.\d{3}  best/ of step \d+", proc.stdout, re.M), proc.stdout[-1500:]
    assert re.search(r"^  fine-tuned   \d\.\d{3}  best/ of step \d+", proc.stdout, re.M)
    # our own lines only: no glog lines, no Python warnings from inside Paddle, no extension-loader INFO
    noise = [line for line in out.splitlines()
             if re.match(r"[IW]\d{4} ", line) or "Warning:" in line or "using custom operator" in line]
    assert not noise, noise[:5]


def test_quickstart_never_deletes_a_folder_it_did_not_make(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("precious")
    proc = subprocess.run(["bash", "tools/quickstart.sh", str(mine)], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and "was not made by this script" in proc.stderr
    assert (mine / "keep.txt").read_text() == "precious"
