"""The building blocks of the config schema (:mod:`paddle_pfc.engine.config.schema`): a value rule
(:class:`Check` and its makers), a schema field (:func:`setting`), the read-only section base
(:class:`Section`) and a key as the validator sees it (:class:`Field`)."""
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field
from typing import Any

import yaml

from paddle_pfc.backbones.table import Options

__all__ = ["Check", "Field", "Section", "ge", "gt", "section", "setting", "within"]


@dataclass(frozen=True)
class Check:
    """A value rule: ``ok(v)`` says whether ``v`` passes; ``text`` completes "must be ..." in the
    error (``"must be >= 1, got 0"``) and is shown in the configuration reference."""

    text: str
    ok: Callable[[Any], bool]

    def __call__(self, value: Any) -> str | None:
        """The problem with ``value``, or None when it passes."""
        return None if self.ok(value) else f"must be {self.text}, got {value!r}"


def ge(lo: float) -> Check:
    return Check(f">= {lo}", lambda v: v >= lo)


def gt(lo: float) -> Check:
    return Check(f"> {lo}", lambda v: v > lo)


def within(lo: float, hi: float, bounds: str) -> Check:
    """``lo .. hi`` with ``bounds`` one of ``"[)"``, ``"(]"``, ``"()"`` (closed / open ends)."""
    lo_ok = (lambda v: v >= lo) if bounds[0] == "[" else (lambda v: v > lo)
    hi_ok = (lambda v: v <= hi) if bounds[1] == "]" else (lambda v: v < hi)
    return Check(f"in {bounds[0]}{lo}, {hi}{bounds[1]}", lambda v: lo_ok(v) and hi_ok(v))


def setting(default: Any, doc: str, check: Check | None = None,
            choices: tuple | Callable[[], tuple] | None = None) -> Any:
    """A schema field: ``default`` (``MISSING`` = required), ``doc``, optional ``check`` / ``choices``."""
    return field(default=default, metadata={"doc": doc, "check": check, "choices": choices})


class Section(Mapping):
    """Base of the section dataclasses: read-only attribute and Mapping access to the fields."""

    _prefix = ""  # dotted prefix of the keys, for error messages (set for the sections below)

    def __getattr__(self, name: str) -> Any:  # only reached for names that are not fields
        if name.startswith("_"):
            raise AttributeError(name)
        raise AttributeError(f"config has no key {self._prefix + name!r}")

    def __getitem__(self, key: str) -> Any:
        if key not in self.__dataclass_fields__:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self):
        return iter(self.__dataclass_fields__)

    def __len__(self) -> int:
        return len(self.__dataclass_fields__)

    def to_dict(self) -> dict:
        """Deep, mutable copy as plain dicts/lists."""
        return {k: _thaw(v) for k, v in self.items()}

    def to_yaml(self) -> str:
        """YAML text (key order preserved) that ``load_config`` reads back identically."""
        return yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=False)


def _thaw(v: Any) -> Any:
    if isinstance(v, (Section, Options)):
        return v.to_dict() if isinstance(v, Section) else dict(v)
    if isinstance(v, tuple):
        return [_thaw(x) for x in v]
    return v


section = dataclass(frozen=True, eq=False, kw_only=True)  # eq: Mapping's (content) equality


@dataclass(frozen=True)
class Field:
    """One config key as the validator sees it: ``kind`` is ``int | float | bool | str | int_list |
    float_list | val_sets | options``; ``default`` is ``MISSING`` for a required key."""

    kind: str
    default: Any
    doc: str
    nullable: bool = False
    choices: tuple | Callable[[], tuple] | None = None
    check: Check | None = None

    @property
    def required(self) -> bool:
        """True when the key has no default and must be given."""
        return self.default is MISSING

    def allowed(self) -> tuple | None:
        """The allowed values, or None for any value of the kind."""
        return self.choices() if callable(self.choices) else self.choices

    def default_value(self) -> Any:
        """The default as the validator fills it in (a fresh list for list kinds; None if required)."""
        if self.required:
            return None
        return list(self.default) if isinstance(self.default, tuple) else self.default
