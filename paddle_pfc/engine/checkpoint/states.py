"""The backbone and the other (small) persistables of a checkpoint: read whole, verified, checked."""
from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

import numpy as np

from paddle_pfc.engine.checkpoint.common import (
    BACKBONE_FILE,
    FORMAT_V1,
    LEGACY_BACKBONE_FILE,
    LEGACY_STATES_FILE,
    MAX_BN_VARIANCE,
    STATES_FILE,
    CheckpointError,
    count_nonfinite,
)
from paddle_pfc.engine.checkpoint.files import FileCheck
from paddle_pfc.utils.npz_state import StateFileError, load_state
from paddle_pfc.utils.safe_pickle import ARRAY_GLOBALS, MalformedPickleError, UnsafePickleError, load_file


def read_state(check: FileCheck, meta: dict, part: str,
               expected: Collection[str] | None = None) -> dict[str, np.ndarray]:
    """``{name: ndarray}`` of a checkpoint's ``part`` ("backbone" or "states"), verified; with
    ``expected``, an ``.npz`` entry of another name is refused before it is read."""
    folder = check.folder
    if meta.get("format") == FORMAT_V1:
        path = check(folder / (LEGACY_BACKBONE_FILE if part == "backbone" else LEGACY_STATES_FILE))
        try:
            state = load_file(path, allowed=ARRAY_GLOBALS)
        except UnsafePickleError as exc:
            raise CheckpointError(str(exc)) from exc
        except MalformedPickleError as exc:
            raise CheckpointError(f"checkpoint file {path} is unreadable: {exc}") from exc
        if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, np.ndarray)
                                                  for k, v in state.items()):
            raise CheckpointError(f"checkpoint file {path} is not a {{name: array}} state")
        return state
    path = check(folder / (BACKBONE_FILE if part == "backbone" else STATES_FILE))
    try:
        return load_state(path, expected)
    except StateFileError as exc:
        raise CheckpointError(f"checkpoint file {path} is unreadable: {exc}") from exc


def check_loaded_state(where: str | Path, state: Mapping[str, np.ndarray], kind: str) -> None:
    """A loaded ``state`` must be finite and its BatchNorm running variances (names ending in
    ``_variance``) in ``[0, MAX_BN_VARIANCE]``; :class:`CheckpointError` names ``where`` and the
    tensor otherwise."""
    for key, value in state.items():
        bad = count_nonfinite(value)
        if bad:
            raise CheckpointError(f"checkpoint {where}: {kind} tensor {key!r} holds {bad} inf/NaN values "
                                  f"(of {np.asarray(value).size})")
        if key.endswith("_variance") and np.asarray(value).size and np.issubdtype(value.dtype, np.floating):
            low, high = float(np.min(value)), float(np.max(value))
            if low < 0 or high > MAX_BN_VARIANCE:
                wrong = low if low < 0 else high
                raise CheckpointError(f"checkpoint {where}: {kind} BatchNorm running variance {key!r} holds "
                                      f"{wrong:.6g} (a variance is >= 0 and at most {MAX_BN_VARIANCE:g})")
