"""Pickles read without running code and without letting the file steer what is built.

A pickle is a program: every global it names is imported and may be called, and ``BUILD`` hands
its state to whatever object is on the stack. The readers here run the pickle on a stack machine of
ours (:mod:`paddle_pfc.utils.pickle_machine`): the globals a format needs map to functions of ours
(the allow-lists below); any other global is refused with :class:`UnsafePickleError` naming the file
and what it tried to construct. Arrays are built here from checked ``(dtype, shape, bytes)``: numeric
dtypes only (bool, signed and unsigned integers, float16/32/64, complex64/128, either byte order),
the byte count equal to what the shape declares; a 1-D object array comes back as a list of its
items. Containers come back as Python containers; nothing else (no void, structured or object
dtype, no instance of any class) is ever made. What a read allocates and returns is charged to a
:class:`~paddle_pfc.utils.decode_budget.DecodeBudget` (:class:`~paddle_pfc.utils.errors.BudgetError`).
"""
from __future__ import annotations

import collections
import io
import math
import os
from typing import Any

import numpy as np

from paddle_pfc.utils.decode_budget import DecodeBudget, file_budget
from paddle_pfc.utils.errors import InputDataError
from paddle_pfc.utils.pickle_machine import (
    LARGE_BYTES,
    Allowed,
    MalformedPickleError,
    Pending,
    PickleGlobal,
    PickleReader,
    UnsafePickleError,
)

__all__ = ["UnsafePickleError", "MalformedPickleError", "CONTAINER_GLOBALS", "NUMPY_GLOBALS", "ARRAY_GLOBALS",
           "restricted_load", "load_file", "PickleReader"]

_NUMERIC_CODES = {"b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16"}
_OBJECT_CODE = "O8"
_MAX_NDIM = 32


def _text(reader: PickleReader, value: Any, what: str) -> str:
    if isinstance(value, bytes):  # Python 2 files read with encoding="bytes"
        value = value.decode("ascii", "replace")
    if not isinstance(value, str):
        raise reader.malformed(f"{what} is a {type(value).__name__}, not a string")
    return value


class _Dtype(Pending):
    """``numpy.dtype(code)``: a numeric code (or ``O8``), then its byte order from ``BUILD``."""

    def __init__(self, code: str) -> None:
        self.code, self.dtype = code, None

    def build(self, reader: PickleReader, state: Any) -> None:
        flags = 63 if self.code == _OBJECT_CODE else 0
        if isinstance(state, tuple) and len(state) > 1 and isinstance(state[1], bytes):  # Python 2, "bytes"
            state = (state[0], state[1].decode("latin-1"), *state[2:])
        if (self.dtype is not None or not isinstance(state, tuple) or len(state) != 8 or state[0] != 3
                or state[1] not in ("<", ">", "|", "=") or state[2:] != (None, None, None, -1, -1, flags)):
            raise reader.malformed(f"numpy dtype {self.code} with state {state!r:.120} (only plain numeric "
                                   "dtypes are read: no fields, subarrays or metadata)")
        dtype = np.dtype(self.code)
        self.dtype = dtype.newbyteorder(state[1]) if state[1] in "<>" and dtype.itemsize > 1 else dtype

    def value(self, reader: PickleReader) -> np.dtype:
        if self.dtype is None:
            raise reader.malformed(f"numpy dtype {self.code} used before its state is set")
        return self.dtype


def _dtype(reader: PickleReader, code: Any, align: Any = False, copy: Any = True) -> _Dtype:
    code = _text(reader, code, "a dtype code")
    if code not in _NUMERIC_CODES and code != _OBJECT_CODE:
        raise reader.malformed(f"numpy dtype {code!r} (only bool, integer, float and complex dtypes are read)")
    return _Dtype(code)


def _shape(reader: PickleReader, shape: Any) -> tuple[int, ...]:
    if (not isinstance(shape, tuple) or len(shape) > _MAX_NDIM
            or not all(type(n) is int and n >= 0 for n in shape)):
        raise reader.malformed(f"array shape {shape!r:.80} (a tuple of at most {_MAX_NDIM} sizes >= 0)")
    return shape


def make_array(reader: PickleReader, dtype: Any, shape: Any, data: Any, fortran: bool = False) -> Any:
    """The array ``dtype`` x ``shape`` (C or Fortran order) of exactly the bytes ``data`` (``bytes``,
    ``bytearray`` or a latin-1 ``str``), charged to the reader's budget; a list for a 1-D object array."""
    shape = _shape(reader, shape)
    numel = math.prod(shape)
    if not isinstance(dtype, np.dtype):
        raise reader.malformed(f"an array whose dtype is a {type(dtype).__name__}")
    if dtype.kind == "O":
        if len(shape) != 1 or not isinstance(data, list) or len(data) != numel:
            raise reader.malformed(f"an object array of shape {shape} (only 1-D lists of values are read)")
        return reader.track(list(data), data)
    if not isinstance(data, (bytes, bytearray, str)):
        raise reader.malformed(f"array data of type {type(data).__name__}")
    nbytes = numel * dtype.itemsize
    if len(data) != nbytes:
        raise reader.malformed(f"an array of shape {shape} and dtype {dtype} needs {nbytes:,} bytes; the file "
                               f"gives {len(data):,}")
    reader.budget.charge(nbytes, reader.entry())
    if isinstance(data, str):
        data = data.encode("latin-1")
    flat = np.frombuffer(data, dtype=dtype, count=numel) if numel else np.zeros(0, dtype)
    if dtype.kind == "b":  # a byte other than 0 or 1 is True, as numpy reads it
        flat = flat.view(np.uint8) != 0
    array = flat.reshape(shape, order="F" if fortran else "C")
    # a large bytes opcode arrives as a bytearray of its own: the array uses it as it is (numpy's
    # unpickler does the same with bytes); smaller data is copied into a writable array
    return array if array.flags.writeable else np.array(array, copy=True, order="K")


class _Array(Pending):
    """``numpy.core.multiarray._reconstruct(ndarray, ...)``: an array waiting for its ``BUILD`` state."""

    def __init__(self) -> None:
        self.array: Any = None

    def build(self, reader: PickleReader, state: Any) -> None:
        if self.array is not None or not isinstance(state, tuple) or len(state) not in (4, 5):
            raise reader.malformed(f"numpy array state {state!r:.80}")
        if len(state) == 5:
            if state[0] != 1:
                raise reader.malformed(f"numpy array state version {state[0]!r}")
            state = state[1:]
        shape, dtype, fortran, data = state
        if fortran not in (True, False):
            raise reader.malformed(f"numpy array order flag {fortran!r}")
        self.array = make_array(reader, dtype, shape, data, bool(fortran))

    def value(self, reader: PickleReader) -> Any:
        if self.array is None:
            raise reader.malformed("a numpy array used before its data is set (an array without data)")
        return self.array


def _reconstruct(reader: PickleReader, subtype: Any, shape: Any = None, code: Any = None) -> _Array:
    if not (isinstance(subtype, PickleGlobal) and subtype.target is _NDARRAY):
        raise reader.malformed(f"an array of subtype {subtype!r:.60}")
    return _Array()


def _frombuffer(reader: PickleReader, buffer: Any, dtype: Any, shape: Any, order: Any) -> Any:
    if order not in ("C", "F") or not isinstance(buffer, (bytes, bytearray)):
        raise reader.malformed(f"numpy buffer of {type(buffer).__name__} in order {order!r:.10}")
    if isinstance(dtype, np.dtype) and dtype.kind == "O":
        raise reader.malformed("an object array from a raw buffer")
    return make_array(reader, dtype, shape, buffer, order == "F")


def _scalar(reader: PickleReader, dtype: Any, data: Any = None) -> Any:
    if not isinstance(dtype, np.dtype) or dtype.kind == "O":
        raise reader.malformed("a numpy scalar of no numeric dtype")
    return make_array(reader, dtype, (), data)[()]


def _ordered_dict(reader: PickleReader) -> collections.OrderedDict:
    return reader.track(collections.OrderedDict())


def _items(reader: PickleReader, items: Any, what: str) -> list:
    if not isinstance(items, (list, tuple)):
        raise reader.malformed(f"{what} of a {type(items).__name__}")
    return list(items)


def _set(reader: PickleReader, items: Any = ()) -> set:
    return reader.track(set(_items(reader, items, "set")), items)


def _frozenset(reader: PickleReader, items: Any = ()) -> frozenset:
    return reader.track(frozenset(_items(reader, items, "frozenset")), items)


def _tuple(reader: PickleReader, items: Any = ()) -> tuple:
    value = tuple(_items(reader, items, "tuple"))
    return reader.track(value, value)


def _latin1_encode(reader: PickleReader, text: Any, encoding: Any = "latin1") -> bytes:
    # Python 3 writes ``bytes`` under protocols 0-2 as ``_codecs.encode(str, 'latin1')``.
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise reader.malformed(f"_codecs.encode of a {type(text).__name__} to {encoding!r:.20}")
    reader.budget.charge(len(text), reader.entry())
    return bytearray(text, "latin-1") if len(text) >= LARGE_BYTES else text.encode("latin-1")


def _bytes(reader: PickleReader, *args: Any) -> bytes:
    # Protocol 0 writes ``b""`` as ``bytes()`` and short bytes as ``bytes([ints])``.
    if args and (len(args) > 1 or not isinstance(args[0], (list, tuple))):
        raise reader.malformed("bytes() of anything but a list of byte values")
    return bytes(*args)


def _bytearray(reader: PickleReader, data: Any = b"", encoding: Any = None) -> bytearray:
    # Protocol 3+ writes ``bytearray(bytes)``; protocol 2 ``bytearray(str, 'latin-1')``.
    if isinstance(data, str) and encoding in ("latin1", "latin-1"):
        data = data.encode("latin-1")
    if not isinstance(data, bytes):
        raise reader.malformed(f"bytearray() of a {type(data).__name__} (only of bytes)")
    reader.budget.charge(len(data), reader.entry())
    return bytearray(data)


_NDARRAY = "numpy.ndarray"  # a marker: a global that is never called
_NUMPY_MODULES = ("numpy.core.multiarray", "numpy._core.multiarray")
_NUMERIC_MODULES = ("numpy.core.numeric", "numpy._core.numeric")

#: Python containers and the byte-string helpers of protocols 0-2.
CONTAINER_GLOBALS: dict[tuple[str, str], Any] = {
    ("collections", "OrderedDict"): _ordered_dict,
    **{(module, name): handler for module in ("builtins", "__builtin__")
       for name, handler in (("set", _set), ("frozenset", _frozenset), ("bytearray", _bytearray),
                             ("bytes", _bytes))},
    ("_codecs", "encode"): _latin1_encode,
}

#: numpy arrays, dtypes and scalars as ``ndarray.__reduce_ex__`` writes them (numpy 1 and 2).
NUMPY_GLOBALS: dict[tuple[str, str], Any] = {
    ("numpy", "ndarray"): _NDARRAY,
    ("numpy", "dtype"): _dtype,
    **{(module, "_reconstruct"): _reconstruct for module in _NUMPY_MODULES},
    **{(module, "scalar"): _scalar for module in _NUMPY_MODULES},
    **{(module, "_frombuffer"): _frombuffer for module in _NUMERIC_MODULES},
}

#: what most array pickles need: containers and numpy.
ARRAY_GLOBALS: dict[tuple[str, str], Any] = {**CONTAINER_GLOBALS, **NUMPY_GLOBALS}

#: ``tuple(...)``, which Paddle's tensor reduction writes.
TUPLE_GLOBALS: dict[tuple[str, str], Any] = {("builtins", "tuple"): _tuple, ("__builtin__", "tuple"): _tuple}


def restricted_load(file: Any, *, source: str, allowed: Allowed = ARRAY_GLOBALS,
                    persistent_load: Any = None, encoding: str = "ASCII",
                    budget: DecodeBudget | None = None) -> Any:
    """Read one pickle from ``file`` (a binary file object at the pickle's start, or ``bytes``) with
    only the handlers ``allowed`` maps its globals to; the file object is left after the pickle.

    ``source`` names the file in errors; ``budget`` (default: the input's size) bounds what is
    built. Raises :class:`UnsafePickleError` for a global outside ``allowed``,
    :class:`~paddle_pfc.utils.errors.BudgetError` for a file that declares more than the budget,
    and :class:`MalformedPickleError` for anything else that stops the read.
    """
    if isinstance(file, (bytes, bytearray, memoryview)):
        file = io.BytesIO(file)
    start = file.tell()
    size = file.seek(0, io.SEEK_END) - start
    file.seek(start)
    reader = PickleReader(file, size, source=source, allowed=allowed,
                          budget=budget if budget is not None else DecodeBudget(source, size),
                          persistent_load=persistent_load, encoding=encoding)
    try:
        return reader.load()
    except InputDataError:
        raise
    except MemoryError:
        raise
    except Exception as error:  # EOFError, ValueError, TypeError, UnicodeDecodeError, RecursionError ...
        raise MalformedPickleError(source, f"not a readable pickle ({type(error).__name__}: {error})",
                                   reader.entry()) from error


def load_file(path: str | os.PathLike, *, allowed: Allowed = ARRAY_GLOBALS, encoding: str = "ASCII",
              budget: DecodeBudget | None = None) -> Any:
    """:func:`restricted_load` of the file at ``path`` (an unreadable file names ``path``)."""
    try:
        with open(path, "rb") as f:
            return restricted_load(f, source=os.fspath(path), allowed=allowed, encoding=encoding,
                                   budget=budget if budget is not None else file_budget(path))
    except OSError as error:
        raise MalformedPickleError(path, f"cannot read ({error.strerror or error})") from error
