"""Face-recognition backbones (insightface arcface_torch ports) as Paddle layers.

Contract
--------
``build_backbone(name, embedding_size=None, input_size=None, dropout=0.0, **options)``
returns a ``paddle.nn.Layer`` mapping ``float32 [N, 3, H, W]`` (NCHW, ``(H, W)`` =
``input_size``, multiples of 16, default the row's: 112x112) to ``float32
[N, embedding_size]`` (default the row's: 512).  Names: ``BACKBONES`` plus insightface's aliases
r18/r34/r50/r100/r200/mbf/w600k_mbf, one row each in the backbone table
(:mod:`paddle_pfc.backbones.table`; a row's own options are keywords of
``build_backbone``; :class:`~paddle_pfc.backbones.spec.ModelSpec` is a checked
model definition).  Bad arguments raise ``ValueError`` naming the argument.
Layers work in dygraph and in Paddle 3 static PIR programs; call
``layer.train()`` or ``layer.eval()`` *before* calling the layer inside a
``program_guard`` (the mode is baked into the program: build the eval program
separately; PIR has no ``Program.clone(for_test=True)``).  A layer's PIR
parameters belong to the program it was built in; to call the same layer in a
second program (e.g. the eval program) wrap that call in
``bind_parameters(layer, startup_program)``.

``count_parameters(layer)`` counts what torch's ``sum(p.numel() for p in
model.parameters())`` counts: all weights incl. frozen ones, but not
BatchNorm running mean/variance (which Paddle stores as non-trainable
parameters).
"""
from __future__ import annotations

import sys
import types

from paddle_pfc.backbones.names import ALIASES, BACKBONES
from paddle_pfc.utils.lazy import lazy_getattr

__all__ = [
    "BACKBONES",
    "ALIASES",
    "ModelSpec",
    "bind_parameters",
    "build_backbone",
    "count_parameters",
    "IBasicBlock",
    "IResNet",
    "MobileFaceNet",
    "iresnet18",
    "iresnet34",
    "iresnet50",
    "iresnet100",
    "iresnet200",
    "mobilefacenet",
    "VisionTransformer",
    "vit_t",
    "vit_s",
    "vit_b",
    "vit_l",
]

#: Where each public name lives (imported on first use: importing the package loads no Paddle).
_LAZY = {
    "ModelSpec": "spec", "bind_parameters": "factory", "build_backbone": "factory", "count_parameters": "factory",
    "IBasicBlock": "iresnet", "IResNet": "iresnet", "iresnet18": "iresnet", "iresnet34": "iresnet",
    "iresnet50": "iresnet", "iresnet100": "iresnet", "iresnet200": "iresnet",
    "MobileFaceNet": "mobilefacenet", "mobilefacenet": "mobilefacenet",
    "VisionTransformer": "vit", "vit_t": "vit", "vit_s": "vit", "vit_b": "vit", "vit_l": "vit",
}


__getattr__ = lazy_getattr(__name__, {name: f"paddle_pfc.backbones.{module}" for name, module in _LAZY.items()},
                           globals())


class _Package(types.ModuleType):
    """The package module: a submodule named like a public function (``mobilefacenet``) does not
    replace the function when the import system binds the submodule on the package."""

    def __setattr__(self, name: str, value) -> None:
        if name in _LAZY and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
