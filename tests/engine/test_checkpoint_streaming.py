"""Center shards stream between a tensor's memory and its ``.npy`` file in bounded chunks: the files
are byte for byte what ``np.save`` writes of the tensor, they load back exactly into the tensor's own
memory, from any saved split, and inf/NaN rows are refused on either side."""
from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import paddle_pfc
from launcher import REPO
from paddle_pfc.engine import checkpoint as ckpt
from paddle_pfc.engine.checkpoint.npy import write_npy
from paddle_pfc.engine.config import load_config
from paddle_pfc.engine.trainer import Trainer
from paddle_pfc.head.dtypes import from_float32

CONFIG = str(REPO / "tests" / "train_tiny.yaml")
BF16_INT8 = ("classifier.center_dtype=bfloat16", "classifier.momentum_dtype=int8")


def make_trainer(out, *overrides: str) -> Trainer:
    paddle_pfc.init_distributed()
    return Trainer(load_config(CONFIG, [f"train.output_dir={out}", *overrides]), 0, 1)


def npy_bytes(value: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, value, allow_pickle=False)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A run of bfloat16 centers and int8 momentum, checkpointed at step 2, and its trainer."""
    out = tmp_path_factory.mktemp("stream")
    trainer = make_trainer(out, "train.max_steps=2", "train.checkpoint_every_steps=2", *BF16_INT8)
    trainer.train()
    return trainer, ckpt.latest_checkpoint(out / "checkpoints")


def test_shard_files_are_np_save_of_the_tensors_and_load_back_in_place(trained, tmp_path):
    trainer, folder = trained
    head = trainer.programs.heads[0]
    meta = json.loads((folder / "meta.json").read_text())
    kinds = dict(ckpt.center_tensors(head))
    assert sorted(kinds) == ["velocity", "velocity_scale", "weight"]
    for kind, name in kinds.items():
        rel = f"centers/head0.{kind}.rank0.npy"
        data = (folder / rel).read_bytes()
        assert data == npy_bytes(trainer.programs.read(name)), kind  # what the copying writer wrote
        assert meta["files"][rel] == {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    assert trainer.programs.read(kinds["weight"]).dtype == np.uint16
    assert np.count_nonzero(trainer.programs.read(kinds["velocity"]))

    fresh = make_trainer(tmp_path, *BF16_INT8)
    memory = {kind: ckpt.tensor_view(fresh.programs.scope, name).ctypes.data for kind, name in kinds.items()}
    fresh.resume(str(folder))
    for kind, name in kinds.items():
        view = ckpt.tensor_view(fresh.programs.scope, name)
        assert view.ctypes.data == memory[kind], f"{kind}: loaded into a new allocation"
        np.testing.assert_array_equal(view, np.load(folder / "centers" / f"head0.{kind}.rank0.npy"))
        np.testing.assert_array_equal(fresh.programs.read(name), trainer.programs.read(name))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int8"])
def test_chunks_that_do_not_divide_the_rows_write_np_save_bytes(tmp_path, dtype):
    rng = np.random.default_rng(1)
    values = rng.standard_normal((37, 5)).astype(np.float32)
    rows = (values * 40).astype(np.int8) if dtype == "int8" else from_float32(values, dtype)
    for chunk_rows in (1, 3, 36, 37, 100):
        path = tmp_path / f"{dtype}.{chunk_rows}.npy"
        record = write_npy(path, rows, "rows", chunk_bytes=chunk_rows * rows.strides[0])
        assert path.read_bytes() == npy_bytes(rows)
        assert record == {"sha256": hashlib.sha256(npy_bytes(rows)).hexdigest(), "bytes": len(npy_bytes(rows))}


def save_split(folder, full: np.ndarray, split: list[tuple[int, int]], kind: str = "weight") -> None:
    (folder / "centers").mkdir(parents=True, exist_ok=True)
    for rank, (start, count) in enumerate(split):
        np.save(folder / "centers" / f"head0.{kind}.rank{rank}.npy", full[start:start + count])
        (folder / "centers" / f"head0.rank{rank}.json").write_text(
            json.dumps({"class_start": start, "num_local": count, "has_velocity": False}))


@pytest.mark.parametrize("saved, loaded", [([(0, 15), (15, 14)], [(0, 10), (10, 10), (20, 9)]),
                                           ([(0, 10), (10, 10), (20, 9)], [(0, 29)])])
def test_resharding_reads_exact_rows_in_chunks(tmp_path, saved, loaded):
    """2 -> 3 and 3 -> 1 ranks, chunks of 4 rows (neither shard a multiple of them): every rank's rows
    exactly; float32 rows read into bfloat16 memory are rounded as ``from_float32`` rounds them."""
    full = np.random.default_rng(2).standard_normal((29, 6)).astype(np.float32)
    save_split(tmp_path, full, saved)
    for start, count in loaded:
        out = np.full((count, 6), np.nan, np.float32)
        ckpt.read_rows_into(out, tmp_path, 0, "weight", len(saved), start, chunk_bytes=4 * 6 * 4)
        np.testing.assert_array_equal(out, full[start:start + count])
        as_bf16 = np.zeros((count, 6), np.uint16)
        ckpt.read_rows_into(as_bf16, tmp_path, 0, "weight", len(saved), start, "bfloat16", chunk_bytes=4 * 6 * 4)
        np.testing.assert_array_equal(as_bf16, from_float32(full[start:start + count], "bfloat16"))


def test_non_finite_rows_are_refused_on_save_naming_the_rows(tmp_path):
    rows = np.ones((10, 4), np.float32)
    rows[9, 2] = np.inf  # in the last, short chunk
    path = tmp_path / "centers.npy"
    with pytest.raises(ckpt.NonFiniteStateError, match=r"centers: rows \[9, 10\) hold 1 inf/NaN values"):
        write_npy(path, rows, "centers", chunk_bytes=3 * 16)
    assert list(tmp_path.iterdir()) == []  # neither the file nor its temporary
    bits = from_float32(np.ones((10, 4), np.float32), "bfloat16")
    bits[4, 0] = 0x7FC0  # a bfloat16 NaN
    with pytest.raises(ckpt.NonFiniteStateError, match=r"rows \[3, 6\) hold 1 inf/NaN"):
        write_npy(path, bits, "centers", chunk_bytes=3 * 8)


def test_non_finite_center_stops_the_save_and_leaves_the_latest_checkpoint(trained):
    trainer, folder = trained
    programs, head = trainer.programs, trainer.programs.heads[0]
    name = head.weight.name
    kept = programs.read(name)
    broken = kept.copy()
    broken[-1, -1] = 0x7F80  # bfloat16 +inf in the last row
    programs.write(name, broken)
    writer = ckpt.CheckpointWriter(folder.parent, 0, 1)
    try:
        with pytest.raises(ckpt.NonFiniteStateError, match=rf"rank 0: class centers {name} \(weight\): rows "
                                                           rf"\[\d+, {len(kept)}\) hold 1 inf/NaN"):
            writer.save(programs, {"global_step": 3, "epoch": 0, "step_in_epoch": 3})
    finally:
        programs.write(name, kept)
    assert ckpt.latest_checkpoint(folder.parent) == folder
    assert not (folder.parent / "step_000000003").exists()
    assert not list((folder.parent / "step_000000003.partial" / "centers").glob("head0.weight.*"))


def test_non_finite_row_is_refused_on_load_naming_the_file_and_classes(tmp_path):
    full = np.ones((29, 6), np.float32)
    full[17, 1] = np.nan  # shard 1's row 2
    save_split(tmp_path, full, [(0, 15), (15, 14)])
    out = np.zeros((29, 6), np.float32)
    shard = tmp_path / "centers" / "head0.weight.rank1.npy"
    with pytest.raises(ckpt.CheckpointError, match=rf"checkpoint file {shard}: class centers \(weight\) of "
                                                   r"classes \[15, 19\) hold 1 inf/NaN values"):
        ckpt.read_rows_into(out, tmp_path, 0, "weight", 2, 0, chunk_bytes=4 * 6 * 4)


def test_a_shard_of_other_length_than_its_header_is_unreadable(tmp_path):
    full = np.arange(29 * 6, dtype=np.float32).reshape(29, 6)
    save_split(tmp_path, full, [(0, 15), (15, 14)])
    shard = tmp_path / "centers" / "head0.weight.rank0.npy"
    shard.write_bytes(shard.read_bytes() + b"\0" * 24)
    with pytest.raises(ckpt.CheckpointError, match=r"head0\.weight\.rank0\.npy is unreadable: it holds 384 bytes "
                                                   r"of rows, its header declares 360"):
        ckpt.read_rows_into(np.zeros((29, 6), np.float32), tmp_path, 0, "weight", 2, 0)


def test_direct_writes_pad_nothing_and_fall_back_where_refused(tmp_path):
    """Sizes around the direct-write alignment come out exact, on the disk and on a memory file
    system (where the kernel may refuse ``O_DIRECT``: the page cache is used instead)."""
    import os
    import tempfile

    from paddle_pfc.engine.checkpoint.files import DIRECT_ALIGN

    folders = [tmp_path] + ([Path(tempfile.mkdtemp(dir="/dev/shm"))] if os.path.isdir("/dev/shm") else [])
    for folder in folders:
        for rows in (1, DIRECT_ALIGN // 16 - 8, DIRECT_ALIGN // 16, 3 * DIRECT_ALIGN // 16 + 5):
            value = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4)
            path = folder / f"{rows}.npy"
            write_npy(path, value, "rows", chunk_bytes=DIRECT_ALIGN)
            assert path.read_bytes() == npy_bytes(value)
            assert not path.with_name(path.name + ".tmp").exists()
        if folder != tmp_path:
            shutil.rmtree(folder)


def test_auto_preemption_grace_covers_the_shard_bytes_and_two_steps(trained):
    """``train.preempt_grace: null``: the trainer records its rank's shard bytes (what the
    checkpoint's center files hold past their headers) and the latest step's time; the grace is
    the floor, two such steps and those bytes at the assumed disk rate."""
    from paddle_pfc.engine.preemption import AUTO_GRACE_DISK_RATE, AUTO_GRACE_FLOOR, PreemptionWatch

    trainer, folder = trained
    assert trainer.cfg.train.preempt_grace is None
    rows = [np.load(path) for path in sorted((folder / "centers").glob("*.npy"))]
    assert trainer.preemption.checkpoint_bytes == sum(value.nbytes for value in rows) > 0
    assert trainer.preemption.step_seconds > 0
    watch = PreemptionWatch(0, 1, None)
    watch.checkpoint_bytes, watch.step_seconds = 7_700_000_000, 15.0
    assert watch.grace_seconds() == AUTO_GRACE_FLOOR + 30.0 + 7_700_000_000 / AUTO_GRACE_DISK_RATE
    assert PreemptionWatch(0, 1, 12.5).grace_seconds() == 12.5


def test_a_shard_is_saved_and_loaded_without_a_host_copy_of_it(tmp_path):
    """numpy allocates less than half a 32 MiB shard while it is saved from its tensor and loaded
    into another: the inf/NaN mask of one chunk (a load that builds the shard as a host array, as
    the copying loader did, allocates all of it)."""
    import tracemalloc

    import paddle
    from paddle.base import core

    from paddle_pfc.engine.checkpoint.writer import write_shard

    rows = np.random.default_rng(3).standard_normal((16384, 512)).astype(np.float32)
    scope = core.Scope()
    scope.var("centers").get_tensor().set(rows, paddle.CPUPlace())
    scope.var("loaded").get_tensor().set(np.zeros_like(rows), paddle.CPUPlace())
    save_split(tmp_path, rows[:0], [(0, 0)])  # the split record; the shard comes from the tensor
    (tmp_path / "centers" / "head0.rank0.json").write_text(json.dumps({"class_start": 0, "num_local": 16384}))
    path = tmp_path / "centers" / "head0.weight.rank0.npy"
    tracemalloc.start()
    try:
        write_shard(scope, "centers", path, "centers")
        saved_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        ckpt.read_rows_into(ckpt.tensor_view(scope, "loaded"), tmp_path, 0, "weight", 1, 0)
        loaded_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert path.read_bytes() == npy_bytes(rows)
    np.testing.assert_array_equal(np.array(scope.find_var("loaded").get_tensor()), rows)
    assert saved_peak < rows.nbytes // 2 and loaded_peak < rows.nbytes // 2, (saved_peak, loaded_peak)
