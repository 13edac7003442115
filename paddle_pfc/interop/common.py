"""What every source reader and architecture mapping shares: the error type, the tensors read from
a source file, and the converted result."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from paddle_pfc.backbones.spec import ModelSpec
from paddle_pfc.utils.errors import InputDataError

__all__ = ["ConversionError", "SourceTensors", "Converted", "SOURCE_NORMALIZATION", "INPUT_SCALE",
           "strip_prefix"]

#: arcface_torch, insightface's released ONNX models and PLSC all feed ``(x / 255 - 0.5) / 0.5``,
#: i.e. ``(x - 127.5) / 127.5``.
SOURCE_NORMALIZATION = {"formula": "(x / 255 - 0.5) / 0.5", "mean": 127.5, "std": 127.5}
#: paddle_pfc feeds ``(x - 127.5) / 128``: the source's input is ours times 128 / 127.5, a factor
#: the converter folds into the first convolution (no bias, zero padding: exact).
INPUT_SCALE = 128.0 / 127.5


class ConversionError(InputDataError):
    """A source model that cannot be converted; names the file and what was found."""


@dataclass
class SourceTensors:
    """Tensors read from a source file, keyed by the source's own names.

    ``convention``: ``"torch"`` (``running_mean``/``running_var``, PReLU ``weight``, Linear
    ``[out, in]``) or ``"paddle"`` (``_mean``/``_variance``, PReLU ``_weight``, Linear ``[in, out]``).
    ``ignored``: source keys deliberately not converted, with the reason (reported, never silent).
    """

    path: str
    format: str  # "torch" | "plsc" | "onnx"
    convention: str
    tensors: dict[str, np.ndarray]
    ignored: dict[str, str] = field(default_factory=dict)


@dataclass
class Converted:
    """A source model as a paddle_pfc backbone state (structured names, float32), ready for
    ``paddle_pfc.deploy.export.EvalProgram`` or ``--pretrained``; ``source`` is recorded in
    ``export.json``."""

    backbone: str
    embedding_size: int
    input_size: tuple[int, int]
    state: Mapping[str, np.ndarray]
    source: dict

    @property
    def spec(self) -> ModelSpec:
        """The converted model's definition (for ``EvalProgram.from_spec``)."""
        return ModelSpec(self.backbone, self.embedding_size, self.input_size)


def strip_prefix(tensors: dict[str, np.ndarray], path: str) -> tuple[dict[str, np.ndarray], str]:
    """Drop a ``module.`` prefix that every key shares (a state dict saved from DDP /
    DataParallel); returns the tensors and the prefix dropped ("" when none)."""
    keys = list(tensors)
    for prefix in ("module.", "backbone.", "model."):
        if keys and all(k.startswith(prefix) for k in keys):
            return {k[len(prefix):]: v for k, v in tensors.items()}, prefix
    return tensors, ""
