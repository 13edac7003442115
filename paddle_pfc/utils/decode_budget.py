"""How much a pickle-based file may decode to, checked before anything that size is allocated.

A file can declare far more than it holds: an array referenced a thousand times through the memo,
a tensor whose strides repeat one element a billion times, a storage that a zip member inflates.
Every reader of such a file charges what it is about to allocate, and what it returns (each
reference counted again), to a :class:`DecodeBudget`; going over raises
:class:`~paddle_pfc.utils.errors.BudgetError` naming the file, the entry and both numbers.

Limits: decoded bytes at most ``FILE_FACTOR x file size + floor`` with a floor of
:data:`DEFAULT_FLOOR` bytes, raised by the environment variable :data:`LIMIT_ENV` (bytes, or with a
``K``/``M``/``G`` suffix); items returned (each reference counted) at most
``max(FILE_FACTOR x file size, MIN_ITEMS)``; nesting depth at most :data:`MAX_DEPTH`.
"""
from __future__ import annotations

import os
import re

from paddle_pfc.utils.errors import BudgetError, UsageError

LIMIT_ENV = "PADDLE_PFC_DECODE_LIMIT"
FILE_FACTOR = 4
DEFAULT_FLOOR = 64 << 20
MIN_ITEMS = 1 << 16
MAX_DEPTH = 100

_HINT = f"a crafted or corrupt file; a real file this large can be read with {LIMIT_ENV}=<bytes, e.g. 16G>"


def decode_floor() -> int:
    """The floor of the decoded-bytes limit: :data:`LIMIT_ENV` when set, else :data:`DEFAULT_FLOOR`."""
    text = os.environ.get(LIMIT_ENV, "").strip()
    if not text:
        return DEFAULT_FLOOR
    match = re.fullmatch(r"(\d+)\s*([kKmMgGtT]?)[bB]?", text)
    if not match:
        raise UsageError(f"{LIMIT_ENV}={text!r}: expected a number of bytes, e.g. 16G or 4096M")
    scale = {"": 0, "k": 10, "m": 20, "g": 30, "t": 40}[match.group(2).lower()]
    return int(match.group(1)) << scale


class DecodeBudget:
    """What one read of ``source`` (``file_size`` bytes on disk) may allocate and return.

    ``charge(nbytes, entry)`` before allocating ``nbytes``; ``charge_returned`` for what the
    result holds. Both totals are checked against ``limit`` separately (a reader allocates, then
    hands the same bytes back once).
    """

    def __init__(self, source: str, file_size: int, limit: int | None = None) -> None:
        self.source = source
        self.file_size = int(file_size)
        self.limit = FILE_FACTOR * self.file_size + decode_floor() if limit is None else int(limit)
        self.item_limit = max(FILE_FACTOR * self.file_size, MIN_ITEMS)
        self.max_depth = MAX_DEPTH
        self.allocated = 0
        self.returned = 0

    def charge(self, nbytes: int, entry: str | None, what: str = "decoded bytes") -> None:
        """Count ``nbytes`` about to be allocated; :class:`BudgetError` when the total goes over."""
        self.allocated += int(nbytes)
        if self.allocated > self.limit:
            raise BudgetError(self.source, f"{what} (so far, this file is {self.file_size:,} bytes)",
                              self.allocated, self.limit, entry=entry, hint=_HINT)

    def charge_returned(self, nbytes: int, entry: str | None) -> None:
        self.returned += int(nbytes)
        if self.returned > self.limit:
            raise BudgetError(self.source, f"bytes returned, each reference counted (this file is "
                              f"{self.file_size:,} bytes)", self.returned, self.limit, entry=entry,
                              hint=_HINT)

    def check_depth(self, depth: int, entry: str | None) -> None:
        if depth > self.max_depth:
            raise BudgetError(self.source, "nesting depth", depth, self.max_depth, entry=entry,
                              hint="no format read here nests that deep")

    def check_items(self, items: int, entry: str | None) -> None:
        if items > self.item_limit:
            raise BudgetError(self.source, "items returned, each reference counted", items, self.item_limit,
                              entry=entry, hint="a file that references its objects over and over")


def file_budget(path: str | os.PathLike) -> DecodeBudget:
    """The :class:`DecodeBudget` of the file at ``path`` (its size on disk)."""
    return DecodeBudget(os.fspath(path), os.path.getsize(path))
