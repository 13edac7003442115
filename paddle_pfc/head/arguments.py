"""The tensors and mode of :class:`~paddle_pfc.head.classifier.LargeScaleClassifier`, checked when
it is built (each failure a ValueError naming the argument; its numbers and dtypes are checked by
:class:`~paddle_pfc.head.spec.HeadSpec`, the run-time checks are :mod:`.checks`)."""
from __future__ import annotations

import paddle

__all__ = ["check_static_mode", "check_tensors", "static_batch"]


def check_static_mode() -> None:
    """RuntimeError outside a static program."""
    if paddle.in_dynamic_mode():
        raise RuntimeError("LargeScaleClassifier builds a static program: call "
                           "paddle_pfc.init_distributed() or paddle.enable_static() first")


def static_batch(feature, label) -> int | None:
    """Rows a rank feeds a step, when the first dimensions of ``feature`` and ``label`` are static
    (None otherwise: the head then checks the batch at run time and its blocks see a dynamic one)."""
    sizes = [value.shape[0] if len(value.shape) else None for value in (feature, label)]
    return sizes[0] if all(isinstance(n, int) and n > 0 for n in sizes) else None


def check_tensors(feature, label, embedding_size: int) -> None:
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
