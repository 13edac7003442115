"""What every part of a checkpoint shares: its format names and limits, its errors, the target it is
saved from and loaded into, and the inf/NaN count of its tensors."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from paddle_pfc.utils.errors import PfcError

FORMAT = "paddle_pfc.checkpoint/2"
#: format 1: pickled backbone.pdparams / states.pdstates, no checksums (read-only)
FORMAT_V1 = "paddle_pfc.checkpoint/1"
LATEST = "latest"
BACKBONE_FILE, STATES_FILE = "backbone.npz", "states.npz"
LEGACY_BACKBONE_FILE, LEGACY_STATES_FILE = "backbone.pdparams", "states.pdstates"
#: Largest BatchNorm running variance a loaded checkpoint may hold. A trained face backbone's are
#: O(1e-3..1e3); a variance of 1e10 (activations of std 1e5) means a diverged or damaged model.
MAX_BN_VARIANCE = 1e10
#: Largest meta.json (or shard split record) read; one holds progress, the config and checksums.
MAX_META_BYTES = 16 << 20
MAX_POINTER_BYTES = 4096
#: Bytes of center rows written or read at a time: a shard streams between its tensor and its file
#: through buffers of at most this size, never a second copy of the shard.
CHUNK_BYTES = 64 << 20


class CheckpointTarget(Protocol):
    """What a checkpoint is saved from and loaded into: one rank's initialised programs.

    ``scope`` / ``place``: where the variables live; ``backbone_names``: structured name (layer
    ``state_dict`` key) -> variable name; ``state_names``: every other persistable rank 0 saves
    (optimizer states, ...); ``heads``: the ``LargeScaleClassifier`` shards of this rank.
    """

    scope: Any
    place: Any
    backbone_names: Mapping[str, str]
    state_names: Sequence[str]
    heads: Sequence


class CheckpointError(PfcError, ValueError):
    """A checkpoint that cannot be loaded into this program (names the tensor or field)."""


class NonFiniteStateError(PfcError, FloatingPointError):
    """A tensor about to be written into a checkpoint holds inf/NaN (names it); nothing is saved."""


def count_nonfinite(value: np.ndarray, bfloat16_bits: bool = False) -> int:
    """Number of inf/NaN values of a float array (or, with ``bfloat16_bits``, of a uint16 array
    of bfloat16 bit patterns); 0 for other dtypes."""
    value = np.asarray(value)
    if bfloat16_bits and value.dtype == np.uint16:
        return int(np.count_nonzero((value & 0x7F80) == 0x7F80))
    if np.issubdtype(value.dtype, np.floating):
        return int(value.size - np.count_nonzero(np.isfinite(value)))
    return 0


def check_finite(name: str, value: np.ndarray, bfloat16_bits: bool = False) -> None:
    """Raise :class:`NonFiniteStateError` naming ``name`` if a float array (or, with
    ``bfloat16_bits``, a uint16 array of bfloat16 bit patterns) holds inf or NaN."""
    value = np.asarray(value)
    bad = count_nonfinite(value, bfloat16_bits)
    if bad:
        raise NonFiniteStateError(f"{name}: {bad} of {value.size} values are inf/NaN; refusing to write "
                                  "a checkpoint that could not be resumed")


def rows_per_chunk(row_bytes: int, chunk_bytes: int = CHUNK_BYTES) -> int:
    """Rows of ``row_bytes`` each that fit in ``chunk_bytes`` (at least one)."""
    return max(1, chunk_bytes // max(1, row_bytes))
