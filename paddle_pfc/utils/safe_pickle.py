"""Pickles read without running code.

A pickle is a program: every global it names is imported and may be called. The readers here
resolve only the globals a format needs (an allow-list of ``(module, name)`` pairs, each mapped to
a callable of ours or a known-safe constructor); any other global is refused with
:class:`UnsafePickleError` naming the file and what it tried to construct, before anything of it
runs. Arrays come back as numpy arrays; containers as Python containers.
"""
from __future__ import annotations

import codecs
import collections
import io
import os
import pickle
from typing import Any, Callable, Mapping

import numpy as np

Allowed = Mapping[tuple[str, str], Callable[..., Any]]


class UnsafePickleError(ValueError):
    """A pickle that names a global outside its format's allow-list (names the file and global)."""


class MalformedPickleError(ValueError):
    """A file that is not a readable pickle (truncated, corrupt, or not a pickle); names the file."""


def _latin1_encode(text: str, encoding: str = "latin1") -> bytes:
    # Python 3 writes ``bytes`` under protocols 0-2 as ``_codecs.encode(str, 'latin1')``.
    if encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError(f"_codecs.encode with encoding {encoding!r}")
    return codecs.encode(text, "latin1")


def _bytes(*args: Any) -> bytes:
    # Protocol 0 writes ``b""`` as ``bytes()`` and short bytes as ``bytes([ints])``.
    if args and not isinstance(args[0], (list, tuple)):
        raise pickle.UnpicklingError(f"bytes({type(args[0]).__name__})")
    return bytes(*args)


def _numpy_scalar(dtype: np.dtype, data: Any = None) -> Any:
    try:
        from numpy._core.multiarray import scalar
    except ImportError:  # numpy 1
        from numpy.core.multiarray import scalar
    if not isinstance(dtype, np.dtype):
        raise pickle.UnpicklingError("numpy scalar without a dtype")
    return scalar(dtype, data) if data is not None else scalar(dtype)


def _numpy_reconstruct(subtype: Any, shape: Any, dtype: Any) -> np.ndarray:
    if subtype is not np.ndarray:
        raise pickle.UnpicklingError(f"array of subtype {subtype!r}")
    return np.ndarray.__new__(np.ndarray, shape, dtype)


def _numpy_frombuffer(buffer: Any, dtype: np.dtype, shape: Any, order: str) -> np.ndarray:
    if not isinstance(dtype, np.dtype) or dtype.hasobject:
        raise pickle.UnpicklingError(f"array buffer of dtype {dtype!r}")
    array = np.frombuffer(buffer, dtype=dtype)
    if order == "F":
        return array.reshape(shape[::-1]).T
    return array.reshape(shape)


def _dtype(*args: Any) -> np.dtype:
    return np.dtype(*args)


_NUMPY_MODULES = ("numpy.core.multiarray", "numpy._core.multiarray")
_NUMERIC_MODULES = ("numpy.core.numeric", "numpy._core.numeric")

#: Python containers and the byte-string helpers of protocols 0-2.
CONTAINER_GLOBALS: dict[tuple[str, str], Callable[..., Any]] = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "bytearray"): bytearray,
    ("builtins", "bytes"): _bytes,
    ("__builtin__", "bytes"): _bytes,
    ("builtins", "slice"): slice,
    ("__builtin__", "set"): set,
    ("__builtin__", "frozenset"): frozenset,
    ("__builtin__", "bytearray"): bytearray,
    ("_codecs", "encode"): _latin1_encode,
}

#: numpy arrays, dtypes and scalars as ``ndarray.__reduce_ex__`` writes them (numpy 1 and 2).
NUMPY_GLOBALS: dict[tuple[str, str], Callable[..., Any]] = {
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): _dtype,
    **{(module, "_reconstruct"): _numpy_reconstruct for module in _NUMPY_MODULES},
    **{(module, "scalar"): _numpy_scalar for module in _NUMPY_MODULES},
    **{(module, "_frombuffer"): _numpy_frombuffer for module in _NUMERIC_MODULES},
}

#: what most array pickles need: containers and numpy.
ARRAY_GLOBALS: dict[tuple[str, str], Callable[..., Any]] = {**CONTAINER_GLOBALS, **NUMPY_GLOBALS}


class _RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, file: Any, source: str, allowed: Allowed,
                 persistent_load: Callable[[Any], Any] | None, encoding: str) -> None:
        super().__init__(file, encoding=encoding)
        self._source = source
        self._allowed = allowed
        self._persistent = persistent_load

    def find_class(self, module: str, name: str) -> Any:
        found = self._allowed.get((module, name))
        if found is None:
            raise UnsafePickleError(
                f"{self._source}: refused to load: the pickle asks for {module}.{name}, which this "
                "format never holds (a file that constructs other objects can run code; nothing of "
                "it was run)")
        return found

    def persistent_load(self, pid: Any) -> Any:
        if self._persistent is None:
            raise pickle.UnpicklingError(f"persistent id {pid!r} in a format that has none")
        return self._persistent(pid)


def restricted_load(file: Any, *, source: str, allowed: Allowed = ARRAY_GLOBALS,
                    persistent_load: Callable[[Any], Any] | None = None,
                    encoding: str = "ASCII") -> Any:
    """Unpickle ``file`` (a binary file object or ``bytes``) constructing only ``allowed`` globals.

    ``source`` names the file in errors. Raises :class:`UnsafePickleError` for a global outside
    ``allowed`` and :class:`MalformedPickleError` for anything else that stops the read.
    """
    if isinstance(file, (bytes, bytearray, memoryview)):
        file = io.BytesIO(file)
    try:
        return _RestrictedUnpickler(file, source, allowed, persistent_load, encoding).load()
    except UnsafePickleError:
        raise
    except Exception as error:  # UnpicklingError, EOFError, ValueError, MemoryError ...
        raise MalformedPickleError(
            f"{source}: not a readable pickle ({type(error).__name__}: {error})") from error


def load_file(path: str | os.PathLike, *, allowed: Allowed = ARRAY_GLOBALS,
              encoding: str = "ASCII") -> Any:
    """:func:`restricted_load` of the file at ``path`` (an unreadable file names ``path``)."""
    try:
        with open(path, "rb") as f:
            return restricted_load(f, source=os.fspath(path), allowed=allowed, encoding=encoding)
    except OSError as error:
        raise MalformedPickleError(f"{os.fspath(path)}: cannot read ({error.strerror or error})") from error
