"""Verification protocol on insightface ``.bin`` sets (LFW, CFP-FP, AgeDB-30, ...).

THE one implementation used by validation during training and by
``tools/validate.py``; both only differ in the ``embed_fn`` they pass:

* ``embed_fn(batch) -> np.ndarray [n, D]`` maps a float32 NCHW batch, RGB,
  normalized ``(x - 127.5) / 128`` (the training input), to the model's raw
  (un-normalized) embeddings.  Examples: the trainer's eval program
  (``paddle_pfc.deploy.export.EvalProgram``), or ``paddle_pfc.deploy.inference.FaceEmbedder.forward``.
* A face's embedding is ``emb(image) + emb(horizontally flipped image)``
  (insightface "Accuracy-Flip"); ``xnorm`` is the mean L2 norm of the plain and
  flipped embeddings taken individually, before summing (as insightface).
* Accuracy / threshold come from :func:`paddle_pfc.evaluation.verification.evaluate_pairs`
  (10-fold protocol on squared L2 distance of unit vectors; a distance
  threshold ``t`` equals a cosine-similarity threshold ``1 - t / 2``, which is what
  the commands report: ``VerificationResult.cosine_threshold``).
* Each distinct image (same decoded pixels) is embedded once (:func:`distinct_images`):
  a set whose pairs reuse images costs one embedding per image, not per pair member.

For repeated validation (every N steps) load the set once with
:func:`load_pairs` and call :func:`evaluate_arrays`.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import numpy as np

from paddle_pfc.data.shape_policy import DEFAULT_NON_SQUARE
from paddle_pfc.evaluation.verification import VerificationResult, evaluate_pairs

__all__ = ["EmbedFn", "embed_pairs", "distinct_images", "embed_distinct", "embedded_line", "load_pairs",
           "load_bin_part", "shard_range", "evaluate_arrays", "evaluate_embeddings", "evaluate_bin"]

EmbedFn = Callable[[np.ndarray], np.ndarray]


def _call_embed(embed_fn: EmbedFn, batch: np.ndarray, expected_dim: int | None) -> np.ndarray:
    out = np.asarray(embed_fn(batch))
    if out.ndim != 2 or out.shape[0] != batch.shape[0]:
        raise ValueError(f"embed_fn must return [n, D] for a batch of n={batch.shape[0]} images, "
                         f"got shape {out.shape}")
    if expected_dim is not None and out.shape[1] != expected_dim:
        raise ValueError(f"embed_fn returned D={out.shape[1]}, earlier batches had D={expected_dim}")
    return out.astype(np.float32, copy=False)


def embed_pairs(embed_fn: EmbedFn, images_nchw: np.ndarray, batch_size: int = 64,
                on_batch: Callable[[int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Embed ``images_nchw`` (float32 ``[M, 3, H, W]``, normalized) with flip test-time augmentation.

    Runs ``embed_fn`` on batches of at most ``batch_size`` images and on their
    horizontally flipped copies.  Returns ``(summed [M, D], plain_and_flipped [2M, D])``:
    ``summed[i] = emb(img_i) + emb(flip(img_i))``; ``plain_and_flipped`` stacks
    all plain embeddings then all flipped ones (what insightface averages for ``xnorm``).
    ``on_batch(n)`` is called after each batch of ``n`` images (e.g. ``Progress.update``).
    """
    images = np.asarray(images_nchw)
    if images.ndim != 4:
        raise ValueError(f"images_nchw must be 4-D [M, C, H, W], got shape {images.shape}")
    if images.shape[0] == 0:
        raise ValueError("images_nchw is empty")
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
    n = images.shape[0]
    plain = flipped = None
    dim = None
    for start in range(0, n, int(batch_size)):
        batch = np.ascontiguousarray(images[start:start + batch_size], dtype=np.float32)
        e = _call_embed(embed_fn, batch, dim)
        dim = e.shape[1]
        ef = _call_embed(embed_fn, np.ascontiguousarray(batch[:, :, :, ::-1]), dim)
        if plain is None:
            plain = np.empty((n, dim), np.float32)
            flipped = np.empty((n, dim), np.float32)
        plain[start:start + batch.shape[0]] = e
        flipped[start:start + batch.shape[0]] = ef
        if on_batch is not None:
            on_batch(batch.shape[0])
    return plain + flipped, np.concatenate([plain, flipped], axis=0)


def distinct_images(images: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, inverse)``: the index of the first occurrence of each distinct image of
    ``images`` (``[M, ...]``, compared by a hash of its bytes), in order, and for each image the
    position of its distinct image in ``first`` (``images[first][inverse]`` equals ``images``)."""
    import hashlib

    seen: dict[bytes, int] = {}
    first: list[int] = []
    inverse = np.empty(len(images), np.int64)
    for i in range(len(images)):
        key = hashlib.blake2b(np.ascontiguousarray(images[i]).tobytes(), digest_size=16).digest()
        slot = seen.get(key)
        if slot is None:
            slot = seen[key] = len(first)
            first.append(i)
        inverse[i] = slot
    return np.asarray(first, np.int64), inverse


def embed_distinct(embed_fn: EmbedFn, images_nchw: np.ndarray, batch_size: int = 64,
                   on_batch: Callable[[int], None] | None = None,
                   on_distinct: Callable[[int], None] | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`embed_pairs` embedding each distinct image once: ``(summed, plain_and_flipped,
    distinct count)``, the arrays as :func:`embed_pairs` returns them for every image.
    ``on_distinct(count)`` is called before the first batch (e.g. to size a progress line)."""
    images = np.asarray(images_nchw)
    first, inverse = distinct_images(images)
    if on_distinct is not None:
        on_distinct(len(first))
    if len(first) == len(images):
        summed, both = embed_pairs(embed_fn, images, batch_size, on_batch)
        return summed, both, len(first)
    summed, both = embed_pairs(embed_fn, images[first], batch_size, on_batch)
    plain, flipped = both[:len(first)][inverse], both[len(first):][inverse]
    return summed[inverse], np.concatenate([plain, flipped], axis=0), len(first)


def embedded_line(distinct: int, total: int) -> str:
    """``embedded 200 distinct images of 3,600`` (or ``embedded 3,600 images``)."""
    if distinct == total:
        return f"embedded {total:,} images"
    return f"embedded {distinct:,} distinct images of {total:,}"


def load_pairs(path: str | os.PathLike, image_size=112,
               conversions=None, non_square: str = DEFAULT_NON_SQUARE) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of an insightface ``.bin`` set as arrays: ``(images float32 [2P, 3, H, W], issame bool [P])``
    (:func:`paddle_pfc.evaluation.bin_set.load_bin` without the flipped copy).

    Images are decoded to RGB, brought to ``image_size`` (int or ``(H, W)``) when
    they differ (:mod:`paddle_pfc.data.photos`, ``non_square``; counted in ``conversions``, whose
    own policy then applies, when given), and
    normalized ``(x - 127.5) / 128``.  Pair ``k`` is images
    ``2k, 2k+1``.  Uses the data layer's reader (:mod:`paddle_pfc.evaluation.bin_set`);
    ``ValueError`` naming the file for unreadable / malformed sets (``UnsafePickleError``, a
    ``ValueError``, for a pickle that asks for more than the format holds; nothing of it runs).
    """
    from paddle_pfc.evaluation.bin_set import load_bin

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: verification .bin file not found")
    vs = load_bin(path, image_size, flip=False, conversions=conversions, non_square=non_square)
    return vs.images, np.asarray(vs.issame, dtype=bool)


def shard_range(count: int, rank: int, world_size: int) -> tuple[int, int]:
    """``[start, stop)`` of rank ``rank``'s contiguous share of ``count`` items (the first
    ``count % world_size`` ranks get one more)."""
    base, extra = divmod(count, world_size)
    start = rank * base + min(rank, extra)
    return start, start + base + (1 if rank < extra else 0)


def load_bin_part(path: str | os.PathLike, image_size=112, rank: int = 0,
                  world_size: int = 1, non_square: str = DEFAULT_NON_SQUARE) -> tuple[np.ndarray, np.ndarray, int]:
    """Open and check a ``.bin`` set and decode only rank ``rank``'s share of its images
    (``shard_range(2P, rank, world_size)``).

    Returns ``(images float32 [share, 3, H, W] normalized, issame bool [P], 2P)``. The whole
    file is read and checked (pickle, pair count) on every call, so a wrong path or a broken
    file fails here naming the path (``FileNotFoundError`` / ``ValueError``), and an undecodable
    image of the part names its index. Used to check the sets at start-up and to let each rank
    of a validation decode its share only.
    """
    from paddle_pfc.data._image import as_size, fit_size, normalize_nchw
    from paddle_pfc.evaluation.bin_set import decode_bin_image, read_bin

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: verification .bin file not found")
    bins, issame = read_bin(path)
    if not bins:
        raise ValueError(f"{path}: empty verification set")
    start, stop = shard_range(len(bins), rank, world_size)
    size = as_size(image_size)
    decoded = [fit_size(decode_bin_image(bins[i], path, i), size, non_square) for i in range(start, stop)]
    if decoded:
        images = normalize_nchw(np.stack(decoded))
    else:
        h, w = size or decode_bin_image(bins[0], path, 0).shape[:2]
        images = np.empty((0, 3, h, w), np.float32)
    return images, np.asarray(issame, dtype=bool), len(bins)


def evaluate_embeddings(plain: np.ndarray, flipped: np.ndarray, issame: Sequence[bool],
                        nrof_folds: int = 10) -> VerificationResult:
    """Verification result from the embeddings of every image of a set ([2P, D] each), plain and
    flipped: the same numbers :func:`evaluate_arrays` computes from the images."""
    return evaluate_pairs(plain + flipped, np.asarray(issame), nrof_folds,
                          xnorm_embeddings=np.concatenate([plain, flipped], axis=0))


def evaluate_arrays(embed_fn: EmbedFn, images_nchw: np.ndarray, issame: Sequence[bool],
                    batch_size: int = 64, nrof_folds: int = 10) -> VerificationResult:
    """Verification result of already loaded pairs (see :func:`load_pairs`): the images embedded
    here, then :func:`evaluate_embeddings` (the one protocol, as validation during training)."""
    _, both, _ = embed_distinct(embed_fn, images_nchw, batch_size)
    count = len(both) // 2
    return evaluate_embeddings(both[:count], both[count:], issame, nrof_folds)


def evaluate_bin(embed_fn: EmbedFn, bin_path: str | os.PathLike, image_size=112,
                 batch_size: int = 64, nrof_folds: int = 10) -> VerificationResult:
    """Load ``bin_path`` and evaluate ``embed_fn`` on it (flip-summed embeddings,
    insightface ``xnorm``, ``nrof_folds``-fold accuracy)."""
    images, issame = load_pairs(bin_path, image_size)
    return evaluate_arrays(embed_fn, images, issame, batch_size, nrof_folds)

