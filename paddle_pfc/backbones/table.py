"""The backbone table: one row per architecture, the one place that names them. Imports no Paddle.

A row (:class:`Backbone`) holds the architecture's name and aliases, its builder (``"module:function"``,
imported on the first build, so reading the table loads no Paddle), the keywords its builder always
takes (``fixed``: a variant of a shared builder), the extra build keywords a model description may set
(``options``, each with its default), its defaults (embedding size, input size), its input-size rule
(each side a multiple of ``input_multiple``, at least one multiple) and its interop module (the module
of :mod:`paddle_pfc.interop` that recognizes and maps its tensors from other frameworks, or None).

A builder is called as ``builder(embedding_size=int, input_size=(H, W), dropout=float, **fixed,
**options)`` and returns a ``paddle.nn.Layer`` mapping ``float32 [N, 3, H, W]`` to ``float32
[N, embedding_size]``. An interop module holds ``FIRST_CONV`` and ``detect(tensors, convention, path)``
(see :mod:`paddle_pfc.interop.architectures`).
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Backbone", "Options", "ROWS", "OPTION_TYPES", "find_row", "row_of", "input_rules_text",
           "fits_an_input_rule"]

#: The types an option's value may have (its default's type; an int is accepted for a float).
OPTION_TYPES = (bool, int, float, str)


class Options(Mapping):
    """A read-only mapping (a row's options and fixed keywords, ``ModelSpec.options``, a config's
    ``model.options``); it pickles and deep-copies."""

    def __init__(self, items: Mapping[str, Any] | None = None) -> None:
        self._items = dict(items or {})

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._items.items())))

    def __repr__(self) -> str:
        return f"Options({self._items!r})"


@dataclass(frozen=True)
class Backbone:
    """One architecture of the table (see the module doc)."""

    name: str
    builder: str
    aliases: tuple[str, ...] = ()
    fixed: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    embedding_size: int = 512
    input_size: int = 112
    input_multiple: int = 16
    interop: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "fixed", Options(self.fixed))
        object.__setattr__(self, "options", Options(self.options))
        for key, default in self.options.items():
            if not isinstance(default, OPTION_TYPES) or key in self.fixed:
                raise TypeError(f"backbone {self.name}: option {key!r} needs a bool, int, float or str default "
                                "and a name that is not a fixed keyword")

    def builder_function(self) -> Callable[..., Any]:
        """The builder, imported (this loads Paddle)."""
        module, _, function = self.builder.partition(":")
        return getattr(importlib.import_module(module), function)

    def build(self, embedding_size: int, input_size: tuple[int, int], dropout: float,
              options: Mapping[str, Any]):
        """The layer, built with ``options`` (checked by :class:`~paddle_pfc.backbones.spec.ModelSpec`)
        over the row's defaults."""
        return self.builder_function()(embedding_size=embedding_size, input_size=input_size, dropout=dropout,
                                       **self.fixed, **{**self.options, **options})

    @property
    def input_rule(self) -> str:
        """The input-size rule in words (completes "must be ...")."""
        return f"a multiple of {self.input_multiple} and >= {self.input_multiple}"


_IRESNET = "paddle_pfc.interop.iresnet_map"
_MOBILEFACENET = "paddle_pfc.interop.mobilefacenet_map"
_VIT = "paddle_pfc.interop.vit_map"
#: A ViT's training-only regularisers: stochastic depth and random patch masking (arcface_torch's defaults).
_VIT_OPTIONS = {"drop_path_rate": 0.1, "mask_ratio": 0.1}

#: Every architecture, in the order names are listed and tensors are recognized.
ROWS: tuple[Backbone, ...] = (
    Backbone("iresnet18", "paddle_pfc.backbones.iresnet:iresnet18", ("r18",), interop=_IRESNET),
    Backbone("iresnet34", "paddle_pfc.backbones.iresnet:iresnet34", ("r34",), interop=_IRESNET),
    Backbone("iresnet50", "paddle_pfc.backbones.iresnet:iresnet50", ("r50",), interop=_IRESNET),
    Backbone("iresnet100", "paddle_pfc.backbones.iresnet:iresnet100", ("r100",), interop=_IRESNET),
    Backbone("iresnet200", "paddle_pfc.backbones.iresnet:iresnet200", ("r200",), interop=_IRESNET),
    Backbone("mobilefacenet", "paddle_pfc.backbones.mobilefacenet:mobilefacenet", ("mbf",),
             fixed={"head": "gdc"}, interop=_MOBILEFACENET),
    Backbone("mobilefacenet_fc", "paddle_pfc.backbones.mobilefacenet:mobilefacenet", ("w600k_mbf",),
             fixed={"head": "fc"}, interop=_MOBILEFACENET),
    Backbone("vit_t", "paddle_pfc.backbones.vit:vit_t", options=_VIT_OPTIONS, interop=_VIT),
    Backbone("vit_s", "paddle_pfc.backbones.vit:vit_s", options=_VIT_OPTIONS, interop=_VIT),
    Backbone("vit_b", "paddle_pfc.backbones.vit:vit_b", options=_VIT_OPTIONS, interop=_VIT),
    Backbone("vit_l", "paddle_pfc.backbones.vit:vit_l", ("vit_l_dp005_mask_005",),
             options={"drop_path_rate": 0.05, "mask_ratio": 0.1}, interop=_VIT),
)


def find_row(name: Any) -> Backbone | None:
    """The row of ``name`` (a name or an alias, any case), None when there is none."""
    if not isinstance(name, str):
        return None
    key = name.lower()
    return next((row for row in ROWS if key == row.name or key in row.aliases), None)


def row_of(name: Any) -> Backbone:
    """The row of ``name``; ``ValueError`` listing every valid name when there is none."""
    row = find_row(name)
    if row is None:
        valid = ", ".join([r.name for r in ROWS] + [a for r in ROWS for a in r.aliases])
        raise ValueError(f"unknown backbone name {name!r}; valid names: {valid}")
    return row


def input_rules_text() -> str:
    """The input-size rules of the table in words: the one rule when every row shares it."""
    rules = list(dict.fromkeys(row.input_rule for row in ROWS))
    return rules[0] if len(rules) == 1 else "its backbone's rule: " + "; ".join(
        f"{row.name} {row.input_rule}" for row in ROWS)


def fits_an_input_rule(side: int) -> bool:
    """Whether an input side passes the input-size rule of some row (the config's first check; the
    backbone's own rule is checked with the backbone)."""
    return any(side >= row.input_multiple and side % row.input_multiple == 0 for row in ROWS)
