"""Face-recognition backbones (insightface arcface_torch ports) as Paddle layers.

Contract
--------
``build_backbone(name, embedding_size=512, input_size=112, dropout=0.0)`` returns a
``paddle.nn.Layer`` mapping ``float32 [N, 3, H, W]`` (NCHW, ``(H, W)`` =
``input_size``, multiples of 16, default 112x112) to ``float32
[N, embedding_size]``.  Names: ``BACKBONES`` plus insightface's aliases
r18/r34/r50/r100/r200/mbf.  Bad arguments raise ``ValueError`` naming the
argument.  Layers work in dygraph and in Paddle 3 static PIR programs; call
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

import contextlib
import math

import paddle
from paddle import nn

from .iresnet import (
    IRESNET_LAYERS,
    IBasicBlock,
    IResNet,
    iresnet18,
    iresnet34,
    iresnet50,
    iresnet100,
    iresnet200,
    check_head_args,
    normalize_input_size,
)
from .mobilefacenet import MobileFaceNet, mobilefacenet

__all__ = [
    "BACKBONES",
    "ALIASES",
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
]

BACKBONES = ("iresnet18", "iresnet34", "iresnet50", "iresnet100", "iresnet200",
             "mobilefacenet")
ALIASES = {"r18": "iresnet18", "r34": "iresnet34", "r50": "iresnet50",
           "r100": "iresnet100", "r200": "iresnet200", "mbf": "mobilefacenet"}


def build_backbone(name: str, embedding_size: int = 512, input_size=112,
                   dropout: float = 0.0) -> nn.Layer:
    """Build backbone ``name`` (see ``BACKBONES`` / ``ALIASES``).

    ``input_size``: int or ``(H, W)``, each >= 16 and a multiple of 16.
    ``dropout``: in [0, 1), applied before the embedding Linear.
    """
    key = name.lower() if isinstance(name, str) else name
    key = ALIASES.get(key, key)
    if key not in BACKBONES:
        valid = ", ".join(BACKBONES + tuple(ALIASES))
        raise ValueError(f"unknown backbone name {name!r}; valid names: {valid}")
    check_head_args(embedding_size, dropout)
    size = normalize_input_size(input_size)
    if key == "mobilefacenet":
        return mobilefacenet(embedding_size, size, float(dropout))
    return IResNet(IRESNET_LAYERS[key], embedding_size=embedding_size, input_size=size,
                   dropout=float(dropout))


_NORM_TYPES = (nn.layer.norm._BatchNormBase, nn.BatchNorm)


def count_parameters(layer: nn.Layer) -> int:
    """Number of parameter elements, as torch's ``sum(p.numel() for p in
    model.parameters())``: trainable and frozen weights, without BatchNorm
    running statistics.  Works for dygraph tensors and static PIR values."""
    seen: set[int] = set()
    total = 0
    for sub in layer.sublayers(include_self=True):
        is_norm = isinstance(sub, _NORM_TYPES)
        for pname, p in sub._parameters.items():
            if p is None or id(p) in seen:
                continue
            seen.add(id(p))
            if is_norm and pname in ("_mean", "_variance"):
                continue
            total += math.prod(int(d) for d in p.shape)
    return total


_VALUE_ATTRS = ("trainable", "stop_gradient", "persistable", "optimize_attr",
                "regularizer", "do_model_average", "need_clip", "is_distributed",
                "is_parameter")


@contextlib.contextmanager
def bind_parameters(layer: nn.Layer, startup_program):
    """Static PIR mode: let ``layer`` be called in the current default main
    program although its parameters were created in another one.

    ``startup_program`` is the startup program the layer was built with (it
    holds the parameters' initialisers; it is not modified and need not be run
    again).  Inside the context every parameter of ``layer`` (BatchNorm running
    statistics included) is replaced by a ``builtin.parameter`` op of the same
    name in the current main program, so both programs read and write the same
    scope variables; on exit the original values are restored.  Typical use::

        layer.eval()
        with paddle.static.program_guard(eval_prog, paddle.static.Program()), \
                bind_parameters(layer, train_startup):
            x = paddle.static.data("x", [-1, 3, 112, 112], "float32")
            emb = layer(x)
        layer.train()

    Calling a layer in a program other than its own without this raises
    ``ValueError: (InvalidArgument) Not found key in IRMapping`` at run time.
    """
    if paddle.in_dynamic_mode():
        raise RuntimeError("bind_parameters is for static (PIR) mode only")
    main = paddle.static.default_main_program()
    main.set_parameters_from(startup_program)
    swapped = []
    created = {}
    try:
        with paddle.static.program_guard(main):
            paddle.pir.reset_insertion_point_to_start()
            for sub in layer.sublayers(include_self=True):
                for key, param in list(sub._parameters.items()):
                    if param is None:
                        continue
                    value = created.get(id(param))
                    if value is None:
                        value = paddle._pir_ops.parameter(param.name)
                        for attr in _VALUE_ATTRS:
                            if hasattr(param, attr):
                                setattr(value, attr, getattr(param, attr))
                        created[id(param)] = value
                    swapped.append((sub, key, param))
                    sub._parameters[key] = value
        yield layer
    finally:
        for sub, key, param in swapped:
            sub._parameters[key] = param
