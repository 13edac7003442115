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
from typing import Mapping

import numpy as np

NAMES_KEY = "__names__"
_PLAIN_KEY = re.compile(r"(?!__)[A-Za-z0-9_.@\-]+")


class StateFileError(ValueError):
    """An ``.npz`` state that cannot be read or written (names the file and the entry)."""


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


def load_state(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """``{name: ndarray}`` of the ``.npz`` at ``path`` (never unpickles anything).

    Raises :class:`StateFileError` naming ``path`` for a file that is not a readable ``.npz``
    (truncated, another format, an object array, a broken ``__names__`` table).
    """
    source = os.fspath(path)
    try:
        npz = np.load(source, allow_pickle=False)
        if not isinstance(npz, np.lib.npyio.NpzFile):
            raise StateFileError(f"{source}: a single .npy array, not an .npz of named arrays")
        with npz:
            loaded = {key: npz[key] for key in npz.files}
    except StateFileError:
        raise
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zipfile.LargeZipFile) as error:
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
