"""The center dtypes: the one list of them with their sizes, and their host (numpy) forms.

``DTYPE_BYTES`` lists the dtypes a head stores its centers in and computes its products with
(float16 on GPU only); the classifier, the planner and the config schema take theirs from here.

On the host numpy has no bfloat16: a bfloat16 tensor read from a Paddle scope is a ``uint16``
array of the bit patterns (the upper half of a float32); float16 is numpy's ``float16``. The
helpers below convert center arrays between float32 and the storage dtype of a program, rounding
to nearest even like Paddle's cast.
"""
from __future__ import annotations

import numpy as np

#: The dtypes of class centers and of the head's products, with their sizes in bytes.
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}

#: The storage dtypes of the centers' momentum: a center dtype, or int8 codes with one float32 scale a
#: row (CPU).
MOMENTUM_DTYPES = (*DTYPE_BYTES, "int8")

#: Bytes of the float32 scale of one row of an int8 momentum.
INT8_SCALE_BYTES = 4


def momentum_bytes(rows: int, width: int, momentum_dtype: str) -> int:
    """Bytes of a [rows, width] momentum stored in ``momentum_dtype`` (int8: with its row scales)."""
    if momentum_dtype == "int8":
        return rows * (width + INT8_SCALE_BYTES)
    return rows * width * DTYPE_BYTES[momentum_dtype]


#: Why a dtype cannot be used on a CPU (the dtypes missing here can).
CPU_REFUSALS = {"float16": "float16 needs a GPU (Paddle's CPU kernels have no float16 matmul / gather); "
                           "use bfloat16 on CPU"}

#: numpy dtype that holds each Paddle center dtype on the host
HOST_DTYPES = {"float32": np.dtype(np.float32), "float16": np.dtype(np.float16),
               "bfloat16": np.dtype(np.uint16), "int8": np.dtype(np.int8)}


def to_float32(array: np.ndarray) -> np.ndarray:
    """float32 values of a host center array (uint16 arrays are bfloat16 bit patterns)."""
    array = np.asarray(array)
    if array.dtype == np.uint16:
        return (array.astype(np.uint32) << 16).view(np.float32)
    return array.astype(np.float32, copy=False)


def from_float32(array: np.ndarray, dtype: str) -> np.ndarray:
    """float32 values rounded to ``dtype`` (float32, float16, bfloat16) in its host form."""
    array = np.ascontiguousarray(array, dtype=np.float32)
    if dtype == "bfloat16":
        bits = array.view(np.uint32).astype(np.uint64)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16   # round to nearest, ties to even
        nan = np.isnan(array)
        out = rounded.astype(np.uint16)
        out[nan] = 0x7FC0
        return out
    return array.astype(HOST_DTYPES[dtype])


def convert(array: np.ndarray, dtype: str) -> np.ndarray:
    """A host center array in the host form of ``dtype`` (no copy when it already is)."""
    array = np.asarray(array)
    if array.dtype == HOST_DTYPES[dtype]:
        return array
    return from_float32(to_float32(array), dtype)
