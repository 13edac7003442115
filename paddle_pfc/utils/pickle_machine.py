"""A pickle reader that builds data, never objects the file chooses.

The opcodes are decoded one by one (:mod:`pickletools`' argument readers behind a reader that
refuses to read past the end of the input) and run on a small stack machine of our own. It makes
plain values (``None``, bools, numbers, ``str``, ``bytes``, ``bytearray``) and containers (list,
tuple, dict, ``OrderedDict``, set, frozenset). A global the file names becomes a
:class:`PickleGlobal` looked up in the format's allow-list; ``REDUCE`` calls the handler that list
maps it to (a function of ours, given the reader and the arguments); ``BUILD`` only completes a
:class:`Pending` value one of those handlers returned (a numpy dtype or array), or drops the
attribute dict of an ``OrderedDict``. Instances (``INST``/``OBJ``/``NEWOBJ``), extension codes and
out-of-band buffers are refused. Nothing is shared between reads.

Sizes are charged to a :class:`~paddle_pfc.utils.decode_budget.DecodeBudget`: the input is never read
past its end, handlers charge what they allocate, and the result is walked once (each reference
counted) for its bytes, item count and depth; containers' depth is also checked as they are built.
"""
from __future__ import annotations

import codecs
import collections
import pickletools
from collections.abc import Callable, Mapping
from typing import Any

from paddle_pfc.utils.decode_budget import DecodeBudget
from paddle_pfc.utils.pickle_result import Decoded, MalformedPickleError, UnsafePickleError, check_result

__all__ = ["PickleReader", "PickleGlobal", "Pending", "Decoded", "UnsafePickleError", "MalformedPickleError",
           "LARGE_BYTES"]

#: ``(module, name)`` -> a handler ``f(reader, *args)`` (``REDUCE``), or a marker value (not callable).
Allowed = Mapping[tuple[str, str], Any]


class PickleGlobal:
    """A global the file named (``module.name``) and what the allow-list maps it to."""

    __slots__ = ("module", "name", "target")

    def __init__(self, module: str, name: str, target: Any) -> None:
        self.module, self.name, self.target = module, name, target

    def __repr__(self) -> str:
        return f"{self.module}.{self.name}"


class Pending:
    """A value a handler builds in two steps (``REDUCE`` then ``BUILD``)."""

    def build(self, reader: PickleReader, state: Any) -> None:
        raise reader.malformed(f"BUILD on a {type(self).__name__}")

    def value(self, reader: PickleReader) -> Any:
        raise NotImplementedError


_MARK = object()
_OPS = {op.code.encode("latin-1")[0]: op for op in pickletools.opcodes}
_HASHABLE = (type(None), bool, int, float, str, bytes, tuple, frozenset)


class _Input:
    """``read``/``readline`` of a binary file that never reads past ``left`` bytes."""

    def __init__(self, file: Any, left: int, pos: int) -> None:
        self.file, self.left, self.pos = file, left, pos

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            n = self.left
        if n > self.left:
            raise EOFError(f"an opcode declares {n:,} bytes, only {self.left:,} are left (truncated file)")
        data = self.file.read(n)
        self.left -= len(data)
        self.pos += len(data)
        return data

    def read_large(self, n: int) -> bytes | bytearray:
        """``n`` bytes; from :data:`LARGE_BYTES` on, read into a ``bytearray`` (arrays then use it
        without a copy)."""
        if n < LARGE_BYTES or n > self.left:
            return self.read(n)
        data = bytearray(n)
        if self.file.readinto(data) != n:
            raise EOFError(f"an opcode declares {n:,} bytes and the file ends before them (truncated file)")
        self.left -= n
        self.pos += n
        return data

    def readline(self) -> bytes:
        data = self.file.readline(self.left)
        self.left -= len(data)
        self.pos += len(data)
        return data


def _py2_string(f: _Input) -> bytes:
    return codecs.escape_decode(pickletools.read_stringnl(f, decode=False))[0]


#: From this size on, a ``bytes`` opcode's data is read into a ``bytearray`` (see :meth:`_Input.read_large`).
LARGE_BYTES = 1 << 16

_LENGTH_READERS = {"BINBYTES": pickletools.read_uint4, "BINBYTES8": pickletools.read_uint8,
                   "BYTEARRAY8": pickletools.read_uint8}
_BYTES_READERS = {name: (lambda length: lambda f: f.read_large(length(f)))(length)
                  for name, length in _LENGTH_READERS.items()}

_PY2_READERS = {"STRING": _py2_string,
                "BINSTRING": lambda f: pickletools.read_string4(f).encode("latin-1"),
                "SHORT_BINSTRING": lambda f: pickletools.read_string1(f).encode("latin-1")}


class PickleReader:
    """One read of one pickle from ``file`` (``size`` bytes left in it); see the module doc."""

    def __init__(self, file: Any, size: int, *, source: str, allowed: Allowed, budget: DecodeBudget,
                 persistent_load: Callable[[Any], Any] | None, encoding: str) -> None:
        self.source, self.allowed, self.budget = source, allowed, budget
        self.persistent_load, self.encoding = persistent_load, encoding
        self._in = _Input(file, size, file.tell())
        self.pos = self._in.pos
        self._stack: list[Any] = []
        self._marks: list[list[Any]] = []
        self._memo: dict[int, Any] = {}
        self._depth: dict[int, int] = {}
        self._alive: list[Any] = []  # every container made, so that no id in _depth is reused

    def entry(self) -> str:
        return f"byte {self.pos}"

    def malformed(self, problem: str) -> MalformedPickleError:
        return MalformedPickleError(self.source, problem, self.entry())

    def load(self) -> Any:
        while True:
            self.pos = self._in.pos
            code = self._in.read(1) if self._in.left else b""
            if not code:
                raise self.malformed("the pickle ends before its STOP opcode (truncated file)")
            op = _OPS.get(code[0])
            if op is None:
                raise self.malformed(f"unknown opcode {code!r}")
            reader = (_PY2_READERS.get(op.name) or _BYTES_READERS.get(op.name)
                      or (op.arg.reader if op.arg is not None else None))
            arg = reader(self._in) if reader is not None else None
            if op.name == "STOP":
                return self._finish(self._pop())
            run = _DISPATCH.get(op.name)
            if run is None:
                raise self.malformed(f"opcode {op.name}, which no format read here uses (a pickle of objects, "
                                     "extension codes or out-of-band buffers)")
            run(self, arg)

    # -- values ---------------------------------------------------------------------------------
    def resolve(self, value: Any) -> Any:
        """``value`` as it may be stored: a :class:`Pending` by its finished value."""
        return value.value(self) if isinstance(value, Pending) else value

    def _push(self, value: Any) -> None:
        self._stack.append(value)

    def _pop(self) -> Any:
        if not self._stack:
            raise self.malformed("stack underflow")
        return self._stack.pop()

    def _pop_mark(self) -> list[Any]:
        if not self._marks:
            raise self.malformed("no MARK to pop to")
        items = [self.resolve(item) for item in self._stack]
        self._stack = self._marks.pop()
        return items

    def track(self, value: Any, items: Any = ()) -> Any:
        """Record the nesting depth of container ``value`` holding ``items`` (checked); ``value``."""
        depth = 1 + max((self._depth.get(id(item), 0) for item in items), default=0)
        self.budget.check_depth(depth, self.entry())
        self._depth[id(value)] = depth
        self._alive.append(value)
        return value

    def _grow(self, container: Any, items: Any) -> None:
        deepest = max((self._depth.get(id(item), 0) for item in items), default=0)
        if deepest + 1 > self._depth.get(id(container), 1):
            self.track(container, items)

    def _finish(self, value: Any) -> Any:
        value = self.resolve(value)
        check_result(value, self.budget)
        return value


def _hashable(reader: PickleReader, key: Any) -> Any:
    if not isinstance(key, _HASHABLE):
        raise reader.malformed(f"a {type(key).__name__} used as a dict key or set item")
    return key


def _set_items(reader: PickleReader, items: list[Any]) -> None:
    target = reader.resolve(reader._pop())
    if not isinstance(target, dict) or len(items) % 2:
        raise reader.malformed(f"SETITEM(S) on a {type(target).__name__}")
    reader._grow(target, items)
    for i in range(0, len(items), 2):
        target[_hashable(reader, items[i])] = items[i + 1]
    reader._push(target)


def _append(reader: PickleReader, items: list[Any]) -> None:
    target = reader.resolve(reader._pop())
    if not isinstance(target, list):
        raise reader.malformed(f"APPEND(S) on a {type(target).__name__}")
    reader._grow(target, items)
    target.extend(items)
    reader._push(target)


def _add_items(reader: PickleReader, items: list[Any]) -> None:
    target = reader._pop()
    if not isinstance(target, set):
        raise reader.malformed(f"ADDITEMS on a {type(target).__name__}")
    reader._grow(target, items)
    target.update(_hashable(reader, item) for item in items)
    reader._push(target)


def _tuple(reader: PickleReader, items: list[Any]) -> None:
    value = tuple(items)
    reader._push(reader.track(value, value) if value else value)


def _dict(reader: PickleReader, items: list[Any]) -> None:
    reader._push(reader.track({}))
    _set_items(reader, items)


def _global(reader: PickleReader, module: Any, name: Any) -> None:
    if not isinstance(module, str) or not isinstance(name, str):
        raise reader.malformed("STACK_GLOBAL of non-strings")
    target = reader.allowed.get((module, name))
    if target is None:
        raise UnsafePickleError(
            reader.source, f"refused to load: the pickle asks for {module}.{name}, which this format never "
                           "holds (a file that constructs other objects can run code; nothing of it was run)")
    reader._push(PickleGlobal(module, name, target))


def _reduce(reader: PickleReader, _: Any) -> None:
    args = reader.resolve(reader._pop())
    func = reader._pop()
    if not isinstance(func, PickleGlobal) or not callable(func.target) or not isinstance(args, tuple):
        raise reader.malformed(f"REDUCE of {func!r} with {type(args).__name__} arguments (only a named "
                               "function of the format, with a tuple)")
    reader._push(func.target(reader, *args))


def _build(reader: PickleReader, _: Any) -> None:
    state = reader.resolve(reader._pop())
    target = reader._stack[-1] if reader._stack else None
    if isinstance(target, Pending):
        target.build(reader, state)
    elif not (type(target) is collections.OrderedDict and isinstance(state, dict)):  # OrderedDict's attributes
        raise reader.malformed(f"BUILD on a {type(target).__name__} (only numpy arrays and dtypes are built)")


def _persistent(reader: PickleReader, _: Any) -> None:
    pid = reader.resolve(reader._pop())
    if reader.persistent_load is None:
        raise reader.malformed("a persistent id in a format that has none")
    reader._push(reader.persistent_load(pid))


def _memo_get(reader: PickleReader, index: int) -> None:
    if index not in reader._memo:
        raise reader.malformed(f"memo {index} read before it is written")
    reader._push(reader._memo[index])


def _memo_put(reader: PickleReader, index: int) -> None:
    if not reader._stack:
        raise reader.malformed("PUT with an empty stack")
    reader._memo[index] = reader._stack[-1]


def _py2_str(reader: PickleReader, data: bytes) -> None:
    reader._push(data if reader.encoding == "bytes" else data.decode(reader.encoding))


def _mark(reader: PickleReader, _: Any) -> None:
    reader._marks.append(reader._stack)
    reader._stack = []


def _push_arg(reader: PickleReader, arg: Any) -> None:
    reader._push(arg)


def _new_container(factory: Callable[[], Any]) -> Callable[[PickleReader, Any], None]:
    return lambda reader, _: reader._push(reader.track(factory()))


def _pop_n_values(reader: PickleReader, n: int) -> list[Any]:
    return [reader.resolve(reader._pop()) for _ in range(n)][::-1]


def _pop_n(n: int) -> Callable[[PickleReader, Any], None]:
    return lambda reader, _: _tuple(reader, _pop_n_values(reader, n))


def _list(reader: PickleReader, items: list[Any]) -> None:
    reader._push(reader.track(items, items))


def _frozenset(reader: PickleReader, items: list[Any]) -> None:
    value = frozenset(_hashable(reader, item) for item in items)
    reader._push(reader.track(value, items))


_DISPATCH: dict[str, Callable[[PickleReader, Any], None]] = {
    **{name: _push_arg for name in ("INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "FLOAT",
                                    "BINFLOAT", "UNICODE", "SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8",
                                    "BINBYTES", "SHORT_BINBYTES", "BINBYTES8")},
    **{name: _py2_str for name in _PY2_READERS},
    "BYTEARRAY8": lambda reader, arg: reader._push(arg if isinstance(arg, bytearray) else bytearray(arg)),
    "NONE": lambda reader, _: reader._push(None),
    "NEWTRUE": lambda reader, _: reader._push(True),
    "NEWFALSE": lambda reader, _: reader._push(False),
    "EMPTY_LIST": _new_container(list), "EMPTY_DICT": _new_container(dict), "EMPTY_SET": _new_container(set),
    "EMPTY_TUPLE": lambda reader, _: reader._push(()),
    "APPEND": lambda reader, _: _append(reader, [reader.resolve(reader._pop())]),
    "APPENDS": lambda reader, _: _append(reader, reader._pop_mark()),
    "LIST": lambda reader, _: _list(reader, reader._pop_mark()),
    "SETITEM": lambda reader, _: _set_items(reader, _pop_n_values(reader, 2)),
    "SETITEMS": lambda reader, _: _set_items(reader, reader._pop_mark()),
    "DICT": lambda reader, _: _dict(reader, reader._pop_mark()),
    "ADDITEMS": lambda reader, _: _add_items(reader, reader._pop_mark()),
    "FROZENSET": lambda reader, _: _frozenset(reader, reader._pop_mark()),
    "TUPLE": lambda reader, _: _tuple(reader, reader._pop_mark()),
    "TUPLE1": _pop_n(1), "TUPLE2": _pop_n(2), "TUPLE3": _pop_n(3),
    "POP": lambda reader, _: reader._pop() if reader._stack else reader._pop_mark(),
    "DUP": lambda reader, _: reader._push(reader._stack[-1] if reader._stack else reader._pop()),
    "MARK": _mark,
    "POP_MARK": lambda reader, _: reader._pop_mark(),
    "GET": _memo_get, "BINGET": _memo_get, "LONG_BINGET": _memo_get,
    "PUT": _memo_put, "BINPUT": _memo_put, "LONG_BINPUT": _memo_put,
    "MEMOIZE": lambda reader, _: _memo_put(reader, len(reader._memo)),
    "GLOBAL": lambda reader, arg: _global(reader, *arg.split(" ", 1)),
    "STACK_GLOBAL": lambda reader, _: _global(reader, *reversed([reader._pop(), reader._pop()])),
    "REDUCE": _reduce,
    "BUILD": _build,
    "BINPERSID": _persistent,
    "PROTO": lambda reader, arg: None,
    "FRAME": lambda reader, arg: None,
}
