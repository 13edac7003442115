"""Hypothesis strategies for pickles built opcode by opcode, and a way to draw a fixed list of examples
from a strategy (to be read in worker processes, not in the test process).

:func:`pickle_value` draws nested lists / tuples / dicts of integers of any size, byte strings whose
declared length may exceed what follows, text, memo ``PUT`` / ``GET`` (of slots that may not
exist) and references to one object from many places.
"""
from __future__ import annotations

import struct

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from helpers import crafted_pickles as cp
from helpers.fuzz.structured import PROTO4, long1


@st.composite
def _declared_bytes(draw) -> bytes:
    data = draw(st.binary(max_size=24))
    declared = draw(st.sampled_from((len(data), len(data), len(data) + 1, 2 ** 31, 2 ** 32 - 1, 2 ** 63)))
    if declared < 2 ** 32 and draw(st.booleans()):
        return b"B" + struct.pack("<I", declared) + data  # BINBYTES
    return b"\x8e" + struct.pack("<Q", declared % 2 ** 64) + data  # BINBYTES8


_INTS = st.one_of(st.integers(-(2 ** 31), 2 ** 31 - 1).map(cp.num),
                  st.integers(-(2 ** 600), 2 ** 600).map(long1),
                  st.sampled_from((2 ** 31, 2 ** 63 - 1, 2 ** 64, -1)).map(long1))
_LEAVES = st.one_of(_INTS, _declared_bytes(), st.text(max_size=12).map(cp.text),
                    st.sampled_from((cp.NONE, cp.TRUE, cp.FALSE)),
                    st.integers(0, 8).map(cp.get))


def _containers(children) -> st.SearchStrategy[bytes]:
    items = st.lists(children, max_size=6)
    lists = items.map(lambda xs: cp.EMPTY_LIST + cp.MARK + b"".join(xs) + cp.APPENDS)
    tuples = items.map(lambda xs: cp.MARK + b"".join(xs) + cp.TUPLE)
    dicts = st.lists(st.tuples(st.text(max_size=6).map(cp.text), children), max_size=4).map(
        lambda kv: cp.EMPTY_DICT + cp.MARK + b"".join(k + v for k, v in kv) + b"u")
    memoized = st.tuples(st.one_of(lists, tuples, dicts), st.integers(0, 8)).map(lambda t: t[0] + cp.put(t[1]))
    return st.one_of(lists, tuples, dicts, memoized)


pickle_value = st.recursive(_LEAVES, _containers, max_leaves=40)


@st.composite
def pickle_file(draw, wrap: str = "bare") -> bytes:
    """A whole pickle: protocol header, :data:`pickle_value` (as a ``.bin`` pair or a state dict
    when ``wrap`` says so), ``STOP``."""
    value = draw(pickle_value)
    proto = draw(st.sampled_from((cp.PROTO2, PROTO4)))
    if wrap == "bin":
        value = cp.tup(cp.EMPTY_LIST + cp.MARK + value + cp.APPENDS, draw(pickle_value))
    elif wrap == "state":
        value = cp.EMPTY_DICT + cp.MARK + cp.text("w") + value + b"u"
    return proto + value + cp.STOP


def examples(strategy: st.SearchStrategy, count: int, seed: int) -> list:
    """``count`` examples of ``strategy``, the same for the same ``seed``."""
    drawn: list = []

    @hypothesis_seed(seed)
    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(example) -> None:
        drawn.append(example)

    collect()
    return drawn[:count]
