"""A package's public names imported on first use (PEP 562), so that importing the package loads
none of the modules behind them."""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

__all__ = ["lazy_getattr"]


def lazy_getattr(package: str, where: Mapping[str, str], namespace: dict) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package``: a name of ``where`` is taken from the module
    ``where[name]`` (a full module path) on first use and kept in ``namespace`` (the package's
    ``globals()``); any other name raises ``AttributeError``."""
    def __getattr__(name: str) -> object:
        if name in where:
            value = getattr(importlib.import_module(where[name]), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    return __getattr__
