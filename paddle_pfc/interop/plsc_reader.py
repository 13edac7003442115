"""PLSC ``.pdparams`` (its dygraph ``IResNet`` / ``MobileFaceNet`` / ``FaceViT``, master branch, saved by
``Model.save``: ``paddle.save(state_dict)``), read by :func:`paddle_pfc.utils.pdparams.load_pdparams`
(no code runs). PLSC names its tensors with Paddle's conventions and paddle_pfc's structure; its
PartialFC class centers (``head.*``; with model parallelism in separate ``*_rank{i}.pdparams`` files)
are not part of the backbone and are ignored by name. release/2.2's static per-variable checkpoints
(one file per variable, ``conv2d_0.w_0`` names) are not read.
"""
from __future__ import annotations

import os

from paddle_pfc.interop.common import SourceTensors
from paddle_pfc.utils.pdparams import load_pdparams

__all__ = ["read_plsc"]


def read_plsc(path: str | os.PathLike) -> SourceTensors:
    """The tensors of a PLSC ``.pdparams`` state dict (Paddle naming convention)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such file")
    return SourceTensors(path, "plsc", "paddle", load_pdparams(path))
