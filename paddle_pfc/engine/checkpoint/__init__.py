"""Training checkpoints: atomic, strict, streamed, and resumable on any number of ranks.

Layout of one checkpoint directory (a folder every rank can write; shared across nodes)::

    step_000001200/
      meta.json                  progress (epoch, step_in_epoch, global_step), world_size,
                                 num_classes, embedding_size, the config, and ``files``: the
                                 sha256 and size of every other file of the checkpoint
      backbone.npz               {structured name (layer.state_dict key): ndarray}        (rank 0)
      states.npz                 {variable name: ndarray}: every other persistable of the
                                 training program except class centers and the learning rate
                                 (backbone momentum, ...)                                  (rank 0)
      centers/head0.weight.rank1.npy, centers/head0.velocity.rank1.npy, centers/head0.rank1.json
                                 each rank's shard rows [class_start, class_start + num_local)

Every file holds data only (``.npz`` / ``.npy`` read with ``allow_pickle=False``, JSON): loading
a checkpoint runs no code from it (:mod:`paddle_pfc.utils.npz_state`). bfloat16 tensors are
stored as their uint16 bit patterns. Checkpoints of format 1 (``backbone.pdparams`` /
``states.pdstates``, pickles of ``{name: ndarray}``, no checksums) still load: their pickles are
read through :mod:`paddle_pfc.utils.safe_pickle`, which constructs arrays and containers only.

Streaming: a center shard (the class centers, their momentum and its row scales) goes between its
tensor's memory and its ``.npy`` file :data:`~.common.CHUNK_BYTES` of rows at a time, never as a
second copy of the shard: saving writes the header and then the rows from a view of the tensor's
memory, hashing them as they go; loading reads the rows of any saved split straight into the
tensor's memory. The files are byte for byte those of ``np.save``. A tensor that offers no view of
its memory (on a GPU) is copied to the host whole, as the small backbone and states always are.

Verification on load: every file read is checked against its recorded sha256 and size (a flipped
byte or a truncated file is an error naming the file; a run choosing the checkpoint it resumes
from checks each file on one of its ranks, :func:`~.folders.verify_shared`); loaded tensors must
be finite, and BatchNorm running variances in ``[0, MAX_BN_VARIANCE]`` (an error names the
checkpoint and tensor).

Atomicity: everything is written into ``step_N.partial/``; each rank then drops
``done.rank<r>``; rank 0 waits for all of them, writes ``meta.json``, renames the folder to
``step_N`` and only then points ``latest`` at it (``os.replace``). A kill at any moment, or an
inf/NaN met while a shard is written, leaves the previous complete checkpoint the latest. Saving
and loading take a :class:`CheckpointTarget` (the scope, place and variable names of one rank's
programs). Loading is strict: a missing, unexpected or mis-shaped tensor, or a different
num_classes / embedding size / backbone, is an error naming it. Center shards (and their momentum)
are resharded to the loading run's balanced split, so N ranks' checkpoints resume on M ranks.

Modules: :mod:`~.common` (names, errors, target), :mod:`~.files` (atomic, hashed, checked files),
:mod:`~.tensors` (scope variables), :mod:`~.npy` (streamed ``.npy`` shards), :mod:`~.shards`
(splits and resharding), :mod:`~.states` (backbone and states), :mod:`~.folders` (complete and
latest checkpoints, ``meta.json``), :mod:`~.writer` (saving), :mod:`~.loading` (loading).
"""
from __future__ import annotations

from paddle_pfc.engine.checkpoint.common import (
    BACKBONE_FILE,
    CHUNK_BYTES,
    FORMAT,
    FORMAT_V1,
    LATEST,
    LEGACY_BACKBONE_FILE,
    LEGACY_STATES_FILE,
    MAX_BN_VARIANCE,
    MAX_META_BYTES,
    MAX_POINTER_BYTES,
    STATES_FILE,
    CheckpointError,
    CheckpointTarget,
    NonFiniteStateError,
    check_finite,
    count_nonfinite,
)
from paddle_pfc.engine.checkpoint.files import regular_file
from paddle_pfc.engine.checkpoint.folders import (
    complete_checkpoints,
    latest_checkpoint,
    newest_intact_checkpoint,
    read_meta,
    resolve_checkpoint,
    scan_checkpoints,
    step_dir,
    stranger_in_partial,
    verify_checkpoint,
    verify_shared,
    write_meta,
)
from paddle_pfc.engine.checkpoint.loading import (
    OPTIONAL_STATE_PREFIX,
    eval_program_from_checkpoint,
    load_backbone_state,
    load_checkpoint,
    model_from_checkpoint,
)
from paddle_pfc.engine.checkpoint.shards import read_rows_into, reshard_rows, saved_split
from paddle_pfc.engine.checkpoint.states import check_loaded_state
from paddle_pfc.engine.checkpoint.tensors import (
    center_tensors,
    persistable_names,
    read_finite,
    read_tensor,
    shard_bytes,
    tensor_view,
    write_tensor,
)
from paddle_pfc.engine.checkpoint.writer import CheckpointWriter, write_backbone

__all__ = ["BACKBONE_FILE", "CHUNK_BYTES", "FORMAT", "FORMAT_V1", "LATEST", "LEGACY_BACKBONE_FILE",
           "LEGACY_STATES_FILE", "MAX_BN_VARIANCE", "MAX_META_BYTES", "MAX_POINTER_BYTES", "OPTIONAL_STATE_PREFIX",
           "STATES_FILE", "CheckpointError", "CheckpointTarget", "CheckpointWriter", "NonFiniteStateError",
           "center_tensors", "check_finite", "check_loaded_state", "complete_checkpoints", "count_nonfinite",
           "eval_program_from_checkpoint", "latest_checkpoint", "load_backbone_state", "load_checkpoint",
           "model_from_checkpoint",
           "newest_intact_checkpoint", "persistable_names", "read_finite", "read_meta", "read_rows_into",
           "read_tensor", "regular_file", "reshard_rows", "resolve_checkpoint", "saved_split", "scan_checkpoints",
           "shard_bytes", "step_dir", "stranger_in_partial", "tensor_view", "verify_checkpoint", "verify_shared",
           "write_backbone", "write_meta", "write_tensor"]
