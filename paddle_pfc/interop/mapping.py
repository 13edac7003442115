"""Source tensors -> a paddle_pfc backbone state, checked: every target parameter is read from exactly
one source tensor of the same shape, every source tensor is used or ignored with a stated reason.

The targets come from the backbone itself (its ``state_dict`` names and the type of the layer each
belongs to), so a change of the backbone cannot silently drift from the mapping. Conventions
converted explicitly:

* torch BatchNorm ``running_mean`` / ``running_var`` are Paddle's ``_mean`` / ``_variance``;
  ``num_batches_tracked`` has no Paddle counterpart (bookkeeping of the momentum schedule, ignored);
  torch's momentum 0.1 is Paddle's 0.9 (the backbones already use it; nothing stored);
* torch PReLU ``weight`` is Paddle's ``_weight``; a ``[C, 1, 1]`` slope is read as ``[C]``;
* torch Linear ``weight`` is ``[out, in]``, Paddle's ``[in, out]``: transposed;
* the source input normalization ``(x - 127.5) / 127.5`` is folded into the first convolution
  (weights times 128 / 127.5), so the converted model takes paddle_pfc's ``(x - 127.5) / 128``.
"""
from __future__ import annotations

import numpy as np

from paddle_pfc.interop.common import INPUT_SCALE, ConversionError, SourceTensors

__all__ = ["target_layout", "layer_layout", "map_state", "CLASSIFIER_HINTS"]

#: key fragments of classifier (margin softmax / PartialFC) tensors saved next to a backbone
CLASSIFIER_HINTS = ("head.", "partial_fc", "partialfc", "margin_softmax", "classifier", "arcface", "cosface")


def _parameter_kind(layer, pname: str, extra) -> str | None:
    """The kind of parameter ``pname`` of ``layer`` (``extra``: the interop module's
    ``parameter_kind``, asked first), None when no rule knows the layer."""
    from paddle import nn

    from paddle_pfc.utils.paddle_compat import batch_norm_types

    kind = extra(layer, pname) if extra is not None else None
    if kind is not None:
        return kind
    if isinstance(layer, nn.PReLU):
        return "prelu"
    if isinstance(layer, nn.Linear):
        return "linear" if pname == "weight" else "bias"
    if isinstance(layer, batch_norm_types()):
        return {"_mean": "mean", "_variance": "variance"}.get(pname, "bn")
    if isinstance(layer, nn.Conv2D):
        return "conv" if pname == "weight" else "bias"
    return None


def target_layout(backbone: str, embedding_size: int, input_size,
                  options: dict | None = None) -> dict[str, tuple[tuple[int, ...], str]]:
    """:func:`layer_layout` of paddle_pfc backbone ``backbone`` (built without allocating its weights),
    with its interop module's ``parameter_kind`` (:mod:`paddle_pfc.interop.architectures`)."""
    import paddle

    from paddle_pfc.backbones import build_backbone
    from paddle_pfc.interop.architectures import interop_module

    was_static = not paddle.in_dynamic_mode()
    if was_static:
        paddle.disable_static()
    try:
        with paddle.LazyGuard():
            net = build_backbone(backbone, embedding_size, input_size, **(options or {}))
    finally:
        if was_static:
            paddle.enable_static()
    return layer_layout(net, backbone, getattr(interop_module(backbone), "parameter_kind", None))


def layer_layout(net, label: str = "backbone", extra=None) -> dict[str, tuple[tuple[int, ...], str]]:
    """``{structured name: (shape, kind)}`` of the layer ``net``, in its state-dict order; kind is
    ``conv``, ``linear``, ``prelu``, ``bn`` (weight/bias), ``mean``, ``variance``, or what ``extra``
    (an interop module's ``parameter_kind``) says, e.g. ``tensor`` (read as it is). ``label`` names
    ``net`` in errors."""
    from paddle_pfc.utils.paddle_compat import own_parameters

    kinds = {}
    for prefix, layer in net.named_sublayers(include_self=True):
        for pname in own_parameters(layer):
            key = f"{prefix}.{pname}" if prefix else pname
            kinds[key] = _parameter_kind(layer, pname, extra)
            if kinds[key] is None:
                raise ConversionError(f"{label}: parameter {key} of an unexpected layer "
                                      f"{type(layer).__name__}")
    return {k: (tuple(int(d) for d in v.shape), kinds[k]) for k, v in net.state_dict().items()}


def _source_key(name: str, kind: str, convention: str) -> str:
    if convention == "paddle":
        return name
    stem, _, leaf = name.rpartition(".")
    if kind == "mean":
        return f"{stem}.running_mean"
    if kind == "variance":
        return f"{stem}.running_var"
    if kind == "prelu":
        return f"{stem}.weight"
    return name


def _ignorable(key: str) -> str | None:
    """Why a leftover source key is ignored, or ``None`` when it is not ignorable."""
    if key.endswith("num_batches_tracked"):
        return "BatchNorm bookkeeping (torch's count of batches; no Paddle counterpart)"
    low = key.lower()
    if key in ("weight", "weight_mom", "bias") or any(h in low for h in CLASSIFIER_HINTS):
        return "classifier (margin softmax / PartialFC class centers), not part of the backbone"
    return None


def map_state(source: SourceTensors, backbone: str, embedding_size: int, input_size,
              first_conv: str, layout: dict | None = None) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """``(state, ignored)``: the backbone state (float32, structured names) read from ``source`` and
    the source keys left out with the reason. ``first_conv`` is the name of the convolution that
    reads the images (the input scale is folded into it). ``ConversionError`` names every missing,
    wrongly-shaped or unused tensor. ``layout``: the target's :func:`layer_layout` (the named
    backbone's when None)."""
    layout = layout or target_layout(backbone, embedding_size, input_size)
    state, used, missing, wrong = _read_layout(source, layout, first_conv)
    ignored, unused = _leftovers(source, used)
    problems = [text for text in (_listed(f"missing {len(missing)}", missing), _listed("wrong shape", wrong, "; "),
                                  _listed(f"not used by {backbone} ({len(unused)})", unused)) if text]
    if problems:
        raise ConversionError(f"{source.path}: does not map onto paddle_pfc {backbone}(embedding_size="
                              f"{embedding_size}, input_size={list(input_size)}): " + " | ".join(problems))
    for name, value in state.items():
        if not np.all(np.isfinite(value)):
            raise ConversionError(f"{source.path}: tensor for {name} holds NaN or infinity")
    return state, ignored


def _read_layout(source: SourceTensors, layout: dict, first_conv: str
                 ) -> tuple[dict[str, np.ndarray], dict[str, str], list[str], list[str]]:
    """``(state, used, missing, wrong)``: each tensor of ``layout`` read from ``source`` (float32),
    the source keys read (→ the name each became), the keys missing, and why others do not fit."""
    tensors = source.tensors
    used: dict[str, str] = {}
    state: dict[str, np.ndarray] = {}
    missing, wrong = [], []
    for name, (shape, kind) in layout.items():
        key = _source_key(name, kind, source.convention)
        if key not in tensors:
            missing.append(key)
            continue
        if key in used:
            raise ConversionError(f"{source.path}: source tensor {key} would be read twice "
                                  f"({used[key]} and {name})")
        value = _as_target(np.asarray(tensors[key]), shape, kind, source.convention)
        problem = _misfit(key, name, value, shape, np.shape(tensors[key]))
        if problem:
            wrong.append(problem)
            continue
        if name == first_conv:
            value = value.astype(np.float64) * INPUT_SCALE
        used[key] = name
        state[name] = np.ascontiguousarray(value, dtype=np.float32)
    return state, used, missing, wrong


def _as_target(value: np.ndarray, shape: tuple, kind: str, convention: str) -> np.ndarray:
    """A source tensor in paddle_pfc's layout: torch's linear weights transposed, PReLU slopes reshaped."""
    if kind == "linear" and convention == "torch" and value.ndim == 2:
        value = value.T
    if kind == "prelu" and value.size == int(np.prod(shape)) and value.ndim != len(shape):
        value = value.reshape(shape)
    return value


def _misfit(key: str, name: str, value: np.ndarray, shape: tuple, source_shape: tuple) -> str | None:
    """Why ``value`` (source ``key``) cannot be paddle_pfc's ``name`` of ``shape``, or None."""
    if tuple(value.shape) != shape:
        return f"{key} {list(source_shape)} (paddle_pfc {name} needs {list(shape)})"
    if value.dtype.kind != "f":
        return f"{key} is {value.dtype}, not floating point"
    return None


def _leftovers(source: SourceTensors, used: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """``(ignored, unused)``: the source keys not read that may be left out (with the reason: the
    source's own and :func:`_ignorable`'s), and those that may not."""
    ignored = dict(source.ignored)
    unused = []
    for key in (k for k in source.tensors if k not in used):
        reason = _ignorable(key)
        if reason is None:
            unused.append(f"{key} {list(np.shape(source.tensors[key]))}")
        else:
            ignored[key] = reason
    return ignored, unused


def _listed(label: str, items: list[str], sep: str = ", ") -> str:
    """``label: the first six items ...``, or ``""`` without items."""
    return f"{label}: " + sep.join(items[:6]) + (" ..." if len(items) > 6 else "") if items else ""
