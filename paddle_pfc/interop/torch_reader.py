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
import struct
import zipfile
import zlib
from typing import Any

import numpy as np

from paddle_pfc.interop.torch_tensors import (
    LazyStorage,
    LazyTensor,
    Tensor,
    decode_storage,
    decoded_nbytes,
    itemsize,
    lazy_rebuild,
    rebuild_tensor,
    storage_pid,
    torch_globals,
)
from paddle_pfc.utils.decode_budget import DecodeBudget, file_budget
from paddle_pfc.utils.pickle_machine import PickleReader
from paddle_pfc.utils.safe_pickle import MalformedPickleError, UnsafePickleError, restricted_load

__all__ = ["read_torch_state", "is_torch_zip", "is_torch_legacy", "LEGACY_MAGIC"]

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
#: What ``zipfile`` raises for a damaged archive: a bad header or CRC, a member name that is not
#: UTF-8 although flagged so, an unknown compression method, an encrypted member (RuntimeError).
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, zlib.error, UnicodeDecodeError,
               NotImplementedError, RuntimeError)


def _flatten(obj: Any, source: str) -> dict[str, np.ndarray]:
    """``{name: array}`` of a (possibly nested, e.g. ``{"state_dict": ...}``) state dict."""
    if isinstance(obj, dict):
        if not any(isinstance(v, Tensor) for v in obj.values()):
            # arcface_torch's training checkpoint (checkpoint_gpu_*.pt) keeps the backbone in
            # "state_dict_backbone", next to its PartialFC ("state_dict_softmax_fc") and optimizer
            for key in ("state_dict_backbone", "state_dict", "model", "backbone", "model_state_dict"):
                if isinstance(obj.get(key), dict):
                    return _flatten(obj[key], source)
        out = {}
        for key, value in obj.items():
            if isinstance(value, Tensor):
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
    except _ZIP_ERRORS:
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
        key, dtype, numel = storage_pid(pid, path)
        if key in loaded:
            return loaded[key]
        try:
            info = zf.getinfo(f"{root}data/{key}")
        except KeyError:
            raise MalformedPickleError(path, "missing from the archive", f"storage {key}") from None
        if info.file_size < numel * itemsize(dtype) and dtype != np.uint8:
            raise MalformedPickleError(path, f"has {info.file_size // itemsize(dtype)} elements, its header "
                                       f"says {numel} (truncated or corrupt file)", f"storage {key}")
        budget.charge(decoded_nbytes(info.file_size, dtype), f"storage {key}")
        try:
            raw = zf.read(info)
        except _ZIP_ERRORS as error:
            raise MalformedPickleError(path, f"cannot be read ({error}); truncated or corrupt file",
                                       f"storage {key}") from error
        loaded[key] = decode_storage(raw, dtype, big_endian, path, key)
        return loaded[key]
    return persistent_load


def _read_zip(path: str) -> dict[str, np.ndarray]:
    try:
        zf = zipfile.ZipFile(path)
    except _ZIP_ERRORS as error:
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
        try:
            if root + "byteorder" in names:
                with zf.open(root + "byteorder") as member:  # 16 bytes at most, however large it inflates
                    big_endian = member.read(16).strip() == b"big"
            budget.charge(zf.getinfo(pickles[0]).file_size, "data.pkl")
            data = zf.read(pickles[0])
        except _ZIP_ERRORS as error:
            raise MalformedPickleError(path, f"byteorder or data.pkl cannot be read ({type(error).__name__}: "
                                       f"{error}); truncated or corrupt file") from error
        obj = restricted_load(data, source=path, allowed=torch_globals(rebuild_tensor), budget=budget,
                              persistent_load=_zip_storages(zf, root, path, budget, big_endian),
                              encoding="utf-8")
    return _flatten(obj, path)


def _read_legacy(path: str) -> dict[str, np.ndarray]:
    budget = file_budget(path)
    with open(path, "rb") as f:
        blob = f.read()
    stream = io.BytesIO(blob)
    allowed = torch_globals(lazy_rebuild)

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
        key, dtype, _ = storage_pid(pid, path)
        if len(pid) > 5 and pid[5] is not None:
            raise MalformedPickleError(path, "storage views (torch < 0.4 files) are not supported")
        pending.setdefault(key, dtype)
        return LazyStorage(key)

    obj = restricted_load(stream, source=path, allowed=allowed, persistent_load=persistent_load,
                          encoding="utf-8", budget=budget)
    keys = read()
    if not isinstance(keys, list):
        raise MalformedPickleError(path, "no storage key list after the object")
    storages = _legacy_storages(blob, stream.tell(), keys, pending, little, path, budget)
    # the tensors are rebuilt by the pickle's handler, given a reader of nothing for the file's name and budget
    rebuilder = PickleReader(io.BytesIO(), 0, source=path, allowed={}, budget=budget, persistent_load=None,
                             encoding="utf-8")
    return _flatten(_resolve(obj, storages, rebuilder), path)


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
        end = offset + 8 + numel * itemsize(dtype)
        if numel < 0 or end > len(blob):
            raise MalformedPickleError(path, f"{numel} elements, cut off (truncated file)", f"storage {key}")
        budget.charge(decoded_nbytes(end - offset - 8, dtype), f"storage {key}")
        storages[key] = decode_storage(memoryview(blob)[offset + 8:end], dtype, not little, path, key)
        offset = end
    missing = sorted(set(pending) - set(storages))
    if missing:
        raise MalformedPickleError(path, "has no data (truncated file)", f"storage {missing[0]}")
    return storages


def _resolve(obj: Any, storages: dict[str, np.ndarray], reader: PickleReader) -> Any:
    """``obj`` with its lazy tensors rebuilt (``obj`` was checked: at most the budget's depth)."""
    if isinstance(obj, LazyTensor):
        storage, *rest = obj.args
        return rebuild_tensor(reader, storages[storage.key], *rest)
    if isinstance(obj, dict):
        resolved = type(obj)()
        for key, value in obj.items():
            resolved[key] = _resolve(value, storages, reader)
        return resolved
    return obj


def read_torch_state(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """``{name: ndarray}`` of a torch state dict file (zip or legacy format; see the module doc).

    A nested ``{"state_dict": {...}}`` (or ``"model"``, or arcface_torch's training checkpoint
    ``"state_dict_backbone"``: its classifier and optimizer states are not read) is unwrapped.
    ``UnsafePickleError`` for a
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

