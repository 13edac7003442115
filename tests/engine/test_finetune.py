"""Fine-tuning: a pretrained backbone from every supported source, strict checks, the frozen-backbone
phase (with exact resume), class centers from mean embeddings, and that fine-tuning beats training
from scratch on held-out identities."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from helpers.side_by_side import side_by_side
from launcher import REPO
from paddle_pfc.utils.npz_state import load_state

WORKER = REPO / "tests" / "workers" / "train_worker.py"
CONFIG = REPO / "tests" / "train_tiny.yaml"
# fine-tuning identities: another data seed (other prototypes) and another class count
FINETUNE = ["data.seed=11", "data.num_classes=16", "train.checkpoint_every_steps=0"]


def train(tmp: Path, name: str, *overrides: str, resume: Path | None = None) -> dict:
    """One rank of tests/workers/train_worker.py (plain python: a single rank)."""
    out = tmp / name
    out.mkdir()
    cmd = [sys.executable, str(WORKER), "--config", str(CONFIG), "--out", str(out),
           "-o", f"train.output_dir={tmp / 'runs' / name}"]
    for item in overrides:
        cmd += ["-o", item]
    if resume is not None:
        cmd += ["--resume", str(resume)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
               GLOG_minloglevel="2")
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = dict(np.load(out / "rank0.npz"))
    result["val"] = json.loads((out / "val.json").read_text())
    result["log"] = proc.stdout
    return result


@pytest.fixture(scope="module")
def pretrained(tmp_path_factory):
    """48 steps on 24 synthetic identities (data seed 3); its checkpoint folder and an export of it."""
    tmp = tmp_path_factory.mktemp("pretrain")
    train(tmp, "pre", "train.max_steps=48", "train.checkpoint_every_steps=0")
    ckpt = tmp / "runs" / "pre" / "checkpoints"
    export = tmp / "export"
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "export.py"),
                           "--checkpoint", str(ckpt / "step_000000048"),
                           "--out", str(export)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "export: step 3/3 checking Paddle Inference" in proc.stdout and "export: 3/3 (100%)" in proc.stdout
    return tmp, ckpt, export


def test_every_source_reads_the_same_backbone(pretrained):
    from paddle_pfc.engine.pretrained import read_pretrained

    _, ckpt, export = pretrained
    from_ckpt = read_pretrained(ckpt)  # a checkpoints root: its latest
    saved = load_state(ckpt / "step_000000048" / "backbone.npz")
    assert (from_ckpt.backbone, from_ckpt.embedding_size, from_ckpt.input_size) == ("mobilefacenet", 32, 32)
    from_export = read_pretrained(export)
    from_file = read_pretrained(ckpt / "step_000000048" / "backbone.npz")
    assert from_export.kind == "export" and from_file.kind == "state_dict" and from_file.backbone is None
    for source in (from_ckpt, from_export, from_file):
        assert sorted(source.state) == sorted(saved)
        for key, value in saved.items():
            np.testing.assert_array_equal(source.state[key], value, err_msg=f"{source.kind} {key}")


def test_strict_checks_name_the_problem(pretrained, tmp_path):
    from paddle_pfc.backbones.state import random_state
    from paddle_pfc.deploy.export import export_backbone
    from paddle_pfc.engine.pretrained import Pretrained, PretrainedError, check_pretrained, read_pretrained

    _, ckpt, _ = pretrained
    pre = read_pretrained(ckpt)
    expected = {k: (v.shape, v.dtype) for k, v in pre.state.items()}
    with pytest.raises(PretrainedError, match="is a mobilefacenet backbone, this run's model.backbone is iresnet18"):
        check_pretrained(pre, "iresnet18", 32, 32, expected)
    with pytest.raises(PretrainedError, match="has embedding size 32, this run's model.embedding_size is 64"):
        check_pretrained(pre, "mobilefacenet", 64, 32, expected)
    other = tmp_path / "other_export"
    export_backbone("mobilefacenet", 16, 32, random_state("mobilefacenet", 16, 32), other)
    with pytest.raises(PretrainedError, match="has embedding size 16, this run's model.embedding_size is 32"):
        check_pretrained(read_pretrained(other), "mobilefacenet", 32, 32, expected)
    # plain state dicts carry no architecture: names and shapes are checked, the tensor is named
    key = sorted(pre.state)[3]
    bent = dict(pre.state, **{key: np.zeros((7,), np.float32)})
    with pytest.raises(PretrainedError, match=f"tensor '{key}' has shape \\[7\\]"):
        check_pretrained(Pretrained("x.pdparams", "state_dict", bent), "mobilefacenet", 32, 32, expected)
    resnet = random_state("iresnet18", 32, 32)
    with pytest.raises(PretrainedError, match="missing .* more\\) \\(is it a mobilefacenet state dict\\?\\)"):
        check_pretrained(Pretrained("r18.pdparams", "state_dict", resnet), "mobilefacenet", 32, 32, expected)
    with pytest.raises(PretrainedError, match="no such file or folder"):
        read_pretrained(tmp_path / "nothing")


def test_config_rules():
    from paddle_pfc.engine.config import ConfigError, load_config

    with pytest.raises(ConfigError, match="classifier.center_init: mean_embedding needs model.pretrained"):
        load_config(CONFIG, ["classifier.center_init=mean_embedding"])
    with pytest.raises(ConfigError, match="train.freeze_backbone_steps: must be >= 0"):
        load_config(CONFIG, ["train.freeze_backbone_steps=-1"])
    cfg = load_config(CONFIG, ["model.pretrained=x", "classifier.center_init=mean_embedding"])
    assert cfg.classifier.center_init_images == 16 and cfg.train.freeze_backbone_steps == 0


def test_wrong_pretrained_is_a_clear_cli_error(pretrained, tmp_path):
    _, ckpt, _ = pretrained
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "train.py"), "-c", str(CONFIG),
                           "--pretrained", str(ckpt),
                           "-o", "model.embedding_size=64", "-o", f"train.output_dir={tmp_path / 'out'}"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "has embedding size 32, this run's model.embedding_size is 64" in proc.stderr
    assert not (tmp_path / "out").exists()  # refused before the output folder is made


def test_finetuning_beats_training_from_scratch(pretrained):
    """Held-out verification (400 pairs of identities disjoint from both training sets) after 12
    steps on 16 new identities: from the pretrained backbone vs from random weights."""
    tmp, ckpt, _ = pretrained  # (an export holds the same backbone bit for bit: see above)
    common = [*FINETUNE, "train.max_steps=12", "validation.synthetic_pairs=400", "validation.nrof_folds=5"]
    # two independent one-rank runs, side by side (one core each)
    scratch, tuned = side_by_side(partial(train, tmp, "scratch", *common),
                                  partial(train, tmp, "tuned", *common, f"model.pretrained={ckpt}"))
    final = {name: r["val"][-1][1]["synthetic_val"] for name, r in
             (("scratch", scratch), ("tuned", tuned))}
    assert scratch["val"][-1][0] == tuned["val"][-1][0] == 12
    assert final["tuned"] > final["scratch"] + 0.05, final
    assert "backbone initialised from" in tuned["log"] + open(tmp / "runs" / "tuned" / "train.log").read()


def test_frozen_backbone_and_resume_inside_the_freeze(pretrained):
    import paddle_pfc.engine.checkpoint as ckpt_mod

    tmp, ckpt, _ = pretrained
    common = ["data.seed=11", "data.num_classes=16", "train.max_steps=8", "train.checkpoint_every_steps=2",
              "train.freeze_backbone_steps=5", f"model.pretrained={ckpt}"]
    runs = tmp / "runs" / "frozen" / "checkpoints"

    def resume_once_saved() -> dict:
        """The resume from step 2, started once the full run has completed that checkpoint (written
        under another name, then renamed: a folder with meta.json is whole)."""
        deadline = time.monotonic() + 300
        while not (runs / "step_000000002" / "meta.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return train(tmp, "frozen_resumed", *common, resume=runs / "step_000000002")

    # the full run and the resume from its step 2, side by side once that checkpoint is written
    full, resumed = side_by_side(partial(train, tmp, "frozen", *common), resume_once_saved)
    _, start = ckpt_mod.load_backbone_state(ckpt)
    _, at4 = ckpt_mod.load_backbone_state(runs / "step_000000004")
    _, at6 = ckpt_mod.load_backbone_state(runs / "step_000000006")
    for key in start:  # parameters and BatchNorm statistics untouched during the freeze
        np.testing.assert_array_equal(at4[key], start[key], err_msg=key)
    assert any(not np.array_equal(at6[k], start[k]) for k in start)  # then the backbone learns
    states2 = load_state(runs / "step_000000002" / "states.npz")
    states4 = load_state(runs / "step_000000004" / "states.npz")
    assert all(np.array_equal(states2[k], states4[k]) for k in states2)  # backbone momentum kept too
    w2, w4 = (np.load(runs / s / "centers" / "head0.weight.rank0.npy") for s in ("step_000000002", "step_000000004"))
    assert not np.array_equal(w2, w4)  # the head learns meanwhile
    np.testing.assert_array_equal(resumed["loss"], full["loss"][2:])
    np.testing.assert_array_equal(resumed["backbone"], full["backbone"])
    np.testing.assert_array_equal(resumed["weight"], full["weight"])


def test_mean_embedding_centers_against_reference_and_shards():
    from paddle_pfc.data.synthetic import SyntheticFaces
    from paddle_pfc.engine.pretrained import class_indices, mean_embedding_centers
    from paddle_pfc.head.geometry import class_split

    ds = SyntheticFaces(7, samples_per_class=5, image_size=16, seed=2)
    proj = np.random.default_rng(0).normal(size=(3 * 16 * 16, 6))

    def embed(batch):  # any fixed map of the normalized images
        return batch.reshape(len(batch), -1) @ proj

    norms = np.arange(1, 8, dtype=np.float64)
    got = mean_embedding_centers(embed, ds, 0, 7, 3, 16, norms, batch_size=4)
    expected = []
    for c in range(7):
        imgs = np.stack([ds[c * 5 + j][0] for j in range(3)]).astype(np.float32)
        e = embed(((imgs - 127.5) / 128.0).transpose(0, 3, 1, 2))
        m = (e / np.linalg.norm(e, axis=1, keepdims=True)).mean(axis=0)
        expected.append(norms[c] * m / np.linalg.norm(m))
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    shards = []
    for rank in range(3):  # each rank embeds its own classes: together the single-rank result
        start, count = class_split(7, 3, rank)
        shards.append(mean_embedding_centers(embed, ds, start, count, 3, 16, norms[start:start + count], 2))
    np.testing.assert_allclose(np.concatenate(shards), got, rtol=1e-6)
    assert [len(g) for g in class_indices(ds, 2, 3, 10)] == [5, 5, 5]
    unit = mean_embedding_centers(embed, ds, 0, 7, 3, 16)  # default: unit rows
    np.testing.assert_allclose(unit, got / norms[:, None], rtol=1e-6)


@pytest.mark.multirank
def test_two_ranks_mean_embedding_centers_and_freeze(pretrained, tmp_path):
    """2 ranks: each rank initialises its own center shard from its classes' mean embeddings; the
    frozen backbone is the pretrained one on both ranks; the run goes on after the freeze."""
    import paddle_pfc.engine.checkpoint as ckpt_mod
    from launcher import launch

    _, ckpt, _ = pretrained
    out = tmp_path / "two"
    out.mkdir()
    args = ["--config", str(CONFIG), "--out", str(out), "-o", f"train.output_dir={tmp_path / 'run'}"]
    for item in ["data.seed=11", "data.num_classes=16", "train.max_steps=4", "train.checkpoint_every_steps=2",
                 "train.freeze_backbone_steps=2", f"model.pretrained={ckpt}", "classifier.center_init=mean_embedding",
                 "classifier.center_init_images=3"]:
        args += ["-o", item]
    launch(WORKER, 2, args, out / "log", timeout=400)
    _, start = ckpt_mod.load_backbone_state(ckpt)
    _, at2 = ckpt_mod.load_backbone_state(tmp_path / "run" / "checkpoints" / "step_000000002")
    for key in start:
        np.testing.assert_array_equal(at2[key], start[key], err_msg=key)
    ranks = [dict(np.load(out / f"rank{r}.npz")) for r in range(2)]
    assert {int(r["class_start"]) for r in ranks} == {0, 8} and np.isfinite(ranks[0]["loss"]).all()
    log = (tmp_path / "run" / "train.log").read_text()
    assert "center init rank 0: 24/24 (100%)" in log, log[-2000:]
