"""Batch norms of a converted model given their inputs' statistics, the eval output unchanged.

Exporters fold every conv-BN pair (torch's ONNX exporter in eval mode); the converter sets the
BatchNorm after such a convolution to the identity plus the conv's bias (scale 1, mean 0,
variance 1 - epsilon). In eval mode that computes the folded convolution exactly, but in training
mode a batch norm normalises by its batch's statistics, which the identity never had: the first
training steps see another network (train-mode embeddings nearly orthogonal to eval-mode ones).

:func:`calibrate_identity_batch_norms` gives each identity batch norm the statistics of its input on
sample images (mean ``m``, biased variance ``v`` per channel) and the scale and shift that keep its
eval output: ``sqrt(v + eps) * (x - m) / sqrt(v + eps) + (b + m) = x + b``. In training mode it then
normalises by batch statistics close to ``m`` and ``v``, so training starts from the model it was given.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

__all__ = ["identity_batch_norms", "calibrate_identity_batch_norms"]

BN_EPSILON = 1e-5


def identity_batch_norms(state: Mapping[str, np.ndarray], epsilon: float = BN_EPSILON) -> list[str]:
    """The prefixes of the batch norms in ``state`` that are the converter's identity (scale 1,
    mean 0, variance 1 - epsilon exactly), in ``state``'s order."""
    found = []
    for key in state:
        if not key.endswith("._mean"):
            continue
        prefix = key[: -len("._mean")]
        mean, var, scale = (np.asarray(state.get(f"{prefix}.{name}")) for name in ("_mean", "_variance", "weight"))
        if scale.shape == mean.shape and not np.any(mean) and np.all(scale == 1) \
                and np.all(var == np.float32(1.0 - epsilon)):
            found.append(prefix)
    return found


def _input_values(program, prefixes: list[str]) -> list:
    """The input values of the batch-norm ops of ``program`` (an EvalProgram) whose scale is
    ``{prefix}.weight``, in ``prefixes``' order."""
    by_variable = {name: key for key, name in program.variable_names().items()}
    inputs = {}
    for op in program.main.global_block().ops:
        if op.name() not in ("pd_op.batch_norm_", "pd_op.batch_norm"):
            continue
        scale = op.operand_source(3).get_defining_op().attrs().get("parameter_name")
        key = by_variable.get(scale, "")
        if key.endswith(".weight"):
            inputs[key[: -len(".weight")]] = op.operand_source(0)
    missing = [p for p in prefixes if p not in inputs]
    if missing:
        raise ValueError(f"no batch-norm op reads {missing[0]}.weight in the eval program")
    return [inputs[p] for p in prefixes]


def calibrate_identity_batch_norms(state: Mapping[str, np.ndarray], backbone: str, embedding_size: int,
                                   input_size, batches: Callable[[], object], epsilon: float = BN_EPSILON,
                                   options: Mapping[str, object] | None = None) -> tuple[dict[str, np.ndarray], int]:
    """``state`` with every identity batch norm (:func:`identity_batch_norms`) given its input's
    statistics over the images ``batches()`` yields (float32 normalized NCHW arrays), and the number
    of batch norms changed (``options``: the backbone row's). The eval-mode output is unchanged up to
    float32 rounding."""
    from paddle_pfc.deploy.export import EvalProgram

    prefixes = identity_batch_norms(state, epsilon)
    out = {k: np.asarray(v) for k, v in state.items()}
    if not prefixes:
        return out, 0
    program = EvalProgram(backbone, embedding_size, input_size, state, options=options)
    values = _input_values(program, prefixes)
    sums, squares, counts = [0.0] * len(values), [0.0] * len(values), [0] * len(values)
    for images in batches():
        for i, x in enumerate(program.fetch(np.asarray(images, np.float32), values)):
            axes = tuple(d for d in range(x.ndim) if d != 1)  # all but the channels
            x64 = x.astype(np.float64)
            sums[i] = sums[i] + x64.sum(axis=axes)
            squares[i] = squares[i] + np.square(x64).sum(axis=axes)
            counts[i] += x.size // x.shape[1]
    if counts[0] == 0:
        raise ValueError("no images to take the batch norms' statistics from")
    for prefix, total, square, positions in zip(prefixes, sums, squares, counts):
        mean = total / positions
        var = np.maximum(square / positions - mean * mean, 0.0)
        out[f"{prefix}._mean"] = mean.astype(np.float32)
        out[f"{prefix}._variance"] = var.astype(np.float32)
        out[f"{prefix}.weight"] = np.sqrt(var + epsilon).astype(np.float32)
        out[f"{prefix}.bias"] = (out[f"{prefix}.bias"].astype(np.float64) + mean).astype(np.float32)
    return out, len(prefixes)

