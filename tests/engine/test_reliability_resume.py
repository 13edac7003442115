"""Re-running a crashed job: ``--resume auto`` continues bit-exactly, a fresh run into the same
folder is refused with what to do, pruning and ``latest`` follow the steps in meta.json."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from launcher import REPO, children, launch, start_launch, worker_logs
from launcher import metrics_losses as losses
from paddle_pfc.engine import checkpoint as ckpt

TRAIN = REPO / "tools" / "train.py"
CONFIG = REPO / "tests" / "train_tiny.yaml"
STEPS = 12


def command(output_dir: Path, *extra: str) -> list[str]:
    return ["-c", str(CONFIG), "-o", f"train.max_steps={STEPS}", "-o", f"train.output_dir={output_dir}",
            "-o", "train.checkpoint_every_steps=2", "-o", "train.keep_checkpoints=2", *extra]


@pytest.mark.multirank
def test_crashed_job_rerun_with_resume_auto_continues_bit_exactly(tmp_path, tiny_two_rank_losses):
    expected = {step: loss for step, loss in tiny_two_rank_losses.items() if step <= STEPS}

    # The job script's command, killed (a rank dies) once a checkpoint of step >= 4 is complete.
    run = tmp_path / "run"
    job = command(run, "--resume", "auto")
    launcher = start_launch(TRAIN, 2, job, tmp_path / "log_crash")
    deadline = time.monotonic() + 240
    while launcher.poll() is None and time.monotonic() < deadline:
        newest = ckpt.latest_checkpoint(run / "checkpoints")
        if newest is not None and ckpt.read_meta(newest)["global_step"] >= 4:
            break
        time.sleep(0.05)
    workers = children(launcher.pid)
    assert launcher.poll() is None and len(workers) == 2, worker_logs(tmp_path / "log_crash")
    os.kill(max(workers), signal.SIGKILL)
    assert launcher.wait(timeout=120) != 0
    crashed_at = ckpt.read_meta(ckpt.latest_checkpoint(run / "checkpoints"))["global_step"]
    assert 4 <= crashed_at < STEPS

    # Re-running it without --resume is refused, naming the way out, and changes nothing.
    fresh = launch(TRAIN, 2, command(run), tmp_path / "log_fresh", check=False)
    assert fresh.returncode != 0
    error = (run / "error_rank0.txt").read_text()
    assert "already holds an earlier run's checkpoints" in error and "--resume auto" in error and "--overwrite" in error
    assert ckpt.read_meta(ckpt.latest_checkpoint(run / "checkpoints"))["global_step"] == crashed_at

    # The newest checkpoint damaged (its meta.json cut short): the same command again skips it,
    # naming it, resumes from the one before and repeats the reference.
    damaged = ckpt.latest_checkpoint(run / "checkpoints")
    (damaged / "meta.json").write_text("{")
    previous = ckpt.latest_checkpoint(run / "checkpoints")
    assert ckpt.read_meta(previous)["global_step"] == crashed_at - 2
    launch(TRAIN, 2, job, tmp_path / "log_rerun")
    log = (run / "train.log").read_text()
    assert f"resume auto: skipped {damaged}, whose meta.json cannot be read (CheckpointError" in log
    assert f"resumed from {previous}" in log
    assert losses(run) == expected  # every step, bit for bit (json keeps float64 exactly)
    names = sorted(p.name for p in (run / "checkpoints").glob("step_*"))
    assert names == ["step_000000010", "step_000000012"]
    assert (run / "checkpoints" / "latest").read_text() == "step_000000012"
    assert not (run / "error_rank0.txt").exists()


def test_newest_checkpoint_is_found_by_recorded_step_not_by_name_or_stale_pointer(tmp_path):
    root = tmp_path / "checkpoints"
    for name, step in (("step_000000040", 40), ("step_000000008", 8), ("zzz_not_a_checkpoint", 99)):
        (root / name).mkdir(parents=True)
        ckpt.write_meta(root / name, {"global_step": step}, world_size=1, num_heads=1)
    (root / "step_000000050.partial").mkdir()                 # an unfinished write
    (root / "latest").write_text("step_000000099")            # names a deleted folder
    assert ckpt.latest_checkpoint(root) == root / "step_000000040"
    assert ckpt.resolve_checkpoint(root) == root / "step_000000040"
    (root / "latest").write_text("step_000000008")            # an older one than the newest
    assert ckpt.latest_checkpoint(root) == root / "step_000000040"
    assert [s for s, _ in ckpt.complete_checkpoints(root)] == [8, 40]
    (root / "step_000000060").mkdir()                         # complete once, then damaged
    (root / "step_000000060" / "meta.json").write_text('{"global_step": 60')
    complete, unreadable = ckpt.scan_checkpoints(root)
    assert [s for s, _ in complete] == [8, 40] and [f.name for f, _ in unreadable] == ["step_000000060"]
    assert "is corrupt" in unreadable[0][1]
    assert ckpt.latest_checkpoint(root) == root / "step_000000040"
    from paddle_pfc.engine.overwrite import OutputDirError, delete_earlier_run, planned_deletions

    with pytest.raises(OutputDirError, match=r"step_000000060 has no meta\.json of a paddle_pfc checkpoint"):
        planned_deletions(tmp_path)  # --overwrite deletes only what a run wrote
    (root / "step_000000060" / "meta.json").unlink()
    (root / "step_000000060").rmdir()
    assert delete_earlier_run(planned_deletions(tmp_path)) == 3 and ckpt.latest_checkpoint(root) is None
    assert sorted(p.name for p in root.iterdir()) == ["zzz_not_a_checkpoint"]


def test_ranks_share_the_checksums_of_a_checkpoint(run):
    """Each recorded file is hashed by exactly one rank, the bytes spread evenly, and a rank hashes
    nothing outside its share (a damaged file of rank 1's share passes on rank 0)."""
    from paddle_pfc.engine.checkpoint.files import file_shares

    folder = run / "checkpoints" / "step_000000004"
    records = ckpt.read_meta(folder)["files"]
    shares = file_shares(records, 2)
    assert sorted(shares[0] + shares[1]) == sorted(records) and not set(shares[0]) & set(shares[1])
    loads = [sum(records[rel]["bytes"] for rel in share) for share in shares]
    assert abs(loads[0] - loads[1]) <= max(r["bytes"] for r in records.values())
    assert file_shares(records, 1) == [sorted(records)]
    assert file_shares(records, 3) == file_shares(dict(reversed(records.items())), 3)  # order-free


@pytest.mark.multirank
def test_damaged_file_hashed_by_rank_1_only_makes_both_ranks_skip_it(run, tmp_path):
    """``--resume auto`` on 2 ranks: a shard file of the newest checkpoint that only rank 1 hashes is
    damaged; both ranks skip to the checkpoint before (one warning, naming the file), resume from
    it and finish; rank 0 alone does not see the damage."""
    from helpers.checkpoint_runs import copy_run
    from paddle_pfc.engine.checkpoint.files import file_shares

    out = copy_run(run, tmp_path)
    root = out / "checkpoints"
    newest = root / "step_000000004"
    shares = file_shares(ckpt.read_meta(newest)["files"], 2)
    shard = newest / next(rel for rel in shares[1] if rel.endswith(".npy"))
    data = bytearray(shard.read_bytes())
    data[-1] ^= 0xFF
    shard.write_bytes(bytes(data))
    ckpt.verify_checkpoint(newest, 0, 2)  # rank 0's share is intact
    with pytest.raises(ckpt.CheckpointError, match="is damaged"):
        ckpt.verify_checkpoint(newest, 1, 2)
    launch(TRAIN, 2, ["-c", str(CONFIG), "-o", f"train.output_dir={out}", "-o", "train.max_steps=6",
                      "-o", "train.checkpoint_every_steps=2", "--resume", "auto"], tmp_path / "log")
    logs = [(tmp_path / "log" / f"workerlog.{r}").read_text() for r in (0, 1)]
    warning = (f"resume auto: skipped damaged checkpoint step_000000004 (checkpoint file {shard} is damaged: its "
               "sha256 ")
    assert sum(text.count(warning) for text in logs) == 1 and warning in logs[0], worker_logs(tmp_path / "log")
    assert "resuming from step_000000002" in logs[0]
    assert f"resumed from {root / 'step_000000002'} at epoch 0 step 1 (global step 2)" in logs[0]  # resharded
    assert "(each by one of the 2 ranks)" in logs[0]
    assert ckpt.read_meta(ckpt.latest_checkpoint(root))["global_step"] == 6
    ckpt.verify_checkpoint(newest)  # step 4 written again, whole
