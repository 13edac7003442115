"""The architectures the converters know: the interop modules of the backbone table's rows
(:mod:`paddle_pfc.backbones.table`, ``Backbone.interop``), asked in the table's order.

An interop module holds:

* ``FIRST_CONV``: the state name of the convolution that reads the images (the input scale is
  folded into it);
* ``detect(tensors, convention, path)``: ``(backbone, embedding_size, (H, W))`` when a ``.pt`` /
  ``.pdparams`` state is one of its architectures, ``None`` when it is not, ``ConversionError`` for a
  variant paddle_pfc has no backbone for;
* optionally ``detect_graph(layers)`` (:class:`paddle_pfc.interop.onnx_reader.GraphLayers`):
  ``(backbone, (H, W))`` of an ONNX graph's weighted layers, ``None`` when they are not its own;
* optionally ``graph_tensors(model, path)``: the tensors of an ONNX ``model`` under the names ``detect``
  reads, Paddle's layout, when the graph is one of its architectures (``None`` when it is not), read
  by position; then ``GRAPH_NOTE``, what the conversion says of such a graph;
* optionally ``parameter_kind(layer, name)``: the kind (:func:`paddle_pfc.interop.mapping.target_layout`)
  of a parameter of a layer type other than Conv2D, Linear, PReLU and the batch norms, or ``None``.
"""
from __future__ import annotations

import importlib
from types import ModuleType

from paddle_pfc.backbones.table import ROWS, find_row
from paddle_pfc.interop.common import SourceTensors

__all__ = ["SUPPORTED", "interop_modules", "interop_module", "detect_tensors", "graph_source"]

#: The backbones the converters read, with their aliases (the table's rows that have an interop module).
SUPPORTED = (", ".join(row.name + (f" ({'/'.join(row.aliases)})" if row.aliases else "")
                       for row in ROWS if row.interop)
             + " of arcface_torch, insightface or PLSC")


def interop_modules() -> list[ModuleType]:
    """Every row's interop module, once each, in the table's order (imported)."""
    names = list(dict.fromkeys(row.interop for row in ROWS if row.interop))
    return [importlib.import_module(name) for name in names]


def interop_module(backbone: str) -> ModuleType | None:
    """The interop module of ``backbone``'s row (a name or an alias), None when it has none."""
    row = find_row(backbone)
    return importlib.import_module(row.interop) if row is not None and row.interop else None


def detect_tensors(source: SourceTensors) -> tuple[str, int, tuple[int, int], str] | None:
    """``(backbone, embedding_size, (H, W), first convolution)`` of a ``.pt`` / ``.pdparams`` state,
    from the first interop module that recognizes it; None when none does."""
    for module in interop_modules():
        found = module.detect(source.tensors, source.convention, source.path)
        if found is not None:
            name, dim, size = found
            return name, dim, size, module.FIRST_CONV
    return None


def graph_source(source: SourceTensors) -> tuple[SourceTensors, str] | None:
    """An ONNX source (``tensors["__graph__"]``) as named tensors (Paddle's convention) and the note of
    the interop module whose ``graph_tensors`` reads it; None when none does."""
    for module in interop_modules():
        read = getattr(module, "graph_tensors", None)
        tensors = read(source.tensors["__graph__"], source.path) if read is not None else None
        if tensors is not None:
            return SourceTensors(source.path, "onnx", "paddle", tensors), getattr(module, "GRAPH_NOTE", "")
    return None
