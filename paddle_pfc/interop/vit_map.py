"""Vision Transformer (arcface_torch ``backbones/vit.py`` ``VisionTransformer``, ``norm_layer="ln"``) source
tensors: which paddle_pfc ViT they are. arcface_torch names its tensors as paddle_pfc's
:class:`~paddle_pfc.backbones.vit.VisionTransformer` does (``patch_embed.proj``, ``pos_embed``,
``blocks.{i}.{norm1,attn.qkv,attn.proj,norm2,mlp.fc1,mlp.fc2}``, ``norm``, ``feature.{0,1,2,3}``,
``mask_token``); the name conventions (Linear transposed, BatchNorm statistics) are converted by
:mod:`paddle_pfc.interop.mapping`, and the input scale is folded into ``patch_embed.proj.weight``
(its bias unchanged: the factor multiplies the input only).

Read from the tensors: the width ``D`` (``pos_embed`` [1, L, D]), the depth (the ``blocks`` present),
the token grid (``L`` a square of side ``s``: an input of ``9 s`` to ``9 s + 8`` pixels a side, the
multiple of 16 among them), the patch size (9 only), the MLP width (4 D only) and the embedding size
(``feature.2.weight``). The number of heads is in no tensor (``qkv`` is ``[3 D, D]`` for any head
count): arcface_torch's ``get_model`` builds every ViT with 8 heads, as paddle_pfc's builders do, and
a source trained with another count converts to a model that computes something else.
"""
from __future__ import annotations

import math
import re

import numpy as np

from paddle_pfc.backbones.vit import PATCH_SIZE, VIT_SIZES
from paddle_pfc.interop.common import ConversionError

__all__ = ["FIRST_CONV", "GRAPH_NOTE", "detect", "graph_tensors", "parameter_kind"]

FIRST_CONV = "patch_embed.proj.weight"
_BLOCK = re.compile(r"^blocks\.(\d+)\.attn\.qkv\.weight$")
_REQUIRED = {FIRST_CONV, "pos_embed", "mask_token", "feature.0.weight", "feature.2.weight", "norm.weight"}


def _input_side(path: str, side: int) -> int:
    """The input size a side of ``side`` patches comes from (the multiple of 16 in [9 s, 9 s + 8])."""
    sizes = [n for n in range(PATCH_SIZE * side, PATCH_SIZE * side + PATCH_SIZE) if n % 16 == 0]
    if not sizes:
        raise ConversionError(f"{path}: {side} x {side} patches of 9 pixels come from no input size that is "
                              "a multiple of 16")
    return sizes[0]


def _named_size(path: str, dim: int, depth: int) -> str:
    for name, (width, blocks, *_rest) in VIT_SIZES.items():
        if (width, blocks) == (dim, depth):
            return name
    known = ", ".join(f"{k} (D {v[0]}, depth {v[1]})" for k, v in VIT_SIZES.items())
    raise ConversionError(f"{path}: a ViT of width {dim} and depth {depth}; paddle_pfc has {known}")


def detect(tensors: dict[str, np.ndarray], convention: str, path: str) -> tuple[str, int, tuple[int, int]] | None:
    """``(backbone, embedding_size, (H, W))`` of arcface_torch ViT tensors, ``None`` when they are not
    a ViT; ``ConversionError`` for a ViT paddle_pfc has no backbone for."""
    if not (_REQUIRED <= set(tensors) and any(_BLOCK.match(k) for k in tensors)):
        return None
    pos = np.shape(tensors["pos_embed"])
    if len(pos) != 3:
        raise ConversionError(f"{path}: pos_embed has shape {list(pos)}, expected [1, tokens, width]")
    tokens, dim = int(pos[1]), int(pos[2])
    side = int(round(math.sqrt(tokens)))
    if side * side != tokens:
        raise ConversionError(f"{path}: {tokens} patch tokens are not a square grid")
    kernel = tuple(np.shape(tensors[FIRST_CONV])[2:])
    if kernel != (PATCH_SIZE, PATCH_SIZE):
        raise ConversionError(f"{path}: patches of {list(kernel)} pixels; paddle_pfc's ViTs take 9 x 9")
    depth = 1 + max(int(m.group(1)) for m in map(_BLOCK.match, tensors) if m)
    fc1 = np.shape(tensors.get("blocks.0.mlp.fc1.weight", ()))
    hidden = fc1[0] if convention == "torch" else fc1[-1]
    if len(fc1) != 2 or int(hidden) != 4 * dim:
        raise ConversionError(f"{path}: MLP weight blocks.0.mlp.fc1.weight {list(fc1)}; paddle_pfc's ViTs "
                              f"have an MLP of 4 x {dim}")
    name = _named_size(path, dim, depth)
    linear = np.shape(tensors["feature.2.weight"])
    embedding = linear[0] if convention == "torch" else linear[1]
    size = _input_side(path, side)
    return name, int(embedding), (size, size)


#: What the converter says of every ViT graph it reads.
GRAPH_NOTE = ("arcface_torch ViT graph read by position (LayerNorms decomposed by the exporter read from their "
              "Mul / Add); mask_token is in no eval graph (only training with mask_ratio > 0 reads it): set to zeros")


def graph_tensors(model, path: str) -> dict[str, np.ndarray] | None:
    """The tensors of an ONNX ViT graph under arcface_torch's names, Paddle's layout (Linear ``[in, out]``,
    BatchNorm ``_mean`` / ``_variance``), for :func:`detect` and the checked mapping; None when the graph
    is no ViT (:mod:`paddle_pfc.interop.vit_graph`)."""
    from paddle_pfc.interop.vit_graph import graph_tensors as read

    return read(model, path)


def parameter_kind(layer, name: str) -> str | None:
    """``tensor`` (read as stored) for a LayerNorm's parameters and the model's own (``pos_embed``,
    ``mask_token``); None for the layers :mod:`paddle_pfc.interop.mapping` knows."""
    from paddle import nn

    from paddle_pfc.backbones.vit import VisionTransformer

    return "tensor" if isinstance(layer, (nn.LayerNorm, VisionTransformer)) else None
