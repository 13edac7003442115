"""Saving: every rank streams its center shards into the ``step_N.partial`` folder, rank 0 adds the
backbone and the other states, records every file's checksum in ``meta.json`` and renames the
folder complete."""
from __future__ import annotations

import json
import logging
import os
import shutil
import time
from pathlib import Path

from paddle_pfc.engine.checkpoint.common import BACKBONE_FILE, LATEST, STATES_FILE, CheckpointTarget
from paddle_pfc.engine.checkpoint.files import disk_error, write_bytes
from paddle_pfc.engine.checkpoint.folders import complete_checkpoints, step_dir, stranger_in_partial, write_meta
from paddle_pfc.engine.checkpoint.npy import write_npy
from paddle_pfc.engine.checkpoint.tensors import (
    center_optimizer,
    center_tensors,
    read_finite,
    read_tensor,
    tensor_view,
)
from paddle_pfc.utils.deletable import undeletable
from paddle_pfc.utils.npz_state import state_bytes


def write_backbone(folder: Path, target: CheckpointTarget) -> dict[str, dict]:
    """``folder/backbone.npz``: {structured name: ndarray} of ``target``'s backbone; returns its
    ``{file name: {"sha256", "bytes"}}`` for :func:`write_meta`."""
    state = read_finite(target.scope, target.backbone_names)
    return {BACKBONE_FILE: write_bytes(Path(folder) / BACKBONE_FILE, state_bytes(state, "backbone"))}


def write_shard(scope, name: str, path: Path, label: str) -> dict:
    """``path``: variable ``name``'s rows streamed from its memory (:func:`write_npy`), or from a host
    copy where the tensor offers no view of its memory (a GPU tensor)."""
    rows = tensor_view(scope, name)
    return write_npy(path, read_tensor(scope, name) if rows is None else rows, label)


class CheckpointWriter:
    """Writes checkpoints of one training run (every rank holds one, with the same arguments)."""

    def __init__(self, root: str | Path, rank: int, world_size: int, keep: int = 3,
                 wait_timeout: float = 1800.0) -> None:
        self.root, self.rank, self.world_size = Path(root), rank, world_size
        self.keep, self.wait_timeout = keep, wait_timeout
        if rank == 0:
            self.root.mkdir(parents=True, exist_ok=True)
            for stale in self.root.glob("step_*.partial"):  # left by a killed run
                problem = stranger_in_partial(stale) or undeletable(stale)
                if problem is None:
                    shutil.rmtree(stale, ignore_errors=True)
                else:
                    logging.getLogger("paddle_pfc.train").warning("left %s as it is: %s", stale, problem)

    def save(self, target: CheckpointTarget, meta: dict) -> Path | None:
        """Write this rank's part of ``target`` (``meta``: its progress, ``meta["global_step"]``
        names the folder); rank 0 finishes the checkpoint and returns its path. A non-finite value
        anywhere stops the save (:class:`NonFiniteStateError`) before the checkpoint is complete."""
        scope, heads = target.scope, target.heads
        final = step_dir(self.root, meta["global_step"])
        partial = final.with_name(final.name + ".partial")
        try:
            (partial / "centers").mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise disk_error(partial / "centers", exc) from exc
        if self.rank == 0:  # small: read and checked before any shard is written
            backbone = read_finite(scope, target.backbone_names, "rank 0: ")
            states = read_finite(scope, {name: name for name in target.state_names}, "rank 0: ")
        files = {}  # this rank's files: relative path -> {"sha256", "bytes"}
        for index, head in enumerate(heads):
            prefix = partial / "centers" / f"head{index}"
            for kind, name in center_tensors(head):
                path = Path(f"{prefix}.{kind}.rank{self.rank}.npy")
                files[path.relative_to(partial).as_posix()] = write_shard(
                    scope, name, path, f"rank {self.rank}: class centers {name} ({kind})")
        for index, head in enumerate(heads):
            info = partial / "centers" / f"head{index}.rank{self.rank}.json"
            files[info.relative_to(partial).as_posix()] = write_bytes(info, json.dumps(
                {"class_start": head.class_start, "num_local": head.num_local,
                 "has_velocity": head.velocity is not None, "center_dtype": head.center_dtype,
                 "momentum_dtype": head.momentum_dtype, "optimizer": center_optimizer(head)}).encode())
        if self.rank == 0:
            files[BACKBONE_FILE] = write_bytes(partial / BACKBONE_FILE, state_bytes(backbone, "backbone"))
            files[STATES_FILE] = write_bytes(partial / STATES_FILE, state_bytes(states, "states"))
        # the marker carries the rank's checksums to rank 0, which records them in meta.json
        write_bytes(partial / f"done.rank{self.rank}", json.dumps(files).encode())
        if self.rank != 0:
            return None
        self._wait_for_ranks(partial, files)
        write_meta(partial, meta, self.world_size, len(heads), files)
        if final.exists():
            shutil.rmtree(final)
        os.replace(partial, final)
        write_bytes(self.root / LATEST, final.name.encode())
        self._prune(final)
        return final

    def _wait_for_ranks(self, partial: Path, files: dict) -> None:
        """Rank 0: wait for every rank's ``done`` marker and add its files' checksums to ``files``."""
        deadline = time.monotonic() + self.wait_timeout
        while not all((partial / f"done.rank{r}").exists() for r in range(self.world_size)):
            if time.monotonic() > deadline:
                raise TimeoutError(f"checkpoint {partial}: not every rank wrote its shard within "
                                   f"{self.wait_timeout:.0f}s (is the output folder shared by all nodes?)")
            time.sleep(0.05)
        for r in range(1, self.world_size):
            files.update(json.loads((partial / f"done.rank{r}").read_text()))

    def _prune(self, newest: Path) -> None:
        """Keep the ``keep`` complete checkpoints with the highest recorded steps (never ``newest``)."""
        done = [folder for _, folder in complete_checkpoints(self.root) if folder != newest]
        for old in done[:max(0, len(done) - (self.keep - 1))]:
            problem = undeletable(old)
            try:
                if problem is None:
                    shutil.rmtree(old)
            except OSError as exc:
                problem = f"{exc.strerror or exc}: {exc.filename}"
            if problem:
                logging.getLogger("paddle_pfc.train").warning(
                    "checkpoint rotation (train.keep_checkpoints=%d) could not delete %s: %s; it stays",
                    self.keep, old, problem)
