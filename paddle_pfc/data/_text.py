"""Integers in the data formats' text files (``label.txt``, ``.idx``)."""
from __future__ import annotations

import re

_INTEGER = re.compile(r"-?[0-9]+")


def ascii_int(text: str) -> int:
    """``int(text)`` for ASCII decimal digits with an optional minus sign only; ``ValueError``
    otherwise (Python's ``int`` also takes ``1_0``, ``+3`` and non-ASCII digits such as ``３``,
    which in a label file are typos, not labels)."""
    if not _INTEGER.fullmatch(text):
        raise ValueError(f"not an integer: {text!r}")
    return int(text)
