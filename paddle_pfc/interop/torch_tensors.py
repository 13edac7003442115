"""Torch's tensors and storages as its pickles name them, rebuilt as numpy arrays with every size
checked (see :mod:`paddle_pfc.interop.torch_reader` for the file formats).

A ``torch.XStorage`` the pickle names is a :class:`Storage` marker (a name and a dtype: never
called, never built); a storage comes back as a numpy array through ``persistent_load``; a tensor
(``_rebuild_tensor_v2``) as a :class:`Tensor` whose geometry was checked against its storage, its
bytes charged to the read's budget. A legacy file's tensors wait as :class:`LazyTensor` until
the storages after the pickle are read.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from paddle_pfc.utils.pickle_machine import Decoded, PickleGlobal, PickleReader
from paddle_pfc.utils.safe_pickle import CONTAINER_GLOBALS, MalformedPickleError

BFLOAT16 = "bfloat16"


class Storage(NamedTuple):
    """The ``torch.XStorage`` a pickle names: only a dtype (immutable, never called or built)."""

    name: str
    dtype: Any


STORAGE_DTYPES = {
    "HalfStorage": np.float16, "BFloat16Storage": BFLOAT16, "FloatStorage": np.float32,
    "DoubleStorage": np.float64, "LongStorage": np.int64, "IntStorage": np.int32,
    "ShortStorage": np.int16, "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_,
    "UntypedStorage": np.uint8,
}


def itemsize(dtype: Any) -> int:
    return 2 if dtype == BFLOAT16 else np.dtype(dtype).itemsize


def decoded_nbytes(nbytes: int, dtype: Any) -> int:
    return 2 * nbytes if dtype == BFLOAT16 else nbytes


def decode_storage(raw: bytes | memoryview, dtype: Any, big_endian: bool, source: str, key: str) -> np.ndarray:
    size = itemsize(dtype)
    if len(raw) % size:
        raise MalformedPickleError(source, f"holds {len(raw)} bytes, not a whole number of {size}-byte "
                                   "elements", f"storage {key}")
    if dtype == BFLOAT16:
        bits = np.frombuffer(raw, dtype=">u2" if big_endian else "<u2").astype(np.uint32) << 16
        return bits.view(np.float32)
    dt = np.dtype(dtype)
    if dt.itemsize > 1:
        dt = dt.newbyteorder(">" if big_endian else "<")
    return np.frombuffer(raw, dtype=dt).astype(np.dtype(dtype).newbyteorder("="), copy=True)


class Tensor(Decoded):
    """A rebuilt tensor (its numpy array), told apart from other values of the state dict."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    @property
    def nbytes(self) -> int:
        return self.array.nbytes


def geometry(source: str, storage: np.ndarray, offset: Any, size: Any, stride: Any, entry: str | None) -> tuple:
    """``(offset, size, stride)`` of a tensor over ``storage``, checked: whole numbers, in bounds, no
    more elements than the storage holds past ``offset``, stride 0 only on a dimension of size 1."""
    plain = (type(offset) is int and isinstance(size, tuple) and isinstance(stride, tuple)
             and all(type(n) is int for n in size + stride))
    if not plain or len(size) != len(stride) or offset < 0 or any(n < 0 for n in size + stride):
        raise MalformedPickleError(source, f"bad tensor geometry size={size!r:.60} stride={stride!r:.60} "
                                   f"offset={offset!r:.20}", entry)
    numel = math.prod(size)
    if numel == 0:
        return offset, size, stride
    if any(n > 1 and s == 0 for n, s in zip(size, stride)):
        raise MalformedPickleError(source, f"a tensor of size {list(size)} with stride {list(stride)}: a stride "
                                   "of 0 repeats one element (torch.save writes the storage it views)", entry)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= storage.size or numel > storage.size - offset:
        raise MalformedPickleError(source, f"a tensor of size {list(size)} (stride {list(stride)}, offset "
                                   f"{offset}) reaches element {last} of a storage of {storage.size} "
                                   "(truncated or corrupt file)", entry)
    return offset, size, stride


def rebuild_tensor(reader: PickleReader, storage: Any, offset: Any, size: Any, stride: Any,
                    *rest: Any) -> Tensor:
    if not isinstance(storage, np.ndarray):
        raise MalformedPickleError(reader.source, f"a tensor without a storage ({type(storage).__name__})",
                                   reader.entry())
    offset, size, stride = geometry(reader.source, storage, offset, size, stride, reader.entry())
    if 0 in size:
        return Tensor(np.zeros(size, storage.dtype))
    reader.budget.charge(math.prod(size) * storage.itemsize, reader.entry())
    view = np.lib.stride_tricks.as_strided(storage[offset:], shape=size,
                                           strides=tuple(s * storage.itemsize for s in stride))
    return Tensor(np.array(view))


def rebuild_parameter(reader: PickleReader, data: Any, *rest: Any) -> Any:
    if not isinstance(data, Decoded):
        raise MalformedPickleError(reader.source, f"a parameter of {type(data).__name__}, not a tensor",
                                   reader.entry())
    return data


def torch_globals(rebuild: Any) -> dict:
    allowed = dict(CONTAINER_GLOBALS)
    for name in ("_rebuild_tensor_v2", "_rebuild_tensor"):
        allowed[("torch._utils", name)] = rebuild
    for name in ("_rebuild_parameter", "_rebuild_parameter_with_state"):
        allowed[("torch._utils", name)] = rebuild_parameter
    for name, dtype in STORAGE_DTYPES.items():
        allowed[("torch", name)] = Storage(name, dtype)
    allowed[("torch.storage", "UntypedStorage")] = Storage("UntypedStorage", np.uint8)
    return allowed


def storage_pid(pid: Any, source: str) -> tuple[str, Any, int]:
    """``(key, dtype, numel)`` of a persistent id ``('storage', torch.XStorage, key, location, numel)``."""
    if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
        raise MalformedPickleError(source, f"unknown persistent id {pid!r:.80}")
    kind = pid[1]
    if not (isinstance(kind, PickleGlobal) and isinstance(kind.target, Storage)):
        raise MalformedPickleError(source, f"storage of unknown type {kind!r:.40}")
    if not isinstance(pid[2], (str, int)) or type(pid[4]) is not int or pid[4] < 0:
        raise MalformedPickleError(source, f"storage key {pid[2]!r:.40} of {pid[4]!r:.20} elements")
    return str(pid[2]), kind.target.dtype, pid[4]



class LazyStorage:
    """A legacy-format storage whose bytes come after the pickle."""

    def __init__(self, key: str) -> None:
        self.key = key


class LazyTensor(Decoded):
    """A legacy-format tensor: its ``_rebuild_tensor_v2`` arguments, rebuilt once the storages are read."""

    def __init__(self, args: tuple) -> None:
        self.args = args


def lazy_rebuild(reader: PickleReader, *args: Any) -> LazyTensor:
    if not args or not isinstance(args[0], LazyStorage):
        raise MalformedPickleError(reader.source, "a tensor without a storage", reader.entry())
    return LazyTensor(args)
