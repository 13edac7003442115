"""Who the two images of each pair of a ``.bin`` verification set show: the ``.people.json``
file ``paddle-pfc-pairs`` writes beside each set (``pairs.bin`` -> ``pairs.people.json``).

An insightface ``.bin`` holds images and same / different flags, not who is in them. The
people file adds that, so the error rates of a threshold get intervals over people
(:mod:`paddle_pfc.evaluation.people_bootstrap`) instead of over pairs assumed independent.
File (UTF-8 JSON, data only)::

    {"format": "paddle-pfc pair people", "version": 1,
     "bin_sha256": "<SHA-256 of the .bin's bytes>",
     "people": ["s1", "s11", "s20"],
     "pairs": [[0, 0], [0, 2], ...]}

``people``: the names of the people (distinct strings); ``pairs[k]``: the indices into ``people``
of the two images of pair ``k`` (equal for a genuine pair, different for an impostor pair, as
the ``.bin``'s ``issame[k]`` says). ``bin_sha256`` ties the file to the ``.bin`` it describes:
a people file whose ``.bin`` was rewritten is refused, not trusted.
"""
from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from paddle_pfc.utils.errors import BudgetError, InputDataError

__all__ = ["FORMAT", "VERSION", "SUFFIX", "MAX_FILE_BYTES", "PairPeople", "people_path", "write_pair_people",
           "read_pair_people"]

FORMAT, VERSION = "paddle-pfc pair people", 1
SUFFIX = ".people.json"
#: The largest people file read (a million pairs take about 20 MB).
MAX_FILE_BYTES = 256 << 20
_REWRITE = "delete it, or write the set and its people file again with paddle-pfc-pairs"


@dataclass(frozen=True)
class PairPeople:
    """``names``: the people of a set; ``pairs``: int64 ``[P, 2]``, pair ``k``'s two people as
    indices into ``names``."""

    names: tuple[str, ...]
    pairs: np.ndarray

    @property
    def count(self) -> int:
        """How many people the pairs show."""
        return len(self.names)


def people_path(bin_path: str | os.PathLike) -> str:
    """The people file of ``bin_path``: ``X.bin`` -> ``X.people.json`` (any other name: name + suffix)."""
    path = os.fspath(bin_path)
    stem = path[:-4] if path.endswith(".bin") else path
    return stem + SUFFIX


def write_pair_people(bin_path: str | os.PathLike, pair_names: Sequence[tuple[str, str]]) -> str:
    """Write the people file of the ``.bin`` at ``bin_path`` (already written): ``pair_names[k]``
    is the two people's names of pair ``k``. Returns its path."""
    from paddle_pfc.evaluation.threshold_record import file_sha256
    from paddle_pfc.utils.atomic import write_text_atomic

    names = sorted({name for pair in pair_names for name in pair})
    index = {name: i for i, name in enumerate(names)}
    payload = {"format": FORMAT, "version": VERSION, "bin_sha256": file_sha256(bin_path), "people": names,
               "pairs": [[index[a], index[b]] for a, b in pair_names]}
    path = people_path(bin_path)
    write_text_atomic(path, json.dumps(payload, separators=(",", ":")) + "\n")
    return path


def _load(path: str) -> dict:
    """The people file's JSON object (``InputDataError`` / ``BudgetError`` naming the file)."""
    size = os.path.getsize(path)
    if size > MAX_FILE_BYTES:
        raise BudgetError(path, "size of a people file", size, MAX_FILE_BYTES)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputDataError(path, f"not a readable JSON people file ({e}); {_REWRITE}") from e
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
        raise InputDataError(path, f"not a people file (\"format\": {FORMAT!r}, \"version\": {VERSION}); {_REWRITE}")
    return data


def _checked_pairs(path: str, data: dict, issame: np.ndarray) -> tuple[tuple[str, ...], np.ndarray]:
    """``(names, pairs [P, 2])`` of the file, checked against the set's ``issame``."""
    names = data.get("people")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise InputDataError(path, f"\"people\" must be a list of distinct names; {_REWRITE}")
    pairs = data.get("pairs")
    if not isinstance(pairs, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(type(i) is int and 0 <= i < len(names) for i in p)
            for p in pairs):
        raise InputDataError(path, f"\"pairs\" must be a list of [i, j] indices into \"people\"; {_REWRITE}")
    if len(pairs) != len(issame):
        raise InputDataError(path, f"{len(pairs):,} pairs for a set of {len(issame):,}; {_REWRITE}")
    table = np.asarray(pairs, np.int64).reshape(len(pairs), 2)
    wrong = np.flatnonzero((table[:, 0] == table[:, 1]) != issame)
    if wrong.size:
        k = int(wrong[0])
        said = "the same person" if table[k, 0] == table[k, 1] else "two people"
        raise InputDataError(path, f"pair {k} shows {said} but the set calls it "
                             f"{'genuine' if issame[k] else 'impostor'}; {_REWRITE}", entry=f"pair {k}")
    return tuple(names), table


def read_pair_people(bin_path: str | os.PathLike, issame: Sequence[bool]) -> PairPeople | None:
    """The people of the pairs of the ``.bin`` at ``bin_path`` (``issame``: its flags), or None
    when it has no people file. ``InputDataError`` naming the people file when it is malformed,
    belongs to another ``.bin`` (SHA-256) or contradicts ``issame``."""
    path = people_path(bin_path)
    if not os.path.isfile(path):
        return None
    data = _load(path)
    from paddle_pfc.evaluation.threshold_record import file_sha256

    if data.get("bin_sha256") != file_sha256(bin_path):
        raise InputDataError(path, f"describes another file than {os.fspath(bin_path)} (its \"bin_sha256\" "
                             f"differs); {_REWRITE}")
    names, table = _checked_pairs(path, data, np.asarray(issame, bool))
    return PairPeople(names, table)
