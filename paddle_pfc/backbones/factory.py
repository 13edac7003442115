"""Building backbones by name, counting their parameters, and calling a layer in a second static
program (:func:`bind_parameters`); the names are :mod:`paddle_pfc.backbones.names`."""
from __future__ import annotations

import contextlib
import math

import paddle
from paddle import nn

from paddle_pfc.backbones.common import check_head_args, normalize_input_size
from paddle_pfc.backbones.iresnet import IRESNET_LAYERS, IResNet
from paddle_pfc.backbones.mobilefacenet import mobilefacenet
from paddle_pfc.backbones.names import ALIASES, BACKBONES
from paddle_pfc.backbones.vit import VIT_SIZES, vit_backbone
from paddle_pfc.utils import paddle_compat


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
    if key in VIT_SIZES:
        return vit_backbone(key, embedding_size, size, float(dropout))
    if key in ("mobilefacenet", "mobilefacenet_fc"):
        return mobilefacenet(embedding_size, size, float(dropout), head="fc" if key == "mobilefacenet_fc" else "gdc")
    return IResNet(IRESNET_LAYERS[key], embedding_size=embedding_size, input_size=size,
                   dropout=float(dropout))


_NORM_TYPES = paddle_compat.batch_norm_types()


def count_parameters(layer: nn.Layer) -> int:
    """Number of parameter elements, as torch's ``sum(p.numel() for p in
    model.parameters())``: trainable and frozen weights, without BatchNorm
    running statistics.  Works for dygraph tensors and static PIR values."""
    seen: set[int] = set()
    total = 0
    for sub in layer.sublayers(include_self=True):
        is_norm = isinstance(sub, _NORM_TYPES)
        for pname, p in paddle_compat.own_parameters(sub).items():
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
                for key, param in list(paddle_compat.own_parameters(sub).items()):
                    if param is None:
                        continue
                    value = created.get(id(param))
                    if value is None:
                        value = paddle_compat.pir_parameter(param.name)
                        for attr in _VALUE_ATTRS:
                            if hasattr(param, attr):
                                setattr(value, attr, getattr(param, attr))
                        created[id(param)] = value
                    swapped.append((sub, key, param))
                    paddle_compat.own_parameters(sub)[key] = value
        yield layer
    finally:
        for sub, key, param in swapped:
            paddle_compat.own_parameters(sub)[key] = param
