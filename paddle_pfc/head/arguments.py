"""The arguments of :class:`~paddle_pfc.head.classifier.LargeScaleClassifier`, checked when it is
built (each failure a ValueError naming the argument; the run-time checks are :mod:`.checks`)."""
from __future__ import annotations

import paddle

from paddle_pfc.head import geometry
from paddle_pfc.head.margin import Margin, margin_of
from paddle_pfc.utils.numbers import is_int

__all__ = ["check_arguments"]


def check_arguments(feature, label, rank, world_size, num_classes, sample_ratio, embedding_size,
                    margin_args, seed) -> Margin:
    """Raise ValueError naming a bad argument (RuntimeError outside a static program); return the margin."""
    if paddle.in_dynamic_mode():
        raise RuntimeError("LargeScaleClassifier builds a static program: call "
                           "paddle_pfc.init_distributed() or paddle.enable_static() first")
    _check_sizes(rank, world_size, num_classes, sample_ratio, embedding_size, seed)
    margin = margin_of(*margin_args)
    _check_tensors(feature, label, embedding_size)
    return margin


def _check_sizes(rank, world_size, num_classes, sample_ratio, embedding_size, seed) -> None:
    """Raise ValueError naming the first bad number of a classifier's arguments."""
    if not is_int(world_size) or world_size < 1:
        raise ValueError(f"world_size must be an int >= 1, got {world_size!r}")
    if not is_int(rank) or not 0 <= rank < world_size:
        raise ValueError(f"rank must be an int in [0, world_size={world_size}), got {rank!r}")
    if not is_int(num_classes) or num_classes < 1:
        raise ValueError(f"num_classes must be an int >= 1, got {num_classes!r}")
    if num_classes < world_size:
        raise ValueError(f"num_classes ({num_classes}) must be >= world_size ({world_size}): "
                         "every rank needs at least one class")
    geometry.check_sample_ratio(sample_ratio)
    if not is_int(embedding_size) or embedding_size < 1:
        raise ValueError(f"embedding_size must be an int >= 1, got {embedding_size!r}")
    if not is_int(seed) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")


def _check_tensors(feature, label, embedding_size: int) -> None:
    """Raise ValueError naming a feature or label of the wrong shape or dtype."""
    if len(feature.shape) != 2 or feature.shape[-1] != embedding_size:
        raise ValueError(f"feature must have shape [batch, embedding_size={embedding_size}], "
                         f"got {list(feature.shape)}")
    if feature.dtype not in (paddle.float32,):
        raise ValueError(f"feature must be float32, got {feature.dtype}")
    if label.dtype not in (paddle.int64, paddle.int32):
        raise ValueError(f"label must be an integer tensor (int64 or int32), got {label.dtype}")
    if not (len(label.shape) == 1 or (len(label.shape) == 2 and label.shape[1] == 1)):
        raise ValueError(f"label must have shape [batch] or [batch, 1], got {list(label.shape)}")
    if feature.shape[0] not in (None, -1) and label.shape[0] not in (None, -1) \
            and feature.shape[0] != label.shape[0]:
        raise ValueError(f"feature and label batch sizes differ: {feature.shape[0]} vs {label.shape[0]}")
