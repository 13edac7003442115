"""Backbone states as ``{structured state_dict name: ndarray}``: read from a scope
(:func:`backbone_state_from_scope`), from a weights file (:func:`load_state_file`), or drawn at random
(:func:`random_state`)."""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import paddle

from paddle_pfc.backbones.factory import build_backbone
from paddle_pfc.utils.errors import InputDataError, UsageError
from paddle_pfc.utils.paddle_compat import tensor_is_initialized

__all__ = ["backbone_state_from_scope", "load_state_file", "random_state"]


def backbone_state_from_scope(layer: paddle.nn.Layer, scope=None) -> dict[str, np.ndarray]:
    """``{structured name: numpy copy}`` of a backbone's parameters and BN statistics.

    Static mode: values are read from ``scope`` (default: the global scope), e.g.
    the training scope after some steps.  Dynamic mode (``scope`` None): the
    layer's tensors.  Raises :class:`UsageError` naming a parameter absent from the scope.
    """
    sd = layer.state_dict()
    if scope is None and paddle.in_dynamic_mode():
        return {k: np.array(v.numpy()) for k, v in sd.items()}
    scope = scope if scope is not None else paddle.static.global_scope()
    out = {}
    for k, v in sd.items():
        var = scope.find_var(v.name)
        if var is None or not tensor_is_initialized(var.get_tensor()):
            raise UsageError(f"{k} (variable {v.name}) is not initialized in the scope: "
                             "run the startup program first")
        out[k] = np.array(var.get_tensor())
    return out


def load_state_file(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Read a backbone state from ``.npz`` (``np.savez(path, **state)``, or a checkpoint's
    ``backbone.npz``) or ``.pdparams`` (``paddle.save(layer.state_dict(), path)``, or a pickled
    ``{name: ndarray}``). Neither runs code from the file: the ``.npz`` is read without pickles,
    the ``.pdparams`` by :func:`paddle_pfc.utils.pdparams.load_pdparams` (arrays and containers
    only; anything else is :class:`~paddle_pfc.utils.safe_pickle.UnsafePickleError`, naming the
    file and what it asked for; over its budget, :class:`~paddle_pfc.utils.errors.BudgetError`).
    :class:`InputDataError` naming the file on failure."""
    from paddle_pfc.utils.npz_state import load_state
    from paddle_pfc.utils.pdparams import load_pdparams

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: weights file not found")
    try:
        if path.endswith(".npz"):
            return load_state(path)
        if path.endswith(".pdparams"):
            return load_pdparams(path)
    except InputDataError:  # names the file already (UnsafePickleError, BudgetError, ...)
        raise
    except (OSError, ValueError) as e:
        raise InputDataError(path, f"cannot read weights ({e})") from e
    raise UsageError(f"{path}: unsupported weights file (expected .npz or .pdparams)")


def random_state(backbone_name: str, embedding_size: int, input_size: int | Sequence[int], seed: int = 0,
                 dropout: float = 0.0, options: Mapping[str, object] | None = None) -> dict[str, np.ndarray]:
    """A random backbone state with O(1) activations, for tests and smoke runs:
    conv/linear weights ``N(0, 1 / sqrt(fan_in))``, PReLU slopes 0.25, BN scale
    ``1 + N(0, 0.01)``, shift/mean ``N(0, 0.01)``, variance in ``[0.5, 1.5]``
    (embeddings of different inputs then differ clearly; larger scales blow up). ``options``: the
    backbone row's extra build keywords."""
    was_static = not paddle.in_dynamic_mode()
    if was_static:
        paddle.disable_static()  # LazyGuard (shapes without initialisation) is dygraph-only
    try:
        with paddle.LazyGuard():
            net = build_backbone(backbone_name, embedding_size, input_size, dropout, **(options or {}))
    finally:
        if was_static:
            paddle.enable_static()
    rng = np.random.RandomState(seed)
    out = {}
    for k, v in net.state_dict().items():
        shape = tuple(int(d) for d in v.shape)
        if k.endswith("_variance"):
            out[k] = rng.uniform(0.5, 1.5, shape).astype(np.float32)
        elif len(shape) >= 2:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 2 else shape[0]
            out[k] = (rng.randn(*shape) / np.sqrt(max(fan_in, 1))).astype(np.float32)
        elif k.endswith("_weight") or "prelu" in k.lower():  # PReLU slopes
            out[k] = np.full(shape, 0.25, np.float32)
        else:
            out[k] = (rng.randn(*shape) * 0.01 + (1.0 if k.endswith("weight") else 0.0)).astype(np.float32)
    return out
