"""PyTorch ``.pt`` / ``.pth`` state dicts (``torch.save(module.state_dict())``) read without torch and
without running the pickle.

Two file formats:

* zip (torch >= 1.6): ``<name>/data.pkl`` (the pickle) and ``<name>/data/<key>`` (each storage's raw
  bytes; ``<name>/byteorder`` says little or big endian, little when absent);
* legacy (torch < 1.6, or ``_use_new_zipfile_serialization=False``): consecutive pickles (magic
  number, protocol version, system info, the object, the storage keys) followed by each storage as
  an int64 element count and its bytes.

The pickle is read by :func:`paddle_pfc.utils.safe_pickle.restricted_load` with an allow-list of
``collections.OrderedDict``, ``torch._utils._rebuild_tensor_v2`` / ``_rebuild_parameter`` and the
``torch.*Storage`` types (each a dtype marker here, never called or built); storages come back as
numpy arrays through ``persistent_load``, tensors as numpy arrays with their offset and strides
applied. Storage dtypes: float16, bfloat16 (widened to float32), float32, float64, int64, int32,
int16, int8, uint8, bool. Anything else the pickle names (a pickled ``nn.Module``, a payload) is
refused with ``UnsafePickleError`` before it runs.

Sizes are checked before anything is allocated: a storage's bytes against what the zip member (or
the legacy file) holds, a tensor's geometry against its storage (in bounds, no more elements than
the storage has past its offset, a stride of 0 only on a dimension of size 1), and everything
decoded against the file's :class:`~paddle_pfc.utils.decode_budget.DecodeBudget`
(``BudgetError``).
"""
from __future__ import annotations

import io
import os
import math
import struct
import zipfile
import zlib
from typing import Any, NamedTuple

import numpy as np

from paddle_pfc.utils.decode_budget import DecodeBudget, file_budget
from paddle_pfc.utils.pickle_machine import Decoded, PickleGlobal, PickleReader
from paddle_pfc.utils.safe_pickle import CONTAINER_GLOBALS, MalformedPickleError, UnsafePickleError, restricted_load

__all__ = ["read_torch_state", "is_torch_zip", "is_torch_legacy", "LEGACY_MAGIC"]

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_BFLOAT16 = "bfloat16"


class _Storage(NamedTuple):
    """The ``torch.XStorage`` a pickle names: only a dtype (immutable, never called or built)."""

    name: str
    dtype: Any


_STORAGE_DTYPES = {
    "HalfStorage": np.float16, "BFloat16Storage": _BFLOAT16, "FloatStorage": np.float32,
    "DoubleStorage": np.float64, "LongStorage": np.int64, "IntStorage": np.int32,
    "ShortStorage": np.int16, "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_,
    "UntypedStorage": np.uint8,
}


def _itemsize(dtype: Any) -> int:
    return 2 if dtype == _BFLOAT16 else np.dtype(dtype).itemsize


def _decoded_nbytes(nbytes: int, dtype: Any) -> int:
    return 2 * nbytes if dtype == _BFLOAT16 else nbytes


def _decode(raw: bytes | memoryview, dtype: Any, big_endian: bool, source: str, key: str) -> np.ndarray:
    size = _itemsize(dtype)
    if len(raw) % size:
        raise MalformedPickleError(source, f"holds {len(raw)} bytes, not a whole number of {size}-byte "
                                   "elements", f"storage {key}")
    if dtype == _BFLOAT16:
        bits = np.frombuffer(raw, dtype=">u2" if big_endian else "<u2").astype(np.uint32) << 16
        return bits.view(np.float32)
    dt = np.dtype(dtype)
    if dt.itemsize > 1:
        dt = dt.newbyteorder(">" if big_endian else "<")
    return np.frombuffer(raw, dtype=dt).astype(np.dtype(dtype).newbyteorder("="), copy=True)


class _Tensor(Decoded):
    """A rebuilt tensor (its numpy array), told apart from other values of the state dict."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    @property
    def nbytes(self) -> int:
        return self.array.nbytes


def _geometry(source: str, storage: np.ndarray, offset: Any, size: Any, stride: Any, entry: str | None) -> tuple:
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


def _rebuild_tensor(reader: PickleReader, storage: Any, offset: Any, size: Any, stride: Any,
                    *rest: Any) -> _Tensor:
    if not isinstance(storage, np.ndarray):
        raise MalformedPickleError(reader.source, f"a tensor without a storage ({type(storage).__name__})",
                                   reader.entry())
    offset, size, stride = _geometry(reader.source, storage, offset, size, stride, reader.entry())
    if 0 in size:
        return _Tensor(np.zeros(size, storage.dtype))
    reader.budget.charge(math.prod(size) * storage.itemsize, reader.entry())
    view = np.lib.stride_tricks.as_strided(storage[offset:], shape=size,
                                           strides=tuple(s * storage.itemsize for s in stride))
    return _Tensor(np.array(view))


def _rebuild_parameter(reader: PickleReader, data: Any, *rest: Any) -> Any:
    if not isinstance(data, (_Tensor, _LazyTensor)):
        raise MalformedPickleError(reader.source, f"a parameter of {type(data).__name__}, not a tensor",
                                   reader.entry())
    return data


def _allowed(rebuild: Any) -> dict:
    allowed = dict(CONTAINER_GLOBALS)
    for name in ("_rebuild_tensor_v2", "_rebuild_tensor"):
        allowed[("torch._utils", name)] = rebuild
    for name in ("_rebuild_parameter", "_rebuild_parameter_with_state"):
        allowed[("torch._utils", name)] = _rebuild_parameter
    for name, dtype in _STORAGE_DTYPES.items():
        allowed[("torch", name)] = _Storage(name, dtype)
    allowed[("torch.storage", "UntypedStorage")] = _Storage("UntypedStorage", np.uint8)
    return allowed


def _storage_pid(pid: Any, source: str) -> tuple[str, Any, int]:
    """``(key, dtype, numel)`` of a persistent id ``('storage', torch.XStorage, key, location, numel)``."""
    if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
        raise MalformedPickleError(source, f"unknown persistent id {pid!r:.80}")
    kind = pid[1]
    if not (isinstance(kind, PickleGlobal) and isinstance(kind.target, _Storage)):
        raise MalformedPickleError(source, f"storage of unknown type {kind!r:.40}")
    if not isinstance(pid[2], (str, int)) or type(pid[4]) is not int or pid[4] < 0:
        raise MalformedPickleError(source, f"storage key {pid[2]!r:.40} of {pid[4]!r:.20} elements")
    return str(pid[2]), kind.target.dtype, pid[4]


def _flatten(obj: Any, source: str) -> dict[str, np.ndarray]:
    """``{name: array}`` of a (possibly nested, e.g. ``{"state_dict": ...}``) state dict."""
    if isinstance(obj, dict):
        if not any(isinstance(v, _Tensor) for v in obj.values()):
            # arcface_torch's training checkpoint (checkpoint_gpu_*.pt) keeps the backbone in
            # "state_dict_backbone", next to its PartialFC ("state_dict_softmax_fc") and optimizer
            for key in ("state_dict_backbone", "state_dict", "model", "backbone", "model_state_dict"):
                if isinstance(obj.get(key), dict):
                    return _flatten(obj[key], source)
        out = {}
        for key, value in obj.items():
            if isinstance(value, _Tensor):
                out[str(key)] = value.array
            elif key == "_metadata":
                continue
        if not out:
            raise MalformedPickleError(source, f"a dict without tensors (keys: {list(obj)[:8]})")
        return out
    raise MalformedPickleError(source, f"not a state dict (a pickled {type(obj).__name__}); save "
                               "module.state_dict(), not the module")


def is_torch_zip(path: str | os.PathLike) -> bool:
    """True for a zip holding a ``*/data.pkl`` (torch's format)."""
    try:
        with zipfile.ZipFile(path) as zf:
            return any(n.endswith("data.pkl") for n in zf.namelist())
    except (zipfile.BadZipFile, OSError):
        return False


def is_torch_legacy(path: str | os.PathLike) -> bool:
    """True for a file starting with a pickled torch magic number (the legacy format)."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError:
        return False
    # protocol 2 pickle of the long magic number: PROTO 2, LONG1 10 bytes
    return head[:4] == b"\x80\x02\x8a\x0a" and int.from_bytes(head[4:14], "little") == LEGACY_MAGIC


def _zip_storages(zf: zipfile.ZipFile, root: str, path: str, budget: DecodeBudget, big_endian: bool) -> Any:
    """``persistent_load`` of a torch zip: each storage read once, its size checked before reading."""
    loaded: dict[str, np.ndarray] = {}

    def persistent_load(pid: Any) -> np.ndarray:
        key, dtype, numel = _storage_pid(pid, path)
        if key in loaded:
            return loaded[key]
        try:
            info = zf.getinfo(f"{root}data/{key}")
        except KeyError:
            raise MalformedPickleError(path, "missing from the archive", f"storage {key}") from None
        if info.file_size < numel * _itemsize(dtype) and dtype != np.uint8:
            raise MalformedPickleError(path, f"has {info.file_size // _itemsize(dtype)} elements, its header "
                                       f"says {numel} (truncated or corrupt file)", f"storage {key}")
        budget.charge(_decoded_nbytes(info.file_size, dtype), f"storage {key}")
        try:
            raw = zf.read(info)
        except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as error:
            raise MalformedPickleError(path, f"cannot be read ({error}); truncated or corrupt file",
                                       f"storage {key}") from error
        loaded[key] = _decode(raw, dtype, big_endian, path, key)
        return loaded[key]
    return persistent_load


def _read_zip(path: str) -> dict[str, np.ndarray]:
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise MalformedPickleError(path, f"not a readable torch zip file ({error}); truncated or "
                                   "corrupt?") from error
    budget = file_budget(path)
    with zf:
        names = zf.namelist()
        pickles = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
        if len(pickles) != 1:
            raise MalformedPickleError(path, f"a zip without exactly one data.pkl (found {pickles[:4]}); "
                                       "not a torch.save file")
        root = pickles[0][: -len("data.pkl")]
        big_endian = False
        if root + "byteorder" in names:
            big_endian = zf.read(root + "byteorder")[:16].strip() == b"big"
        try:
            budget.charge(zf.getinfo(pickles[0]).file_size, "data.pkl")
            data = zf.read(pickles[0])
        except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as error:
            raise MalformedPickleError(path, f"data.pkl cannot be read ({error}); truncated or corrupt "
                                       "file") from error
        obj = restricted_load(data, source=path, allowed=_allowed(_rebuild_tensor), budget=budget,
                              persistent_load=_zip_storages(zf, root, path, budget, big_endian),
                              encoding="utf-8")
    return _flatten(obj, path)


def _read_legacy(path: str) -> dict[str, np.ndarray]:
    budget = file_budget(path)
    with open(path, "rb") as f:
        blob = f.read()
    stream = io.BytesIO(blob)
    allowed = _allowed(_lazy_rebuild)

    def read() -> Any:
        return restricted_load(stream, source=path, allowed=allowed, budget=budget)

    if read() != LEGACY_MAGIC:
        raise MalformedPickleError(path, "not a torch file (bad magic number)")
    protocol = read()
    if protocol != 1001:
        raise MalformedPickleError(path, f"torch legacy protocol {protocol!r:.20}, expected 1001")
    info = read()
    little = not isinstance(info, dict) or info.get("little_endian", True)
    pending: dict[str, Any] = {}  # storage key -> dtype

    def persistent_load(pid: Any) -> Any:
        key, dtype, _ = _storage_pid(pid, path)
        if len(pid) > 5 and pid[5] is not None:
            raise MalformedPickleError(path, "storage views (torch < 0.4 files) are not supported")
        pending.setdefault(key, dtype)
        return _LazyStorage(key)

    obj = restricted_load(stream, source=path, allowed=allowed, persistent_load=persistent_load,
                          encoding="utf-8", budget=budget)
    keys = read()
    if not isinstance(keys, list):
        raise MalformedPickleError(path, "no storage key list after the object")
    storages = _legacy_storages(blob, stream.tell(), keys, pending, little, path, budget)
    return _flatten(_resolve(obj, storages, PickleReader(stream, 0, source=path, allowed={}, budget=budget,
                                                         persistent_load=None, encoding="utf-8")), path)


def _legacy_storages(blob: bytes, offset: int, keys: list, pending: dict[str, Any], little: bool, path: str,
                     budget: DecodeBudget) -> dict[str, np.ndarray]:
    """The storages after a legacy file's pickles: per key an int64 element count, then its bytes."""
    storages: dict[str, np.ndarray] = {}
    for key in keys:
        key = str(key)
        if key not in pending:
            raise MalformedPickleError(path, "listed but never used", f"storage {key}")
        dtype = pending[key]
        if offset + 8 > len(blob):
            raise MalformedPickleError(path, "cut off (truncated file)", f"storage {key}")
        (numel,) = struct.unpack("<q" if little else ">q", blob[offset:offset + 8])
        end = offset + 8 + numel * _itemsize(dtype)
        if numel < 0 or end > len(blob):
            raise MalformedPickleError(path, f"{numel} elements, cut off (truncated file)", f"storage {key}")
        budget.charge(_decoded_nbytes(end - offset - 8, dtype), f"storage {key}")
        storages[key] = _decode(memoryview(blob)[offset + 8:end], dtype, not little, path, key)
        offset = end
    missing = sorted(set(pending) - set(storages))
    if missing:
        raise MalformedPickleError(path, "has no data (truncated file)", f"storage {missing[0]}")
    return storages


class _LazyStorage:
    """A legacy-format storage whose bytes come after the pickle."""

    def __init__(self, key: str) -> None:
        self.key = key


class _LazyTensor(Decoded):
    """A legacy-format tensor: its ``_rebuild_tensor`` arguments, rebuilt once the storages are read."""

    def __init__(self, args: tuple) -> None:
        self.args = args


def _lazy_rebuild(reader: PickleReader, *args: Any) -> _LazyTensor:
    if not args or not isinstance(args[0], _LazyStorage):
        raise MalformedPickleError(reader.source, "a tensor without a storage", reader.entry())
    return _LazyTensor(args)


def _resolve(obj: Any, storages: dict[str, np.ndarray], reader: PickleReader) -> Any:
    """``obj`` with its lazy tensors rebuilt (``obj`` was checked: at most the budget's depth)."""
    if isinstance(obj, _LazyTensor):
        storage, *rest = obj.args
        return _rebuild_tensor(reader, storages[storage.key], *rest)
    if isinstance(obj, dict):
        resolved = type(obj)()
        for key, value in obj.items():
            resolved[key] = _resolve(value, storages, reader)
        return resolved
    return obj


def read_torch_state(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """``{name: ndarray}`` of a torch state dict file (zip or legacy format; see the module doc).

    A nested ``{"state_dict": {...}}`` (or ``"model"``, or arcface_torch's training checkpoint
    ``"state_dict_backbone"``: its classifier and optimizer states are not read) is unwrapped. ``UnsafePickleError`` for a
    pickle naming anything outside the allow-list; ``MalformedPickleError`` naming ``path`` for a
    truncated or corrupt file or one that is not a state dict.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such file")
    try:
        if zipfile.is_zipfile(path):
            return _read_zip(path)
        if is_torch_legacy(path):
            return _read_legacy(path)
    except UnsafePickleError as error:
        raise UnsafePickleError(path, f"{error.problem}. A torch.save(model) of a whole module is such a file: "
                                "save model.state_dict() instead", error.entry) from None
    with open(path, "rb") as f:
        head = f.read(4)
    if head[:2] == b"PK":
        raise MalformedPickleError(path, "a damaged zip (truncated or corrupt torch file)")
    raise MalformedPickleError(path, "neither torch's zip format nor its legacy pickle format")

