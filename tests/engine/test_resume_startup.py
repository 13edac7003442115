"""A resumed run's start-up: its class centers and their momentum are allocated, not drawn at
random, and the checkpoint fills every row of them."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.checkpoint_runs import make_trainer
from helpers.startup_ops import RANDOM_OPS, initialisers
from paddle_pfc.engine import checkpoint as ckpt

INT8 = ("classifier.center_dtype=bfloat16", "classifier.momentum_dtype=int8")


@pytest.fixture(scope="module")
def int8_run(tmp_path_factory):
    """A tiny run (bfloat16 centers, int8 momentum) with a checkpoint at step 2."""
    out = tmp_path_factory.mktemp("resume_startup") / "run"
    trainer = make_trainer(out, "train.max_steps=2", "train.checkpoint_every_steps=2", *INT8)
    assert not RANDOM_OPS.isdisjoint(initialisers(trainer.programs.startup).values())  # a fresh run draws
    assert initialisers(trainer.programs.startup)[trainer.programs.head.weight.name] == "pd_op.gaussian"
    trainer.train()
    return out


def test_resumed_run_draws_no_random_centers_and_loads_every_row(int8_run):
    trainer = make_trainer(int8_run, "train.resume=auto", *INT8)
    p = trainer.programs
    ops = initialisers(p.startup)
    shard = [name for _, name in ckpt.center_tensors(p.head)]
    assert len(shard) == 3 and {ops[name] for name in shard} == {"pd_op.full"}
    assert not any(p.read(name).any() for name in shard)  # zeros until the checkpoint is loaded
    trainer.resume(trainer.resume_path)
    centers = ckpt.step_dir(int8_run / "checkpoints", 2) / "centers"
    for kind, name in ckpt.center_tensors(p.head):
        saved = np.load(centers / f"head0.{kind}.rank0.npy", allow_pickle=False)
        np.testing.assert_array_equal(p.read(name), saved, err_msg=kind)
        assert saved.any(), kind  # a trained shard: zeros left in place would show


@pytest.mark.parametrize("world_size", [2, 3])
def test_resharded_load_writes_every_row_of_every_tensor(int8_run, world_size):
    """Loading a 1-rank checkpoint's shards into another split writes every row of each rank's
    centers, momentum codes and scales: rows that start as garbage end as the saved rows."""
    from paddle_pfc.head.dtypes import HOST_DTYPES
    from paddle_pfc.head.geometry import class_split

    folder = ckpt.step_dir(int8_run / "checkpoints", 2)
    for kind, dtype in (("weight", "bfloat16"), ("velocity", "int8"), ("velocity_scale", "float32")):
        saved = np.load(folder / "centers" / f"head0.{kind}.rank0.npy", allow_pickle=False)
        for rank in range(world_size):
            start, count = class_split(saved.shape[0], world_size, rank)
            rows = np.empty((count, saved.shape[1]), HOST_DTYPES[dtype])
            rows.view(np.uint8)[...] = 0x55  # garbage (finite in every dtype)
            ckpt.read_rows_into(rows, folder, 0, kind, 1, start, dtype, num_classes=saved.shape[0])
            np.testing.assert_array_equal(rows, saved[start:start + count], err_msg=f"{kind} rank {rank}")
