"""Collapsed embeddings: a model that maps every face to (nearly) one direction.

Early in margin-softmax training, or with a learning rate too high for the global batch, a
backbone can map every image to almost the same unit vector: every pair then scores cosine ≈ 1,
any threshold says "same" for everyone, and verification accuracy sits at chance — lower than an
untrained network's. :func:`collapse_note` recognises it from verification pairs' embeddings and
says what it usually means.
"""
from __future__ import annotations

import numpy as np

__all__ = ["COSINE_STD_BOUND", "COSINE_MEAN_BOUND", "pair_cosines", "collapse_note", "COLLAPSE_ADVICE"]

#: Collapsed when the pair cosines' standard deviation is below this ...
COSINE_STD_BOUND = 1e-3
#: ... and their mean above this.
COSINE_MEAN_BOUND = 0.99

COLLAPSE_ADVICE = ("this is usual in the first tens of steps from scratch, while margin training and the batch "
                   "norms' running statistics settle (keep training: it passes), or the learning rate is too high "
                   "for the global batch (lower train.lr)")


def pair_cosines(embeddings: np.ndarray) -> np.ndarray:
    """Cosine similarity of rows ``2i`` and ``2i+1`` of ``embeddings`` ``[2P, D]`` (float64 ``[P]``)."""
    emb = np.asarray(embeddings, dtype=np.float64)
    if emb.ndim != 2 or emb.shape[0] % 2:
        raise ValueError(f"embeddings must be [2P, D], got shape {emb.shape}")
    unit = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
    return np.sum(unit[0::2] * unit[1::2], axis=1)


def collapse_note(embeddings: np.ndarray, accuracy: float | None = None, advice: bool = True) -> str | None:
    """A one-line warning when the pairs of ``embeddings`` (``[2P, D]``, rows ``2i``/``2i+1`` a pair)
    all score nearly the same cosine near 1 (std < :data:`COSINE_STD_BOUND`, mean >
    :data:`COSINE_MEAN_BOUND`), else None; ``advice=False``: without :data:`COLLAPSE_ADVICE` (said
    once already)."""
    cos = pair_cosines(embeddings)
    if cos.size == 0:
        return None
    mean, std = float(cos.mean()), float(cos.std())
    if std >= COSINE_STD_BOUND or mean <= COSINE_MEAN_BOUND:
        return None
    measured = f"; accuracy {accuracy:.3f}, chance is 0.5" if accuracy is not None else ""
    said = (f"embeddings have collapsed: every pair scores cosine {cos.min():.4f}-{cos.max():.4f} (std {std:.1e}), "
            f"so any threshold calls all pairs the same person{measured}")
    return f"{said}. {COLLAPSE_ADVICE[0].upper()}{COLLAPSE_ADVICE[1:]}" if advice else said
