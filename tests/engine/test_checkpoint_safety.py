"""Checkpoints and weight files run no code and are verified: a payload in a format-1 checkpoint
(backbone.pdparams / states.pdstates) or in a .pdparams weights file is refused by every entry
point with no marker file created; a flipped byte, a truncated file, a NaN center or an absurd
BatchNorm variance is named; ``--resume auto`` skips a damaged newest checkpoint."""
from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from helpers.checkpoint_runs import CONFIG, copy_run, make_trainer, reseal
from helpers.tool_scripts import load_tool
from paddle_pfc.engine import checkpoint as ckpt
from paddle_pfc.utils.npz_state import load_state, state_bytes

REFUSED = "refused to load: the pickle asks for posix.system"


class _System:
    """Unpickling it runs ``touch marker`` (what an attacker's ``__reduce__`` does)."""

    def __init__(self, marker) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def as_format1(source: Path, target: Path, payload: str | None = None, marker: Path | None = None) -> Path:
    """``source`` rewritten as a format-1 checkpoint (pickled backbone.pdparams / states.pdstates,
    no checksums); with ``payload`` ("backbone" / "states") that pickle also holds a _System."""
    shutil.copytree(source, target)
    meta = json.loads((target / "meta.json").read_text())
    meta["format"] = ckpt.FORMAT_V1
    del meta["files"]
    (target / "meta.json").write_text(json.dumps(meta))
    for part, new, old in (("backbone", ckpt.LEGACY_BACKBONE_FILE, ckpt.BACKBONE_FILE),
                           ("states", ckpt.LEGACY_STATES_FILE, ckpt.STATES_FILE)):
        state = load_state(target / old)
        if payload == part:
            state["evil"] = _System(marker)
        (target / new).write_bytes(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))
        (target / old).unlink()
    return target


@pytest.fixture
def train_log():
    """The messages of the ``paddle_pfc.train`` logger during the test (INFO and up), whatever the
    root logger's handlers (``tools/train.py`` replaces them)."""
    messages: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(record.getMessage())

    logger, handler = logging.getLogger("paddle_pfc.train"), Collect()
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    yield messages
    logger.removeHandler(handler)
    logger.setLevel(level)


def train_main(*argv: str) -> int:
    from paddle_pfc.cli.train import main

    return main(["-c", CONFIG, *argv])


# ------------------------------------------------------------------------------ the format
def test_checkpoint_files_hold_data_only_and_record_their_checksums(run):
    folder = run / "checkpoints" / "step_000000004"
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["format"] == ckpt.FORMAT
    on_disk = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                     if p.is_file() and p.name != "meta.json" and not p.name.startswith("done.rank"))
    assert sorted(meta["files"]) == on_disk and "backbone.npz" in on_disk and "states.npz" in on_disk
    for rel, record in meta["files"].items():
        data = (folder / rel).read_bytes()
        assert record == {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}, rel
    best = json.loads((run / "best" / "meta.json").read_text()) if (run / "best").exists() else None
    assert best is None or sorted(best["files"]) == ["backbone.npz"]


def test_format1_checkpoint_still_loads(run, tmp_path):
    source = run / "checkpoints" / "step_000000004"
    old = as_format1(source, tmp_path / "step_000000004")
    assert ckpt.verify_checkpoint(old)["format"] == ckpt.FORMAT_V1
    config, state = ckpt.load_backbone_state(old)
    expected = load_state(source / "backbone.npz")
    assert sorted(state) == sorted(expected) and config["model"]["backbone"] == "mobilefacenet"
    for key in expected:
        np.testing.assert_array_equal(state[key], expected[key], err_msg=key)
    trainer = make_trainer(tmp_path / "fresh")
    trainer.resume(str(old))
    assert trainer.state.global_step == 4
    for key, name in trainer.programs.backbone_names.items():
        np.testing.assert_array_equal(trainer.programs.read(name), expected[key], err_msg=key)


# ------------------------------------------------------------------------------ payloads
def test_payload_in_a_format1_backbone_is_refused_by_every_entry_point(run, tmp_path, small_lfw, capsys):
    from helpers.ijb_set import build_ijb

    marker = tmp_path / "pwned"
    evil = as_format1(run / "checkpoints" / "step_000000004", tmp_path / "evil" / "step_000000004",
                      "backbone", marker)
    source = str(evil / ckpt.LEGACY_BACKBONE_FILE)
    # --resume PATH
    assert train_main("-o", f"train.output_dir={tmp_path / 'resumed'}", "--resume", str(evil)) == 2
    assert source in capsys.readouterr().err and not marker.exists()
    # --pretrained CHECKPOINT
    assert train_main("-o", f"train.output_dir={tmp_path / 'tuned'}", "-o", "train.max_steps=1",
                      "--pretrained", str(evil)) == 2
    err = capsys.readouterr().err
    assert f"{source}: {REFUSED}" in err and not marker.exists()
    # tools/validate.py, export.py, eval_ijb.py --checkpoint
    assert load_tool("validate").main(["--checkpoint", str(evil), "--bin", str(small_lfw)]) == 2
    assert f"{source}: {REFUSED}" in capsys.readouterr().err and not marker.exists()
    assert load_tool("export").main(["--checkpoint", str(evil), "--out", str(tmp_path / "exported")]) == 2
    assert f"{source}: {REFUSED}" in capsys.readouterr().err and not marker.exists()
    build_ijb(tmp_path / "IJBC", identities=2, templates_per_id=2)
    assert load_tool("eval_ijb").main(["--checkpoint", str(evil), "--root", str(tmp_path / "IJBC"),
                                   "--out", str(tmp_path / "ijb")]) == 2
    assert f"{source}: {REFUSED}" in capsys.readouterr().err and not marker.exists()
    with open(source, "rb") as f:  # the file is a working payload: plain pickle runs it
        pickle.load(f)
    assert marker.exists()


def test_payload_in_format1_states_is_refused_by_resume(run, tmp_path, capsys, train_log):
    marker = tmp_path / "pwned"
    out = copy_run(run, tmp_path)
    root = out / "checkpoints"
    shutil.rmtree(root / "step_000000004")
    as_format1(run / "checkpoints" / "step_000000004", root / "step_000000004", "states", marker)
    source = root / "step_000000004" / ckpt.LEGACY_STATES_FILE
    assert train_main("-o", f"train.output_dir={tmp_path / 'other'}", "--resume", str(root / "step_000000004")) == 2
    assert f"{source}: {REFUSED}" in capsys.readouterr().err and not marker.exists()
    # --resume auto: the newest checkpoint is refused and named, the one before it is used
    trainer = make_trainer(out, "train.resume=auto", "train.max_steps=4")
    assert trainer.resume_path == str(root / "step_000000002")
    assert re.search(rf"resume auto: skipped damaged checkpoint step_000000004 \(.*{re.escape(REFUSED)}.*\); "
                     r"resuming from step_000000002", "\n".join(train_log))
    assert not marker.exists()


def test_payload_pdparams_is_refused_by_pretrained_and_export_weights(tmp_path, capsys):
    from paddle_pfc.backbones.state import random_state

    marker, path = tmp_path / "pwned", tmp_path / "evil.pdparams"
    state = dict(random_state("mobilefacenet", 32, 32), evil=_System(marker))
    path.write_bytes(pickle.dumps(state, protocol=2))
    assert train_main("-o", f"train.output_dir={tmp_path / 'tuned'}", "-o", "train.max_steps=1",
                      "--pretrained", str(path)) == 2
    assert f"{path}: {REFUSED}" in capsys.readouterr().err and not marker.exists()
    assert load_tool("export").main(["--weights", str(path), "--backbone", "mobilefacenet", "--embedding-size", "32",
                                 "--input-size", "32", "--out", str(tmp_path / "exported")]) == 2
    assert f"{path}: {REFUSED}" in capsys.readouterr().err and not marker.exists()
    pickle.loads(path.read_bytes())
    assert marker.exists()


def test_pdparams_that_paddle_saved_still_read(tmp_path):
    import paddle

    from paddle_pfc.backbones import build_backbone
    from paddle_pfc.backbones.state import load_state_file
    from paddle_pfc.engine.pretrained import read_pretrained

    layer = build_backbone("mobilefacenet", 32, 32)
    paddle.save(layer.state_dict(), str(tmp_path / "w.pdparams"))
    expected = {k: v.numpy() for k, v in layer.state_dict().items()}
    for state in (read_pretrained(tmp_path / "w.pdparams").state, load_state_file(tmp_path / "w.pdparams")):
        assert sorted(state) == sorted(expected)
        for key, value in expected.items():
            np.testing.assert_array_equal(state[key], value, err_msg=key)


# ------------------------------------------------------------------------------ damage
def test_flipped_byte_is_named_and_an_explicit_resume_refuses_it(run, tmp_path, capsys):
    out = copy_run(run, tmp_path)
    folder = out / "checkpoints" / "step_000000004"
    trainer = make_trainer(tmp_path / "load")
    for rel in ("backbone.npz", "centers/head0.weight.rank0.npy"):
        path = folder / rel
        original = path.read_bytes()
        data = bytearray(original)
        data[len(data) // 2] ^= 0x01
        path.write_bytes(bytes(data))
        with pytest.raises(ckpt.CheckpointError, match=rf"checkpoint file {re.escape(str(path))} is damaged: its "
                                                       r"sha256 .* differs from the .* recorded in meta.json"):
            ckpt.verify_checkpoint(folder)
        with pytest.raises(ckpt.CheckpointError, match=re.escape(str(path))):  # load_checkpoint checks too
            trainer.resume(str(folder))
        assert train_main("-o", f"train.output_dir={tmp_path / 'x'}", "--resume", str(folder)) == 2
        assert f"checkpoint file {path} is damaged" in capsys.readouterr().err
        path.write_bytes(original)
    ckpt.verify_checkpoint(folder)


def test_resume_auto_skips_a_truncated_newest_checkpoint_and_continues(run, tmp_path, train_log):
    out = copy_run(run, tmp_path)
    root = out / "checkpoints"
    shard = root / "step_000000004" / "centers" / "head0.weight.rank0.npy"
    shard.write_bytes(shard.read_bytes()[:-100])
    trainer = make_trainer(out, "train.resume=auto", "train.max_steps=4")
    assert trainer.resume_path == str(root / "step_000000002")
    lines = [m for m in train_log if "skipped damaged" in m]
    assert lines == [f"resume auto: skipped damaged checkpoint step_000000004 (checkpoint file {shard} is damaged: "
                     f"{shard.stat().st_size} bytes, meta.json records {shard.stat().st_size + 100} (truncated "
                     "or overwritten)); resuming from step_000000002"]
    trainer.train()
    assert f"resumed from {root / 'step_000000002'} at epoch 0 step 2 (global step 2)" in train_log
    assert trainer.state.global_step == 4
    ckpt.verify_checkpoint(root / "step_000000004")  # written again, whole


def test_truncated_format1_checkpoint_is_named(run, tmp_path):
    old = as_format1(run / "checkpoints" / "step_000000004", tmp_path / "step_000000004")
    path = old / ckpt.LEGACY_STATES_FILE
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(ckpt.CheckpointError, match=rf"checkpoint file {re.escape(str(path))} is unreadable"):
        ckpt.verify_checkpoint(old)


def test_nan_center_and_absurd_batch_norm_variance_are_named(run, tmp_path):
    out = copy_run(run, tmp_path)
    folder = out / "checkpoints" / "step_000000004"
    shard = folder / "centers" / "head0.weight.rank0.npy"
    centers = np.load(shard)
    bad = centers.copy()
    bad[5, 3] = np.nan
    np.save(shard, bad)
    reseal(folder, "centers/head0.weight.rank0.npy")
    trainer = make_trainer(tmp_path / "load")
    with pytest.raises(ckpt.CheckpointError, match=rf"checkpoint file {re.escape(str(shard))}: class centers "
                                                   r"\(weight\) of classes \[0, 24\) hold 1 inf/NaN values"):
        trainer.resume(str(folder))
    np.save(shard, centers)
    reseal(folder, "centers/head0.weight.rank0.npy")
    backbone = load_state(folder / "backbone.npz")
    key = sorted(k for k in backbone if k.endswith("_variance"))[0]
    for value, shown in ((1e12, "1e+12"), (-0.5, "-0.5")):
        edited = dict(backbone, **{key: np.full_like(backbone[key], 1.0)})
        edited[key][0] = value
        (folder / "backbone.npz").write_bytes(state_bytes(edited))
        reseal(folder, "backbone.npz")
        message = (rf"checkpoint {re.escape(str(folder))}: backbone BatchNorm running variance '{re.escape(key)}' "
                   rf"holds {re.escape(shown)}")
        with pytest.raises(ckpt.CheckpointError, match=message):
            trainer.resume(str(folder))
        with pytest.raises(ckpt.CheckpointError, match=message):  # pretrained / validate / export read this
            ckpt.load_backbone_state(folder)
    edited = dict(backbone, **{key: np.where(np.arange(backbone[key].size) == 1, np.inf, 1.0).astype(np.float32)})
    (folder / "backbone.npz").write_bytes(state_bytes(edited))
    reseal(folder, "backbone.npz")
    with pytest.raises(ckpt.CheckpointError, match=rf"backbone tensor '{re.escape(key)}' holds 1 inf/NaN values"):
        ckpt.load_backbone_state(folder)
