"""What a pickle read may return, checked once it is built: the errors of the pickle readers, and
the walk over the result that counts every reference against the read's budget."""
from __future__ import annotations

import collections
from typing import Any

import numpy as np

from paddle_pfc.utils.decode_budget import DecodeBudget
from paddle_pfc.utils.errors import InputDataError

_PLAIN = (type(None), bool, int, float)
_STRINGS = (str, bytes, bytearray)
_MAPPINGS = (dict, collections.OrderedDict)
_CONTAINERS = (list, tuple, set, frozenset, *_MAPPINGS)


class UnsafePickleError(InputDataError):
    """A pickle that names a global outside its format's allow-list (names the file and global)."""


class MalformedPickleError(InputDataError):
    """A file that is not a readable pickle of its format (truncated, corrupt, or another pickle)."""


class Decoded:
    """A value a format's handler returns that may stand in the result (``nbytes`` counted)."""

    nbytes = 0


def check_result(root: Any, budget: DecodeBudget) -> None:
    """Walk ``root`` once, each reference counted: only plain values, containers, numeric numpy
    arrays/scalars and :class:`Decoded`; bytes, items and depth within ``budget``."""
    todo: list[tuple[Any, int, Any]] = [(root, 0, None)]
    items = returned = 0
    while todo:
        value, depth, where = todo.pop()
        items += 1
        kind = type(value)
        if kind in _STRINGS:
            returned += len(value)
        elif kind in _CONTAINERS:
            if depth >= budget.max_depth:
                budget.check_depth(depth + 1, _where(where))
            leaves, leaf_bytes = _push_children(value, depth, where, todo)
            items += leaves
            returned += leaf_bytes
        else:
            returned += _leaf_bytes(value, where, budget)
        if items > budget.item_limit or returned > budget.limit:
            budget.check_items(items, _where(where))
            budget.charge_returned(returned, _where(where))
    budget.charge_returned(returned, None)


def _push_children(container: Any, depth: int, where: Any, todo: list) -> tuple[int, int]:
    """Push the keys and values of ``container`` onto ``todo``, except its plain and string values,
    which are counted here (no stack entry each): ``(items, bytes)`` of those."""
    items = returned = 0
    mapping = type(container) in _MAPPINGS
    for key, item in container.items() if mapping else enumerate(container):
        if mapping:
            todo.append((key, depth + 1, (where, "key")))
        if type(item) in _PLAIN:
            items += 1
        elif type(item) in _STRINGS:
            items += 1
            returned += len(item)
        else:
            todo.append((item, depth + 1, (where, key)))
    return items, returned


def _leaf_bytes(value: Any, where: Any, budget: DecodeBudget) -> int:
    """The bytes a leaf returns: an array's, a :class:`Decoded`'s, 0 for a plain value; any other
    value is a :class:`MalformedPickleError`."""
    if type(value) is np.ndarray or isinstance(value, (np.generic, Decoded)):
        if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind not in "biufc":
            raise MalformedPickleError(budget.source, f"an array of dtype {value.dtype}", _where(where))
        return value.nbytes
    if type(value) not in _PLAIN:
        raise MalformedPickleError(budget.source, f"a {value!r:.80} where data belongs (only containers, "
                                   "numbers, strings and arrays are read)", _where(where))
    return 0


def _where(where: Any) -> str:
    keys = []
    while where is not None:
        where, key = where
        keys.append(f"[{key!r:.40}]" if not isinstance(key, int) else f"[{key}]")
    return "entry " + ("".join(reversed(keys)) or "(top)")
