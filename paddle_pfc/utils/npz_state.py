"""``{name: ndarray}`` states as ``.npz`` files: a format that holds data only, never code.

Each array is stored under its own name when the name is a plain key (letters, digits, ``_``,
``.``, ``@``, ``-``; not starting with ``__``), so ``np.load(path)`` shows the names; any other
name (``/``, spaces, non-ASCII, ...) is stored under ``__key<i>__`` and the file then holds a
``__names__`` table (a unicode array: ``__names__[i]`` is that array's real name). Files that
``np.savez(path, **state)`` wrote read back as they are. Object arrays are refused on writing and
never unpickled on reading (``allow_pickle=False``); bfloat16 values travel as their ``uint16``
bit patterns, as Paddle hands them to numpy.
"""
from __future__ import annotations

import io
import os
import re
import zipfile
from collections.abc import Collection, Mapping

import numpy as np

from paddle_pfc.utils.errors import BudgetError, PfcError

NAMES_KEY = "__names__"
_PLAIN_KEY = re.compile(r"(?!__)[A-Za-z0-9_.@\-]+")


#: An ``.npz`` may declare at most this many times its own size of array bytes (what
#: ``np.savez`` writes is stored, 1x; deflated float weights shrink little) ...
MAX_INFLATION = 16
#: ... or this many bytes, whichever is more (small files of zero-filled tensors).
MIN_BUDGET_BYTES = 64 << 20
MAX_HEADER_BYTES = 10_000
_ENCODED_KEY = re.compile(r"__key[0-9]+__")


class StateFileError(PfcError, ValueError):
    """An ``.npz`` state that cannot be read or written (names the file and the entry)."""


class StateBudgetError(StateFileError, BudgetError):
    """An ``.npz`` whose members declare more bytes than its budget (:func:`state_budget`)."""


def _encoded_key(index: int) -> str:
    return f"__key{index}__"


def state_bytes(state: Mapping[str, np.ndarray], source: str = "state") -> bytes:
    """The ``.npz`` bytes of ``state`` (uncompressed; see the module doc for the keys)."""
    arrays, odd_names = {}, {}
    for name, value in state.items():
        if not isinstance(name, str):
            raise StateFileError(f"{source}: entry {name!r} has a name that is not a string")
        value = np.asarray(value)
        if value.dtype.hasobject or value.dtype.kind == "V":
            raise StateFileError(f"{source}: entry {name!r} has dtype {value.dtype}, which an .npz without "
                                 "pickles cannot hold")
        if _PLAIN_KEY.fullmatch(name):
            arrays[name] = value
        else:
            odd_names[_encoded_key(len(odd_names))] = (name, value)
    if odd_names:
        arrays.update({key: value for key, (_, value) in odd_names.items()})
        arrays[NAMES_KEY] = np.array([name for name, _ in odd_names.values()], dtype=str)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def state_budget(file_size: int) -> int:
    """The most bytes the arrays of an ``.npz`` of ``file_size`` bytes may declare (see
    :func:`load_state`)."""
    return max(MIN_BUDGET_BYTES, MAX_INFLATION * file_size)


def _member_key(info: zipfile.ZipInfo, source: str, expected: Collection[str] | None) -> str:
    """The array key of zip member ``info``: a ``.npy`` of a plain, encoded or names-table key."""
    if not info.filename.endswith(".npy") or info.is_dir():
        raise StateFileError(f"{source}: member {info.filename!r} is not an array (NAME.npy)")
    key = info.filename[:-4]
    if expected is not None and not (_ENCODED_KEY.fullmatch(key) or key == NAMES_KEY) and key not in expected:
        raise StateFileError(f"{source}: unexpected entry {key!r} (not a tensor of this model)")
    return key


def _check_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, source: str) -> None:
    """The ``.npy`` header of ``info`` must describe exactly the bytes the member declares (a
    plain dtype, no objects), read from its first bytes only."""
    with zf.open(info) as f:
        version = np.lib.format.read_magic(f)
        if version not in ((1, 0), (2, 0)):
            raise StateFileError(f"{source}: member {info.filename!r} is an .npy of version {version}")
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
            np.lib.format.read_array_header_2_0
        shape, _, dtype = read_header(f, max_header_size=MAX_HEADER_BYTES)
        header = f.tell()
    if dtype.hasobject:
        raise StateFileError(f"{source}: member {info.filename!r} holds objects (dtype {dtype}), which are "
                             "never unpickled")
    data = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if header + data != info.file_size:
        raise StateFileError(f"{source}: member {info.filename!r} declares {info.file_size:,} bytes, its .npy "
                             f"header a {list(shape)} {dtype} array of {header + data:,} bytes")


def _read_members(source: str, expected: Collection[str] | None) -> dict[str, np.ndarray]:
    """``{key: array}`` of the ``.npz`` at ``source``, every declared size checked first."""
    with open(source, "rb") as raw:
        if raw.read(6) == b"\x93NUMPY":
            raise StateFileError(f"{source}: a single .npy array, not an .npz of named arrays")
        size = os.fstat(raw.fileno()).st_size
        raw.seek(0)
        with zipfile.ZipFile(raw) as zf:
            members = zf.infolist()
            keys = [_member_key(info, source, expected) for info in members]
            if len(set(keys)) != len(keys):
                twice = sorted({key for key in keys if keys.count(key) > 1})[0]
                raise StateFileError(f"{source}: member {twice + '.npy'!r} is stored twice")
            declared, limit = sum(info.file_size for info in members), state_budget(size)
            if declared > limit:
                raise StateBudgetError(source, "the uncompressed size its arrays declare", declared, limit,
                                  hint=f"at most {MAX_INFLATION} times the file's {size:,} bytes")
            for info in members:
                _check_member(zf, info, source)
            loaded = {}
            for key, info in zip(keys, members):
                with zf.open(info) as f:
                    loaded[key] = np.lib.format.read_array(f, allow_pickle=False)
            return loaded


def load_state(path: str | os.PathLike, expected: Collection[str] | None = None) -> dict[str, np.ndarray]:
    """``{name: ndarray}`` of the ``.npz`` at ``path`` (never unpickles anything).

    Before anything is decompressed: every member must be a ``NAME.npy`` this format writes (with
    ``expected``, a plain name must be one of them), the sizes the members declare may total at most
    :func:`state_budget` of the file's size (:class:`~paddle_pfc.utils.errors.BudgetError`), and
    each member's ``.npy`` header must describe exactly the bytes it declares. Raises
    :class:`StateFileError` naming ``path`` (and the member) for a file that is not a readable
    ``.npz`` (truncated, another format, an object array, a broken ``__names__`` table).
    """
    source = os.fspath(path)
    try:
        loaded = _read_members(source, expected)
    except StateFileError:
        raise
    except (OSError, ValueError, EOFError, KeyError, RuntimeError, NotImplementedError, zipfile.BadZipFile,
            zipfile.LargeZipFile) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise StateFileError(f"{source}: not a readable .npz state ({type(error).__name__}: {reason})") from error
    names = loaded.pop(NAMES_KEY, None)
    if names is None:
        return loaded
    if names.dtype.kind != "U" or names.ndim != 1:
        raise StateFileError(f"{source}: {NAMES_KEY} is a {names.dtype} array of shape {list(names.shape)}, "
                             "not a list of names")
    state = {key: value for key, value in loaded.items() if not key.startswith("__key")}
    for index, name in enumerate(names.tolist()):
        key = _encoded_key(index)
        if key not in loaded:
            raise StateFileError(f"{source}: {NAMES_KEY} names {name!r} but {key} is missing")
        if name in state:
            raise StateFileError(f"{source}: entry {name!r} is stored twice")
        state[name] = loaded[key]
    extra = sorted(set(loaded) - set(state) - {_encoded_key(i) for i in range(len(names))})
    if extra:
        raise StateFileError(f"{source}: entry {extra[0]!r} is not in {NAMES_KEY}")
    return state
