"""The input normalization of a backbone state: ``(x - 127.5) / std`` with the ``std`` its first
convolution expects. paddle_pfc trains on ``std = 128``; a state from a model served with another
``std`` (insightface's released models: 127.5) is brought to it by scaling the first convolution.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["TRAINING_STD", "first_conv_name", "rescale_input"]

TRAINING_STD = 128.0


def first_conv_name(state: Mapping[str, np.ndarray]) -> str:
    """The name of the state's one 4-D weight over the 3 image channels (the first convolution);
    ``ValueError`` when there is not exactly one."""
    names = [name for name, value in state.items() if np.ndim(value) == 4 and np.shape(value)[1] == 3]
    if len(names) != 1:
        raise ValueError(f"expected one convolution over the 3 image channels, found {len(names)}: {names[:4]}")
    return names[0]


def rescale_input(state: Mapping[str, np.ndarray], from_std: float, to_std: float) -> dict[str, np.ndarray]:
    """A copy of ``state`` that takes input ``(x - 127.5) / to_std`` and computes what ``state``
    computes of ``(x - 127.5) / from_std`` (its first convolution times ``to_std / from_std``)."""
    name = first_conv_name(state)
    out = dict(state)
    weight = np.asarray(state[name])
    out[name] = (weight.astype(np.float64) * (float(to_std) / float(from_std))).astype(weight.dtype)
    return out
