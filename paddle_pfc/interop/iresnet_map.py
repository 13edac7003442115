"""IResNet (arcface_torch ``iresnet.py``, PLSC ``plsc/models/iresnet.py``) source tensors: which
paddle_pfc backbone they are. Both name their tensors as paddle_pfc's :class:`IResNet` does
(``conv1``, ``bn1``, ``prelu``, ``layer{1-4}.{j}.{bn1,conv1,bn2,prelu,conv2,bn3,downsample.{0,1}}``,
``bn2``, ``fc``, ``features``), all BatchNorm epsilon 1e-5; the name conventions are converted by
:mod:`paddle_pfc.interop.mapping`. arcface_torch's ``features`` BatchNorm1d has its scale frozen at 1,
as paddle_pfc's; PLSC's is reset to 1 at every training step; the stored value is converted as is.
"""
from __future__ import annotations

import math
import re

import numpy as np

from paddle_pfc.backbones.iresnet import IRESNET_LAYERS
from paddle_pfc.interop.common import ConversionError

__all__ = ["FIRST_CONV", "detect", "detect_graph", "reconcile_input_size"]

FIRST_CONV = "conv1.weight"
_BLOCK = re.compile(r"^layer([1-4])\.(\d+)\.conv1\.weight$")


def detect(tensors: dict[str, np.ndarray], convention: str, path: str) -> tuple[str, int, tuple[int, int]] | None:
    """``(backbone, embedding_size, (H, W))`` of IResNet tensors, ``None`` when they are not an
    IResNet; ``ConversionError`` for an IResNet paddle_pfc has no backbone for."""
    if not ({"conv1.weight", "fc.weight", "features.bias"} <= set(tensors)
            and any(_BLOCK.match(k) for k in tensors)):
        return None
    blocks = [0, 0, 0, 0]
    for key in tensors:
        match = _BLOCK.match(key)
        if match:
            stage, index = int(match.group(1)) - 1, int(match.group(2))
            blocks[stage] = max(blocks[stage], index + 1)
    depths = tuple(blocks)
    names = {v: k for k, v in IRESNET_LAYERS.items()}
    if depths not in names:
        raise ConversionError(f"{path}: an IResNet with stage depths {list(depths)}; paddle_pfc has "
                              + ", ".join(f"{k} {list(v)}" for k, v in IRESNET_LAYERS.items()))
    fc = np.shape(tensors["fc.weight"])
    if len(fc) != 2:
        raise ConversionError(f"{path}: fc.weight has shape {list(fc)}, expected a matrix")
    embedding, fc_in = (fc[0], fc[1]) if convention == "torch" else (fc[1], fc[0])
    cells = fc_in // 512
    side = int(round(math.sqrt(cells)))
    if fc_in % 512 or side * side != cells:
        raise ConversionError(f"{path}: fc.weight {list(fc)} does not follow a 512-channel square map "
                              "(non-square inputs: give --input-size)")
    return names[depths], int(embedding), (16 * side, 16 * side)


def reconcile_input_size(found: tuple[int, int], given: tuple[int, int]) -> tuple[int, int]:
    """The input size of tensors whose square size ``found`` was read from ``fc`` when ``given`` is
    stated: IResNet's ``fc`` records only ``H/16 * W/16``, so a given size of the same area is it."""
    return tuple(given) if given[0] * given[1] == found[0] * found[1] else tuple(found)


def detect_graph(layers) -> tuple[str, tuple[int, int]] | None:
    """``(backbone, (H, W))`` of an ONNX graph's layers (:class:`~paddle_pfc.interop.onnx_reader.GraphLayers`)
    without grouped convolutions, by its number of residual blocks; None for a graph with grouped ones."""
    if any(item["group"] > 1 for item in layers.convs):
        return None
    by_blocks = {sum(v): k for k, v in IRESNET_LAYERS.items()}
    if layers.residuals not in by_blocks:
        raise ConversionError(f"{layers.path}: a graph of {layers.residuals} residual blocks and {len(layers.convs)} "
                              "convolutions, none of paddle_pfc's IResNets ("
                              + ", ".join(f"{k}: {sum(v)}" for k, v in IRESNET_LAYERS.items()) + " blocks)")
    side = int(round(np.sqrt(np.shape(layers.linears[-1]["w"])[0] / 512)))
    size = (16 * side, 16 * side)
    dims = layers.dims
    if len(dims) == 4 and dims[2] > 0 and dims[3] > 0:
        size = reconcile_input_size(size, (dims[2], dims[3]))
    return by_blocks[layers.residuals], size
