"""Face-verification accuracy (LFW / CFP-FP / AgeDB-30 protocol), pure numpy.

Re-implements the protocol of insightface's ``arcface_torch/eval/verification.py``
(``test`` -> ``evaluate`` -> ``calculate_roc``), without sklearn/scipy:

1. ``embeddings`` is ``[2P, D]``; rows ``2i`` and ``2i+1`` form pair ``i``.  Each
   row is expected to be already the SUM of the image's and its horizontally
   flipped image's embedding ("Accuracy-Flip" in insightface).
2. Rows are L2-normalised (zero rows stay zero, like ``sklearn.preprocessing.normalize``).
3. Per pair, squared Euclidean distance ``sum((e1 - e2)**2)``, in float64.
4. Pairs are split into ``nrof_folds`` contiguous folds exactly like
   ``KFold(n_splits, shuffle=False)``: the first ``P % n`` folds have
   ``P // n + 1`` pairs, the rest ``P // n``.  ``nrof_folds == 1`` uses all pairs
   for both train and test (insightface's ``LFold``).
5. For each fold, over thresholds ``np.arange(0, 4, 0.01)`` a pair is predicted
   "same" iff ``dist < threshold`` (strict); the threshold with the highest
   accuracy on the train folds (first one on ties, i.e. ``np.argmax``) is applied
   to the test fold.
6. Reported: ``accuracy = mean(fold accuracies)``, ``accuracy_std = np.std``
   (population, ddof=0) of them, ``threshold = mean(best thresholds)``, and
   ``xnorm`` = mean L2 norm of the un-normalised embeddings.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["VerificationResult", "evaluate_pairs", "kfold_splits", "pair_cosines", "THRESHOLDS"]

#: Distance thresholds scanned by insightface's ``evaluate`` for accuracy.
THRESHOLDS = np.arange(0, 4, 0.01)


@dataclass(frozen=True)
class VerificationResult:
    """Result of :func:`evaluate_pairs`.

    accuracy: mean test-fold accuracy in [0, 1]; accuracy_std: population std of
    the fold accuracies; threshold: mean of the per-fold best squared-L2
    thresholds (see ``cosine_threshold``); xnorm: mean L2 norm of the un-normalised embeddings;
    num_pairs: P.
    """

    accuracy: float
    accuracy_std: float
    threshold: float
    xnorm: float
    num_pairs: int

    @property
    def cosine_threshold(self) -> float:
        """``threshold`` as a cosine similarity of the unit vectors (``1 - threshold / 2``): what
        the commands report and ``paddle-pfc-infer --threshold`` takes; "same" above it."""
        return 1.0 - self.threshold / 2.0


def kfold_splits(n: int, n_splits: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train_idx, test_idx) per fold with ``KFold(n_splits, shuffle=False)`` semantics.

    Folds are contiguous; the first ``n % n_splits`` folds get one extra item.
    ``n_splits == 1`` returns ``[(all, all)]`` (insightface's ``LFold``).
    Raises ValueError if ``n_splits < 1`` or ``n_splits > n``.
    """
    if isinstance(n_splits, bool) or not isinstance(n_splits, (int, np.integer)) or n_splits < 1:
        raise ValueError(f"nrof_folds must be an int >= 1, got {n_splits!r}")
    if n < n_splits:
        raise ValueError(f"cannot split {n} pairs into {n_splits} folds "
                         f"(need at least as many pairs as folds)")
    indices = np.arange(n)
    if n_splits == 1:
        return [(indices, indices)]
    sizes = np.full(n_splits, n // n_splits, dtype=np.int64)
    sizes[: n % n_splits] += 1
    splits = []
    start = 0
    for size in sizes:
        stop = start + int(size)
        test = indices[start:stop]
        train = np.concatenate([indices[:start], indices[stop:]])
        splits.append((train, test))
        start = stop
    return splits


def _as_issame(issame, num_pairs: int) -> np.ndarray:
    arr = np.asarray(issame)
    if arr.ndim != 1:
        raise ValueError(f"issame must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != num_pairs:
        raise ValueError(f"issame has {arr.shape[0]} entries but embeddings hold "
                         f"{num_pairs} pairs ({2 * num_pairs} rows)")
    if arr.dtype != np.bool_:
        if arr.dtype.kind not in "iuf" or not np.all((arr == 0) | (arr == 1)):
            raise ValueError("issame must be boolean or contain only 0/1")
        arr = arr.astype(bool)
    return arr


def _checked_embeddings(embeddings) -> np.ndarray:
    """``embeddings`` as float64 ``[2P, D]``; ValueError when not 2-D, odd, empty or not finite."""
    emb = np.asarray(embeddings)
    if emb.ndim != 2:
        raise ValueError(f"embeddings must be 2-D [2P, D], got shape {emb.shape}")
    if emb.shape[0] % 2 != 0:
        raise ValueError(f"embeddings must have an even number of rows (pairs), got {emb.shape[0]}")
    if emb.shape[0] == 0 or emb.shape[1] == 0:
        raise ValueError(f"embeddings are empty: shape {emb.shape}")
    emb = emb.astype(np.float64, copy=False)
    if not np.all(np.isfinite(emb)):
        bad = int(np.count_nonzero(~np.isfinite(emb).all(axis=1)))
        raise ValueError(f"embeddings contain non-finite values (NaN/Inf) in {bad} row(s)")
    return emb


def _checked_xnorm_rows(xnorm_embeddings) -> np.ndarray:
    """``xnorm_embeddings`` as float64 2-D; ValueError when empty, not 2-D or not finite."""
    xe = np.asarray(xnorm_embeddings, dtype=np.float64)
    if xe.ndim != 2 or xe.shape[0] == 0:
        raise ValueError(f"xnorm_embeddings must be a non-empty 2-D array, got shape {xe.shape}")
    if not np.all(np.isfinite(xe)):
        raise ValueError("xnorm_embeddings contain non-finite values (NaN/Inf)")
    return xe


def _mean_norm(rows: np.ndarray) -> float:
    """Mean L2 norm of the rows."""
    return float(np.mean(np.linalg.norm(rows, axis=1)))


def _pair_distances(emb: np.ndarray) -> np.ndarray:
    """``[P]`` squared L2 distance of each pair's L2-normalised rows (zero rows stay zero)."""
    norms = np.linalg.norm(emb, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0  # sklearn.preprocessing.normalize leaves zero rows as zero
    unit = emb / norms
    diff = unit[0::2] - unit[1::2]
    return np.sum(np.square(diff), axis=1)


def pair_cosines(embeddings) -> np.ndarray:
    """``[P]`` cosine similarity of each pair of ``[2P, D]`` embeddings (``1 - d / 2`` of the
    squared distance ``d`` the protocol uses; zero rows stay zero)."""
    return 1.0 - _pair_distances(_checked_embeddings(embeddings)) / 2.0


def _fold_accuracies(dist: np.ndarray, same: np.ndarray, splits) -> tuple[np.ndarray, np.ndarray]:
    """``(accuracies, best_thresholds)`` per fold: the THRESHOLDS entry most accurate on the train
    pairs (the first on ties) and its accuracy on the test pairs."""
    # correct[t, i]: whether threshold t classifies pair i correctly.
    correct = (dist[None, :] < THRESHOLDS[:, None]) == same[None, :]
    accuracies = np.zeros(len(splits))
    best_thresholds = np.zeros(len(splits))
    for k, (train, test) in enumerate(splits):
        # Same train set size for every threshold, so argmax of counts == argmax of accuracy.
        best = int(np.argmax(correct[:, train].sum(axis=1)))
        best_thresholds[k] = THRESHOLDS[best]
        accuracies[k] = float(np.count_nonzero(correct[best, test])) / test.size
    return accuracies, best_thresholds


def evaluate_pairs(embeddings: np.ndarray, issame: np.ndarray, nrof_folds: int = 10,
                   *, xnorm_embeddings: np.ndarray | None = None) -> VerificationResult:
    """Verification accuracy of ``P`` pairs with insightface's 10-fold protocol.

    Args:
        embeddings: ``[2P, D]`` finite array; rows ``2i``/``2i+1`` are pair ``i``
            (flip-summed embeddings, not necessarily normalised).
        issame: ``[P]`` bool (or 0/1) ground truth.
        nrof_folds: number of contiguous folds (``1 <= nrof_folds <= P``).
        xnorm_embeddings: optional rows whose mean L2 norm is reported as
            ``xnorm``.  insightface averages over the un-flipped AND flipped
            embeddings individually (``[2 * 2P, D]``, before summing); pass them
            here to reproduce its number.  Default: ``embeddings``.

    Raises:
        ValueError: non-2-D input, odd row count, ``issame`` length mismatch,
            fewer pairs than folds, non-finite values.
    """
    emb = _checked_embeddings(embeddings)
    num_pairs = emb.shape[0] // 2
    same = _as_issame(issame, num_pairs)
    splits = kfold_splits(num_pairs, nrof_folds)
    xnorm = _mean_norm(emb if xnorm_embeddings is None else _checked_xnorm_rows(xnorm_embeddings))
    accuracies, best_thresholds = _fold_accuracies(_pair_distances(emb), same, splits)
    return VerificationResult(
        accuracy=float(np.mean(accuracies)),
        accuracy_std=float(np.std(accuracies)),
        threshold=float(np.mean(best_thresholds)),
        xnorm=xnorm,
        num_pairs=num_pairs,
    )
