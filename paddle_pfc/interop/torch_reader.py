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
``torch.*Storage`` types (each a dtype marker here); storages come back as numpy arrays through
``persistent_load``, tensors as numpy arrays with their offset and strides applied. Storage dtypes:
float16, bfloat16 (widened to float32), float32, float64, int64, int32, int16, int8, uint8, bool.
Anything else the pickle names (a pickled ``nn.Module``, a payload) is refused with
``UnsafePickleError`` before it runs.
"""
from __future__ import annotations

import io
import os
import struct
import zipfile
from typing import Any

import numpy as np

from paddle_pfc.utils.safe_pickle import CONTAINER_GLOBALS, MalformedPickleError, UnsafePickleError, restricted_load

__all__ = ["read_torch_state", "is_torch_zip", "is_torch_legacy", "LEGACY_MAGIC"]

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_BFLOAT16 = "bfloat16"


class _Storage:
    """The ``torch.XStorage`` a pickle names: only a dtype (never instantiated from the pickle)."""

    def __init__(self, name: str, dtype: Any) -> None:
        self.name, self.dtype = name, dtype

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise MalformedPickleError(f"torch.{self.name} constructed directly (not a state dict storage)")


_STORAGE_DTYPES = {
    "HalfStorage": np.float16, "BFloat16Storage": _BFLOAT16, "FloatStorage": np.float32,
    "DoubleStorage": np.float64, "LongStorage": np.int64, "IntStorage": np.int32,
    "ShortStorage": np.int16, "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_,
    "UntypedStorage": np.uint8,
}
_STORAGES = {name: _Storage(name, dtype) for name, dtype in _STORAGE_DTYPES.items()}


def _itemsize(dtype: Any) -> int:
    return 2 if dtype == _BFLOAT16 else np.dtype(dtype).itemsize


def _decode(raw: bytes | memoryview, dtype: Any, big_endian: bool, source: str, key: str) -> np.ndarray:
    size = _itemsize(dtype)
    if len(raw) % size:
        raise MalformedPickleError(f"{source}: storage {key} holds {len(raw)} bytes, not a whole number "
                                   f"of {size}-byte elements")
    if dtype == _BFLOAT16:
        bits = np.frombuffer(raw, dtype=">u2" if big_endian else "<u2").astype(np.uint32) << 16
        return bits.view(np.float32)
    dt = np.dtype(dtype)
    if dt.itemsize > 1:
        dt = dt.newbyteorder(">" if big_endian else "<")
    return np.frombuffer(raw, dtype=dt).astype(np.dtype(dtype).newbyteorder("="), copy=True)


class _Tensor:
    """A rebuilt tensor (its numpy array), told apart from other values of the state dict."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray) -> None:
        self.array = array


def _rebuild_tensor(source: str):
    def rebuild(storage: Any, offset: Any, size: Any, stride: Any, *rest: Any) -> _Tensor:
        if not isinstance(storage, np.ndarray):
            raise MalformedPickleError(f"{source}: a tensor without a storage ({type(storage).__name__})")
        try:
            offset, size, stride = int(offset), tuple(int(s) for s in size), tuple(int(s) for s in stride)
        except (TypeError, ValueError) as error:
            raise MalformedPickleError(f"{source}: bad tensor geometry ({error})") from error
        if len(size) != len(stride) or offset < 0 or any(s < 0 for s in size) or any(s < 0 for s in stride):
            raise MalformedPickleError(f"{source}: bad tensor geometry size={size} stride={stride} "
                                       f"offset={offset}")
        if 0 in size:
            return _Tensor(np.zeros(size, storage.dtype))
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= storage.size:
            raise MalformedPickleError(f"{source}: a tensor of size {list(size)} reaches element {last} of a "
                                       f"storage of {storage.size} (truncated or corrupt file)")
        view = np.lib.stride_tricks.as_strided(storage[offset:], shape=size,
                                               strides=tuple(s * storage.itemsize for s in stride))
        return _Tensor(np.array(view))
    return rebuild


def _rebuild_parameter(data: Any, requires_grad: Any = None, backward_hooks: Any = None, *rest: Any) -> Any:
    if not isinstance(data, _Tensor):
        raise MalformedPickleError(f"a parameter of {type(data).__name__}, not a tensor")
    return data


def _allowed(source: str) -> dict:
    allowed = dict(CONTAINER_GLOBALS)
    allowed[("torch._utils", "_rebuild_tensor_v2")] = _rebuild_tensor(source)
    allowed[("torch._utils", "_rebuild_tensor")] = _rebuild_tensor(source)
    allowed[("torch._utils", "_rebuild_parameter")] = _rebuild_parameter
    allowed[("torch._utils", "_rebuild_parameter_with_state")] = _rebuild_parameter
    for name, storage in _STORAGES.items():
        allowed[("torch", name)] = storage
    allowed[("torch.storage", "UntypedStorage")] = _STORAGES["UntypedStorage"]
    return allowed


def _storage_type(pid_type: Any, source: str) -> Any:
    if isinstance(pid_type, _Storage):
        return pid_type.dtype
    raise MalformedPickleError(f"{source}: storage of unknown type {pid_type!r}")


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
            raise MalformedPickleError(f"{source}: a dict without tensors (keys: {list(obj)[:8]})")
        return out
    raise MalformedPickleError(f"{source}: not a state dict (a pickled {type(obj).__name__}); save "
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


def _read_zip(path: str) -> dict[str, np.ndarray]:
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise MalformedPickleError(f"{path}: not a readable torch zip file ({error}); truncated or "
                                   "corrupt?") from error
    with zf:
        names = zf.namelist()
        pickles = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
        if len(pickles) != 1:
            raise MalformedPickleError(f"{path}: a zip without exactly one data.pkl (found {pickles[:4]}); "
                                       "not a torch.save file")
        root = pickles[0][: -len("data.pkl")]
        big_endian = False
        if root + "byteorder" in names:
            big_endian = zf.read(root + "byteorder").strip() == b"big"

        def persistent_load(pid: Any) -> np.ndarray:
            if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
                raise MalformedPickleError(f"{path}: unknown persistent id {pid!r}")
            dtype = _storage_type(pid[1], path)
            key = str(pid[2])
            try:
                raw = zf.read(f"{root}data/{key}")
            except KeyError:
                raise MalformedPickleError(f"{path}: storage {key} is missing from the archive") from None
            except (zipfile.BadZipFile, OSError, EOFError, zlib_error()) as error:
                raise MalformedPickleError(f"{path}: storage {key} cannot be read ({error}); truncated or "
                                           "corrupt file") from error
            array = _decode(raw, dtype, big_endian, path, key)
            numel = int(pid[4])
            if array.size < numel and dtype != np.uint8:
                raise MalformedPickleError(f"{path}: storage {key} has {array.size} elements, its header says "
                                           f"{numel} (truncated or corrupt file)")
            return array

        try:
            data = zf.read(pickles[0])
        except (zipfile.BadZipFile, OSError, EOFError, zlib_error()) as error:
            raise MalformedPickleError(f"{path}: data.pkl cannot be read ({error}); truncated or corrupt "
                                       "file") from error
        obj = restricted_load(data, source=path, allowed=_allowed(path), persistent_load=persistent_load,
                              encoding="utf-8")
    return _flatten(obj, path)


def zlib_error() -> type:
    import zlib

    return zlib.error


def _read_legacy(path: str) -> dict[str, np.ndarray]:
    with open(path, "rb") as f:
        blob = f.read()
    stream = io.BytesIO(blob)
    allowed = _allowed(path)
    magic = restricted_load(stream, source=path, allowed=allowed)
    if magic != LEGACY_MAGIC:
        raise MalformedPickleError(f"{path}: not a torch file (bad magic number)")
    protocol = restricted_load(stream, source=path, allowed=allowed)
    if protocol != 1001:
        raise MalformedPickleError(f"{path}: torch legacy protocol {protocol!r}, expected 1001")
    info = restricted_load(stream, source=path, allowed=allowed)
    little = not isinstance(info, dict) or info.get("little_endian", True)
    pending: dict[str, Any] = {}  # storage key -> dtype

    def persistent_load(pid: Any) -> Any:
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
            raise MalformedPickleError(f"{path}: unknown persistent id {pid!r}")
        dtype = _storage_type(pid[1], path)
        key = str(pid[2])
        view = pid[5] if len(pid) > 5 else None
        pending.setdefault(key, dtype)
        if view is not None:
            raise MalformedPickleError(f"{path}: storage views (torch < 0.4 files) are not supported")
        return _LazyStorage(key)

    lazy_allowed = dict(allowed)
    lazy_allowed[("torch._utils", "_rebuild_tensor_v2")] = _lazy_rebuild
    lazy_allowed[("torch._utils", "_rebuild_tensor")] = _lazy_rebuild
    lazy_allowed[("torch._utils", "_rebuild_parameter")] = _lazy_parameter
    lazy_allowed[("torch._utils", "_rebuild_parameter_with_state")] = _lazy_parameter
    obj = restricted_load(stream, source=path, allowed=lazy_allowed, persistent_load=persistent_load,
                          encoding="utf-8")
    keys = restricted_load(stream, source=path, allowed=allowed)
    if not isinstance(keys, list):
        raise MalformedPickleError(f"{path}: no storage key list after the object")
    offset = stream.tell()
    storages: dict[str, np.ndarray] = {}
    for key in keys:
        key = str(key)
        if key not in pending:
            raise MalformedPickleError(f"{path}: storage {key} listed but never used")
        dtype = pending[key]
        if offset + 8 > len(blob):
            raise MalformedPickleError(f"{path}: storage {key} is cut off (truncated file)")
        (numel,) = struct.unpack("<q" if little else ">q", blob[offset:offset + 8])
        end = offset + 8 + numel * _itemsize(dtype)
        if numel < 0 or end > len(blob):
            raise MalformedPickleError(f"{path}: storage {key} of {numel} elements is cut off (truncated file)")
        storages[key] = _decode(memoryview(blob)[offset + 8:end], dtype, not little, path, key)
        offset = end
    missing = sorted(set(pending) - set(storages))
    if missing:
        raise MalformedPickleError(f"{path}: storage {missing[0]} has no data (truncated file)")
    rebuild = _rebuild_tensor(path)
    return _flatten(_resolve(obj, storages, rebuild), path)


class _LazyStorage:
    """A legacy-format storage whose bytes come after the pickle."""

    def __init__(self, key: str) -> None:
        self.key = key


class _LazyTensor:
    def __init__(self, args: tuple) -> None:
        self.args = args


def _lazy_rebuild(*args: Any) -> _LazyTensor:
    if not args or not isinstance(args[0], _LazyStorage):
        raise MalformedPickleError("a tensor without a storage")
    return _LazyTensor(args)


def _lazy_parameter(data: Any, *rest: Any) -> Any:
    if not isinstance(data, _LazyTensor):
        raise MalformedPickleError(f"a parameter of {type(data).__name__}, not a tensor")
    return data


def _resolve(obj: Any, storages: dict[str, np.ndarray], rebuild: Any) -> Any:
    if isinstance(obj, _LazyTensor):
        storage, *rest = obj.args
        return rebuild(storages[storage.key], *rest)
    if isinstance(obj, dict):
        resolved = type(obj)()
        for key, value in obj.items():
            resolved[key] = _resolve(value, storages, rebuild)
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
        raise UnsafePickleError(f"{error}. A torch.save(model) of a whole module is such a file: save "
                                "model.state_dict() instead") from None
    with open(path, "rb") as f:
        head = f.read(4)
    if head[:2] == b"PK":
        raise MalformedPickleError(f"{path}: a damaged zip (truncated or corrupt torch file)")
    raise MalformedPickleError(f"{path}: neither torch's zip format nor its legacy pickle format")

