"""Paddle's ``.pdparams`` files (``paddle.save`` / ``paddle.static.save`` of a state dict), read
without running code.

A ``.pdparams`` is a pickle of ``{name: ndarray}`` (protocols 2-4) with optional bookkeeping keys:
``StructuredToParameterName@@`` (structured name -> parameter name, dropped here) and
``UnpackBigParamInfor@@`` (arrays over 1 GiB split into ``name@@.i`` slices under protocols 2/3,
joined here). A tensor pickled on its own is ``tuple((name, ndarray))``; it is read as the array.
Only containers and numpy arrays are constructed (:mod:`paddle_pfc.utils.safe_pickle`); Paddle's
``eval``-based reduction of a raw ``DenseTensor`` and any other global are refused.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from paddle_pfc.utils.safe_pickle import ARRAY_GLOBALS, TUPLE_GLOBALS, MalformedPickleError, load_file

_NAME_TABLE = "StructuredToParameterName@@"
_UNPACK_INFO = "UnpackBigParamInfor@@"

_PDPARAMS_GLOBALS = {**ARRAY_GLOBALS, **TUPLE_GLOBALS}


def _as_array(value: Any) -> Any:
    # ``paddle.save`` reduces an eager Tensor to ``tuple((name, ndarray))``.
    if (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str)
            and isinstance(value[1], np.ndarray)):
        return value[1]
    return value


def load_pdparams(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """``{name: ndarray}`` of a ``.pdparams`` state dict at ``path``.

    Raises :class:`~paddle_pfc.utils.safe_pickle.UnsafePickleError` for a file that would
    construct anything but containers and arrays, and ``MalformedPickleError`` for one that is not
    a state dict (truncated, another pickle, a value that is not an array), naming ``path``.
    """
    source = os.fspath(path)
    loaded = load_file(path, allowed=_PDPARAMS_GLOBALS, encoding="latin1")
    if not isinstance(loaded, dict):
        raise MalformedPickleError(source, f"not a state dict (a pickled {type(loaded).__name__})")
    state = dict(loaded)
    state.pop(_NAME_TABLE, None)
    unpack = state.pop(_UNPACK_INFO, None) or {}
    try:
        for key, info in unpack.items():
            slices = [state.pop(part) for part in info["slices"]]
            state[key] = np.concatenate(slices).reshape(info["OriginShape"])
    except (AttributeError, KeyError, TypeError, ValueError) as error:
        raise MalformedPickleError(source, f"broken {_UNPACK_INFO} table ({error!r})") from error
    state = {key: _as_array(value) for key, value in state.items()}
    for key, value in state.items():
        if not isinstance(key, str) or not isinstance(value, np.ndarray):
            raise MalformedPickleError(source, f"a {type(value).__name__}, not an array", f"entry {key!r}")
    return state
