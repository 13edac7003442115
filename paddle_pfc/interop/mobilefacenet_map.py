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

__all__ = ["FIRST_CONV", "detect"]

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
