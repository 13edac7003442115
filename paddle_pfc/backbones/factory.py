"""Building backbones by name, counting their parameters, and calling a layer in a second static
program (:func:`bind_parameters`); the names and builders are :mod:`paddle_pfc.backbones.table`."""
from __future__ import annotations

import contextlib
import math

import paddle
from paddle import nn

from paddle_pfc.backbones.spec import ModelSpec
from paddle_pfc.utils import paddle_compat


def build_backbone(name: str, embedding_size: int | None = None, input_size=None,
                   dropout: float = 0.0, **options) -> nn.Layer:
    """Build backbone ``name`` (see ``BACKBONES`` / ``ALIASES``; :mod:`paddle_pfc.backbones.table`).

    ``embedding_size`` / ``input_size``: the row's defaults (512, 112) when None.
    ``input_size``: int or ``(H, W)``, each >= 16 and a multiple of 16 (the row's rule).
    ``dropout``: in [0, 1), applied before the embedding Linear.
    ``options``: the row's extra build keywords (its defaults for those not given).
    """
    return ModelSpec(name, embedding_size, input_size, dropout, options).build()


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


def _check_initialised(layer: nn.Layer, startup_program) -> None:
    """ValueError naming the parameters of ``layer`` that ``startup_program`` does not set (Paddle
    3.3 would crash with a segmentation fault reading them)."""
    if not isinstance(startup_program, paddle.static.Program):
        raise ValueError(f"bind_parameters: startup_program must be a paddle.static.Program, got "
                         f"{type(startup_program).__name__}")
    initialised = {op.attrs()["parameter_name"] for op in startup_program.global_block().ops
                   if op.name() == "builtin.set_parameter"}
    names = [p.name for sub in layer.sublayers(include_self=True)
             for p in paddle_compat.own_parameters(sub).values() if p is not None]
    missing = list(dict.fromkeys(name for name in names if name not in initialised))
    if missing:
        shown = ", ".join(repr(n) for n in missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise ValueError(f"bind_parameters: startup_program does not initialise {len(missing)} of the layer's "
                         f"{len(set(names))} parameters ({shown}): pass the startup program the layer was built under")


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
    ``ValueError: (InvalidArgument) Not found key in IRMapping`` at run time. A
    ``startup_program`` that does not initialise every parameter of ``layer``
    raises ValueError naming the missing ones.
    """
    if paddle.in_dynamic_mode():
        raise RuntimeError("bind_parameters is for static (PIR) mode only")
    _check_initialised(layer, startup_program)
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
