"""``ModelSpec``: what a backbone is built from — its name, embedding size, input size, dropout and
the options of its row of the backbone table — checked once. Imports no Paddle.

A spec comes from a config's ``model`` section (:meth:`ModelSpec.from_config`) or from a model
description as checkpoints and ``export.json`` store it (:meth:`ModelSpec.from_description`: the keys
``backbone``, ``embedding_size``, ``input_size``, optional ``dropout`` and ``options``);
:meth:`ModelSpec.description` gives that description back. Bad values raise ``UsageError`` naming
the field; an unknown backbone raises ``ValueError`` listing the valid names.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from paddle_pfc.backbones.common import check_head_args, normalize_input_size
from paddle_pfc.backbones.table import OPTION_TYPES, Backbone, Options, row_of
from paddle_pfc.utils.errors import UsageError
from paddle_pfc.utils.numbers import is_int

__all__ = ["ModelSpec", "check_options", "DESCRIPTION_KEYS"]

#: The keys a model description must hold.
DESCRIPTION_KEYS = ("backbone", "embedding_size", "input_size")


def _option_problem(value: Any, default: Any) -> str | None:
    """Why ``value`` cannot replace an option whose default is ``default``, or None."""
    if isinstance(default, bool) or isinstance(value, bool):
        ok = isinstance(value, bool) and isinstance(default, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float))
    else:
        ok = isinstance(value, type(default)) and isinstance(value, OPTION_TYPES)
    return None if ok else f"expected {type(default).__name__}, got {type(value).__name__} ({value!r})"


def check_options(row: Backbone, options: Any, prefix: str = "options.") -> dict[str, Any]:
    """``options`` over ``row``'s defaults (ints given for float options become floats);
    ``UsageError`` naming ``{prefix}{key}`` for an option the row has not or a value of another type."""
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise UsageError(f"{prefix.rstrip('.')}: expected a mapping of {row.name}'s options, got "
                         f"{type(options).__name__}")
    out = dict(row.options)
    for key, value in options.items():
        if key not in row.options:
            valid = ", ".join(row.options) or "none"
            raise UsageError(f"{prefix}{key}: backbone {row.name} has no option {key!r} (its options: {valid})")
        problem = _option_problem(value, row.options[key])
        if problem:
            raise UsageError(f"{prefix}{key}: {problem}")
        out[key] = float(value) if isinstance(row.options[key], float) else value
    return out


@dataclass(frozen=True)
class ModelSpec:
    """A checked model definition (see the module doc). ``backbone`` is kept as given (a name or an
    alias); ``embedding_size`` / ``input_size`` default to the row's; ``input_size`` is ``(H, W)``;
    ``options`` holds every option of the backbone's row, its default where none was given."""

    backbone: str
    embedding_size: int | None = None
    input_size: Any = None
    dropout: float = 0.0
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        row = row_of(self.backbone)
        if self.embedding_size is None:
            object.__setattr__(self, "embedding_size", row.embedding_size)
        if self.input_size is None:
            object.__setattr__(self, "input_size", row.input_size)
        check_head_args(self.embedding_size, self.dropout)
        object.__setattr__(self, "embedding_size", int(self.embedding_size))
        object.__setattr__(self, "input_size", normalize_input_size(self.input_size, row.input_multiple))
        object.__setattr__(self, "dropout", float(self.dropout))
        object.__setattr__(self, "options", Options(check_options(row, self.options)))

    @property
    def row(self) -> Backbone:
        """The backbone's row of the table."""
        return row_of(self.backbone)

    @classmethod
    def from_config(cls, model: Mapping[str, Any]) -> ModelSpec:
        """The spec of a config's ``model`` section (``cfg.model``; ``options`` optional)."""
        return cls(model["backbone"], model["embedding_size"], model["input_size"], model["dropout"],
                   model.get("options") or {})

    @classmethod
    def from_description(cls, description: Mapping[str, Any]) -> ModelSpec:
        """The spec of a stored model description (a checkpoint's ``model`` section as
        ``model_from_checkpoint`` returns it, or ``export.json``); ``UsageError`` naming a missing (or null) key."""
        if not isinstance(description, Mapping):
            raise UsageError(f"a model description is a mapping, got {type(description).__name__}")
        missing = [k for k in DESCRIPTION_KEYS if description.get(k) is None]
        if missing:
            raise UsageError("the model description lacks " + ", ".join(missing))
        size = description["input_size"]
        dim = description["embedding_size"]
        return cls(description["backbone"], int(dim) if is_int(dim) else dim,
                   list(size) if isinstance(size, (list, tuple)) else size,
                   description.get("dropout") or 0.0, description.get("options") or {})

    def description(self) -> dict[str, Any]:
        """The stored form: ``backbone``, ``embedding_size``, ``input_size`` ``[H, W]``, ``dropout``, and
        ``options`` when the row has any."""
        out = {"backbone": self.backbone, "embedding_size": self.embedding_size,
               "input_size": list(self.input_size), "dropout": self.dropout}
        if self.options:
            out["options"] = dict(self.options)
        return out

    def build(self):
        """The backbone layer (loads Paddle); call ``.train()`` / ``.eval()`` before using it."""
        return self.row.build(self.embedding_size, self.input_size, self.dropout, self.options)
