"""Checkpoint loading is strict: every mismatch is an error naming the field or tensor."""
from __future__ import annotations

import hashlib
import json
import shutil

import numpy as np
import pytest

import paddle_pfc
from launcher import REPO
from paddle_pfc.engine.checkpoint import CheckpointError, latest_checkpoint, reshard_rows
from paddle_pfc.engine.config import load_config
from paddle_pfc.engine.trainer import Trainer
from paddle_pfc.utils.npz_state import load_state, state_bytes

CONFIG = str(REPO / "tests" / "train_tiny.yaml")


def make_trainer(tmp_path, *overrides: str) -> Trainer:
    paddle_pfc.init_distributed()
    return Trainer(load_config(CONFIG, [f"train.output_dir={tmp_path}", *overrides]), 0, 1)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    out = tmp_path_factory.mktemp("ckpt")
    trainer = make_trainer(out, "train.max_steps=2")
    trainer.train()
    return latest_checkpoint(out / "checkpoints")


def copy_of(saved, tmp_path):
    target = tmp_path / "copy"
    shutil.copytree(saved, target)
    return target


@pytest.mark.parametrize("override, field", [
    ("data.num_classes=25", "num_classes"),
    ("model.embedding_size=16", "embedding_size"),
    ("model.backbone=iresnet18", "backbone"),
])
def test_other_model_shape_is_refused(saved, tmp_path, override, field):
    trainer = make_trainer(tmp_path, override)
    with pytest.raises(CheckpointError, match=field):
        trainer.resume(str(saved))


def edit_state(path, edit):
    """Edit the .npz state at ``path`` and record the edited file's checksum in its meta.json (as if
    the checkpoint had been written so)."""
    data = load_state(path)
    edit(data)
    path.write_bytes(state_bytes(data))
    meta_path = path.parent / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["files"][path.name] = {"sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                                "bytes": path.stat().st_size}
    meta_path.write_text(json.dumps(meta))


def test_missing_unexpected_and_misshaped_tensors_are_named(saved, tmp_path):
    trainer = make_trainer(tmp_path / "run")
    ckpt = copy_of(saved, tmp_path)
    edit_state(ckpt / "backbone.npz", lambda d: d.pop("layers.0.layers.0.weight"))
    with pytest.raises(CheckpointError, match=r"backbone: tensor 'layers.0.layers.0.weight' missing"):
        trainer.resume(str(ckpt))
    shutil.rmtree(ckpt)
    ckpt = copy_of(saved, tmp_path)
    edit_state(ckpt / "backbone.npz", lambda d: d.__setitem__("extra.weight", np.zeros(3, np.float32)))
    with pytest.raises(CheckpointError, match=r"backbone\.npz: unexpected entry 'extra.weight'"):
        trainer.resume(str(ckpt))
    shutil.rmtree(ckpt)
    ckpt = copy_of(saved, tmp_path)
    edit_state(ckpt / "backbone.npz",
               lambda d: d.__setitem__("layers.0.layers.0.weight", d["layers.0.layers.0.weight"][:1]))
    with pytest.raises(CheckpointError, match=r"'layers.0.layers.0.weight' has shape"):
        trainer.resume(str(ckpt))
    shutil.rmtree(ckpt)
    ckpt = copy_of(saved, tmp_path)
    name = sorted(load_state(ckpt / "states.npz"))[0]
    edit_state(ckpt / "states.npz", lambda d: d.pop(name))
    with pytest.raises(CheckpointError, match=rf"optimizer state: tensor '{name}' missing"):
        trainer.resume(str(ckpt))


def test_missing_or_corrupt_files_are_named(saved, tmp_path):
    trainer = make_trainer(tmp_path / "run")
    ckpt = copy_of(saved, tmp_path)
    (ckpt / "centers" / "head0.weight.rank0.npy").unlink()
    with pytest.raises(CheckpointError, match="head0.weight.rank0.npy"):
        trainer.resume(str(ckpt))
    (ckpt / "meta.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="meta.json"):
        trainer.resume(str(ckpt))
    with pytest.raises(CheckpointError, match=r"nowhere: no such file or folder"):
        trainer.resume(str(tmp_path / "nowhere"))


def test_partial_checkpoint_is_not_latest(saved, tmp_path):
    """A checkpoint killed before its rename is invisible: latest still names the complete one."""
    root = saved.parent
    (root / "step_000000099.partial").mkdir()
    assert latest_checkpoint(root) == saved


def test_reshard_rows_reads_any_split(tmp_path):
    full = np.arange(7 * 3, dtype=np.float32).reshape(7, 3)
    (tmp_path / "centers").mkdir()
    for rank, (start, count) in enumerate([(0, 3), (3, 2), (5, 2)]):
        np.save(tmp_path / "centers" / f"head0.weight.rank{rank}.npy", full[start:start + count])
        (tmp_path / "centers" / f"head0.rank{rank}.json").write_text(
            f'{{"class_start": {start}, "num_local": {count}, "has_velocity": false}}')
    for start, count in [(0, 7), (0, 4), (4, 3), (2, 3)]:
        np.testing.assert_array_equal(reshard_rows(tmp_path, 0, "weight", 3, start, count, 3),
                                      full[start:start + count])
    # a damaged shard or split record is named
    shard = tmp_path / "centers" / "head0.weight.rank1.npy"
    shard.write_bytes(shard.read_bytes()[:-8])
    with pytest.raises(CheckpointError, match=r"checkpoint file .*head0\.weight\.rank1\.npy is unreadable"):
        reshard_rows(tmp_path, 0, "weight", 3, 0, 7, 3)
    (tmp_path / "centers" / "head0.rank0.json").write_text('{"class_start": 0, "num_lo')
    with pytest.raises(CheckpointError, match=r"checkpoint file .*head0\.rank0\.json is corrupt"):
        reshard_rows(tmp_path, 0, "weight", 3, 0, 7, 3)


@pytest.fixture(scope="module")
def saved_int8(tmp_path_factory):
    out = tmp_path_factory.mktemp("ckpt_int8")
    trainer = make_trainer(out, "train.max_steps=2", "classifier.momentum_dtype=int8")
    trainer.train()
    return latest_checkpoint(out / "checkpoints")


def test_int8_momentum_and_its_scales_round_trip(saved_int8, tmp_path):
    trainer = make_trainer(tmp_path, "classifier.momentum_dtype=int8")
    trainer.resume(str(saved_int8))
    head = trainer.programs.heads[0]
    codes = np.load(saved_int8 / "centers" / "head0.velocity.rank0.npy")
    scales = np.load(saved_int8 / "centers" / "head0.velocity_scale.rank0.npy")
    assert codes.dtype == np.int8 and scales.shape == (codes.shape[0], 1) and scales.dtype == np.float32
    assert np.count_nonzero(codes) and np.count_nonzero(scales)  # two steps moved the kept rows
    np.testing.assert_array_equal(trainer.programs.read(head.velocity.name), codes)
    np.testing.assert_array_equal(trainer.programs.read(head.velocity_scale.name), scales)


def test_momentum_dtype_mismatch_is_named(saved, saved_int8, tmp_path):
    with pytest.raises(CheckpointError, match="momentum of head0 is stored as int8, this run's "
                                              "classifier.momentum_dtype is float32"):
        make_trainer(tmp_path / "f32").resume(str(saved_int8))
    with pytest.raises(CheckpointError, match="stored as float32, this run's classifier.momentum_dtype is int8"):
        make_trainer(tmp_path / "int8", "classifier.momentum_dtype=int8").resume(str(saved))
