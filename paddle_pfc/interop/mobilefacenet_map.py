"""MobileFaceNet (arcface_torch ``mobilefacenet.py`` ``get_mbf``, PLSC ``plsc/models/mobilefacenet.py``)
source tensors: which paddle_pfc backbone they are. Both name their tensors as paddle_pfc's
:class:`MobileFaceNet` (``layers.{i}...``, ``conv_sep``, ``features.layers.{0,2,3}``: the GDC's
depthwise LinearBlock, its bias-free Linear and its BatchNorm1d, whose scale trains), all BatchNorm
epsilon 1e-5. Only ``get_mbf``'s defaults (blocks 1/4/6/2, scale 2) have a paddle_pfc backbone;
``get_mbf_large`` (2/8/12/4, scale 4) is refused by name.
"""
from __future__ import annotations

import re

import numpy as np

from paddle_pfc.interop.common import ConversionError

__all__ = ["FIRST_CONV", "GRAPH_HEADS", "detect", "detect_graph"]

FIRST_CONV = "layers.0.layers.0.weight"
_GDC = "features.layers.0.layers.0.weight"
_LINEAR = "features.layers.2.weight"


def _residual_blocks(tensors, index: int) -> int:
    pattern = re.compile(rf"^layers\.{index}\.layers\.(\d+)\.layers\.0\.layers\.0\.weight$")
    found = [int(m.group(1)) for m in map(pattern.match, tensors) if m]
    return max(found) + 1 if found else 0


def detect(tensors: dict[str, np.ndarray], convention: str, path: str) -> tuple[str, int, tuple[int, int]] | None:
    """``(backbone, embedding_size, (H, W))`` of MobileFaceNet tensors, ``None`` when they are not a
    MobileFaceNet; ``ConversionError`` for a variant paddle_pfc has no backbone for."""
    if not {"conv_sep.layers.0.weight", FIRST_CONV, _GDC, _LINEAR} <= set(tensors):
        return None
    stem = np.shape(tensors[FIRST_CONV])
    scale = stem[0] // 64 if len(stem) == 4 else 0
    first = 1 if "layers.1.layers.0.weight" in tensors else _residual_blocks(tensors, 1)
    blocks = (first, _residual_blocks(tensors, 3), _residual_blocks(tensors, 5), _residual_blocks(tensors, 7))
    if blocks != (1, 4, 6, 2) or scale != 2:
        name = " (arcface_torch mbf_large)" if blocks == (2, 8, 12, 4) and scale == 4 else ""
        raise ConversionError(f"{path}: a MobileFaceNet with blocks {list(blocks)} and scale {scale}{name}; "
                              "paddle_pfc's mobilefacenet is get_mbf's blocks [1, 4, 6, 2], scale 2")
    linear = np.shape(tensors[_LINEAR])
    embedding = linear[0] if convention == "torch" else linear[1]
    gdc = np.shape(tensors[_GDC])
    return "mobilefacenet", int(embedding), (16 * int(gdc[2]), 16 * int(gdc[3]))


#: The MobileFaceNet heads an ONNX graph may end in (each a backbone of the table).
GRAPH_HEADS = ("GDC (arcface_torch get_mbf: Conv7x7 512→512 depthwise + Gemm 512→E + BN1d), "
               "fc (insightface w600k_mbf: Conv1x1 512→64 + PReLU + Flatten + Gemm 64·h·w→E + BN1d)")


def _fc_head_size(path: str, cells: int, dims: list) -> tuple[int, int]:
    """The input size of a graph with the fc head over ``cells`` positions."""
    if len(dims) == 4 and dims[2] > 0 and dims[3] > 0:
        return int(dims[2]), int(dims[3])
    side = int(round(np.sqrt(cells)))
    if side * side != cells:
        raise ConversionError(f"{path}: an fc head over {cells} positions and an input of unknown size; "
                              "give --input-size H W")
    return 16 * side, 16 * side


def detect_graph(layers) -> tuple[str, tuple[int, int]] | None:
    """``(backbone, (H, W))`` of an ONNX graph's layers (:class:`~paddle_pfc.interop.onnx_reader.GraphLayers`)
    with grouped convolutions: the MobileFaceNet whose head the graph has (after ``conv_sep``, its
    last 1x1 conv to 512 + PReLU); None for a graph without grouped convolutions, ConversionError
    naming the head when it is none of ours."""
    from paddle_pfc.interop.onnx_reader import describe_layers

    if not any(item["group"] > 1 for item in layers.convs):
        return None
    items = layers.items
    last = max((i for i, item in enumerate(items) if item["op"] == "residual"), default=-1)
    tail = items[last + 1:]
    sep = next((i for i, item in enumerate(tail) if item["op"] == "prelu"), None)
    head = tail[sep + 1:] if sep is not None else tail
    core = [item for item in head if item["op"] != "bn"]
    shapes = [np.shape(item["w"]) if "w" in item else () for item in core]
    ops = [item["op"] for item in core]
    if ops == ["conv", "linear"] and head[-1]["op"] == "bn" and core[0]["group"] == shapes[0][0] > 1 \
            and shapes[0][1] == 1 and shapes[1][0] == shapes[0][0]:
        return "mobilefacenet", (16 * int(shapes[0][2]), 16 * int(shapes[0][3]))
    if ops == ["conv", "prelu", "linear"] and head[-1]["op"] == "bn" and core[0]["group"] == 1 \
            and tuple(shapes[0][1:]) == (512, 1, 1) and shapes[0][0] == 64 and shapes[2][0] % 64 == 0:
        return "mobilefacenet_fc", _fc_head_size(layers.path, shapes[2][0] // 64, layers.dims)
    raise ConversionError(f"{layers.path}: a MobileFaceNet whose head is {describe_layers(head)}; supported heads: "
                          f"{GRAPH_HEADS}")
