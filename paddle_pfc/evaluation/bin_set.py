"""insightface ``.bin`` verification sets (LFW, CFP-FP, AgeDB-30, ...).

File format: ``pickle.dump((bins, issame_list))`` where ``bins`` holds
``2 * P`` encoded (JPEG or PNG) images - pair ``k`` is ``bins[2k], bins[2k+1]`` - as
``bytes`` or uint8 numpy arrays, and ``issame_list`` holds ``P`` bools.
Python-2 era files need ``encoding='bytes'``, which :func:`read_bin` uses.
The pickle is read by :func:`paddle_pfc.utils.safe_pickle.restricted_load`, which builds only
what this format holds (lists, tuples, bytes, numeric numpy arrays and scalars): a file that asks
for any other global is refused with ``UnsafePickleError`` naming the file and the global, and
nothing of it runs. What the file declares is checked before it is allocated: the decoded bytes
(:mod:`paddle_pfc.utils.decode_budget`), and each image's width x height from its header (at most
:data:`MAX_IMAGE_PIXELS`) before it is decoded; over budget is ``BudgetError``.
"""
from __future__ import annotations

import pickle
import warnings
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from paddle_pfc.data._image import SizeLike, as_size, decode_rgb, fit_size, normalize_nchw
from paddle_pfc.data.shape_policy import DEFAULT_NON_SQUARE
from paddle_pfc.utils.decode_budget import file_budget
from paddle_pfc.utils.errors import BudgetError, InputDataError
from paddle_pfc.utils.image_header import image_size as declared_image_size
from paddle_pfc.utils.safe_pickle import CONTAINER_GLOBALS, NUMPY_GLOBALS, MalformedPickleError, restricted_load

#: What an insightface ``.bin`` holds: tuples and lists (no global needed), ``bytes`` (as
#: protocols 0-2 write them) and numpy arrays, dtypes and scalars (uint8 images, bool labels).
BIN_GLOBALS = {**{key: value for key, value in CONTAINER_GLOBALS.items() if key[1] in ("bytes", "bytearray", "encode")},
               **NUMPY_GLOBALS}

#: The most pixels (width x height) an image of a ``.bin`` may declare (insightface's sets are 112x112).
MAX_IMAGE_PIXELS = 4096 * 4096


class VerificationSet(NamedTuple):
    """``images`` float32 [2P, 3, H, W] normalized ``(x-127.5)/128`` RGB;
    ``flipped`` the same images flipped horizontally (or ``None``);
    ``issame`` bool [P] (pair k = images 2k, 2k+1)."""
    images: np.ndarray
    flipped: np.ndarray | None
    issame: np.ndarray


def read_bin(path: str) -> tuple[list[bytes], list[bool]]:
    """Read the raw content of a ``.bin``: ``(bins as list of bytes, issame as list of bool)``.

    Raises ``ValueError`` naming ``path`` for unreadable or malformed content: its subclasses
    :class:`~paddle_pfc.utils.safe_pickle.UnsafePickleError` (naming ``path`` and the global) for a
    pickle that would construct anything but :data:`BIN_GLOBALS` (nothing of it runs), and
    :class:`~paddle_pfc.utils.errors.BudgetError` for a file that declares more bytes than it holds.
    """
    try:
        with open(path, "rb") as f:
            obj = restricted_load(f, source=str(path), allowed=BIN_GLOBALS, encoding="bytes",
                                  budget=file_budget(path))
    except OSError as e:
        raise ValueError(f"{path}: cannot read verification file ({e.strerror or e})") from e
    except MalformedPickleError as e:
        at = f", at {e.entry}" if e.entry else ""
        raise MalformedPickleError(path, f"not a valid insightface .bin pickle ({e.problem}{at})") from e
    if not isinstance(obj, (tuple, list)) or len(obj) != 2:
        raise ValueError(f"{path}: expected a pickled (bins, issame_list) pair, got {type(obj).__name__}")
    bins = _encoded_images(path, obj[0])
    issame_arr = _issame(path, obj[1])
    if not bins and not issame_arr.size:
        raise ValueError(f"{path}: empty verification set (no images, no pairs)")
    if len(bins) != 2 * len(issame_arr):
        raise ValueError(f"{path}: {len(bins)} images for {len(issame_arr)} pairs (expected {2 * len(issame_arr)})")
    return bins, [bool(v) for v in issame_arr.tolist()]


def _encoded_images(path: str, bins: object) -> list[bytes]:
    """``bins`` as a list of ``bytes`` (each ``bytes``, ``bytearray`` or a uint8 array)."""
    if not isinstance(bins, (list, tuple)):
        raise ValueError(f"{path}: malformed bins/issame lists (the images are a {type(bins).__name__}, not a list)")
    decoded = next((i for i, b in enumerate(bins) if _decoded_image(b)), None)
    if decoded is not None:
        raise ValueError(f"{path}: image {decoded} is a decoded array of shape {bins[decoded].shape}; a .bin holds "
                         "encoded images (JPEG or PNG bytes)")
    wrong = next((i for i, b in enumerate(bins) if not (isinstance(b, (bytes, bytearray)) or (
        isinstance(b, np.ndarray) and b.dtype in (np.uint8, np.int8)))), None)
    if wrong is not None:
        kind = getattr(bins[wrong], "dtype", None) or type(bins[wrong]).__name__
        raise ValueError(f"{path}: malformed bins/issame lists (image {wrong} is a {kind}, not encoded bytes)")
    return [b.tobytes() if isinstance(b, np.ndarray) else bytes(b) for b in bins]


def _issame(path: str, issame: object) -> np.ndarray:
    """``issame`` (a list or 1-D array of bools, or of 1 / 0) as an int64 array."""
    if isinstance(issame, np.ndarray) and issame.ndim == 1 and issame.dtype.kind in "biu":
        issame = issame.tolist()
    if not isinstance(issame, (list, tuple)):
        raise ValueError(f"{path}: malformed bins/issame lists (issame_list is a {type(issame).__name__})")
    if not all(isinstance(v, (bool, int, np.bool_, np.integer)) for v in issame):
        raise ValueError(f"{path}: issame_list must be a flat list of bools")
    not_bool = next((i for i, v in enumerate(issame) if int(v) not in (0, 1)), None)
    if not_bool is not None:
        raise ValueError(f"{path}: issame_list[{not_bool}] is {int(issame[not_bool])!r}, not a bool "
                         "(True / False, or 1 / 0)")
    return np.asarray([int(v) for v in issame], dtype=np.int64)


def decode_bin_image(data: bytes, path: str, index: int, max_pixels: int = MAX_IMAGE_PIXELS) -> np.ndarray:
    """Image ``index`` of the ``.bin`` at ``path`` decoded to RGB uint8 ``[H, W, 3]``, once its header
    declares a JPEG, PNG or BMP of at most ``max_pixels`` (``ValueError`` / ``BudgetError`` naming
    the file and image otherwise)."""
    where = f"{path} image {index}"
    size = declared_image_size(data)
    if size is None:
        raise InputDataError(where, f"cannot decode image ({len(data)} bytes): not a JPEG, PNG or BMP image, "
                             "or its header is cut off")
    width, height = size
    if width * height > max_pixels:
        raise BudgetError(path, f"pixels ({width}x{height}) of an image", width * height, max_pixels,
                          entry=f"image {index}", hint="a .bin holds face crops; decoding it would take "
                          f"{3 * width * height:,} bytes")
    return decode_rgb(data, where)


def _decoded_image(value: object) -> bool:
    """True for an array shaped as a decoded image ([H, W, C] or [H, W]), not as encoded bytes
    (insightface's files hold those flat or as an [n, 1] column)."""
    return isinstance(value, np.ndarray) and (value.ndim == 3 or (value.ndim == 2 and min(value.shape) > 1))


def write_bin(path: str, bins: Sequence[bytes], issame: Sequence[bool]) -> None:
    """Write ``(bins, issame)`` in insightface's ``.bin`` format (bins stored as ``bytes``).

    ``bins``: ``2P`` encoded images (JPEG, PNG or BMP bytes, what :func:`decode_bin_image`
    reads); ``issame``: ``P`` bools. Pair ``k`` is ``bins[2k]`` and ``bins[2k+1]``, ``issame[k]``
    True when they show one identity. One bytes object given for several entries is pickled once.
    ``paddle-pfc-pairs`` writes such a set from an image folder (docs/your_own_data.md)."""
    bins = [b.tobytes() if isinstance(b, np.ndarray) else bytes(b) for b in bins]
    issame = [bool(v) for v in issame]
    if len(bins) != 2 * len(issame):
        raise ValueError(f"write_bin: {len(bins)} images for {len(issame)} pairs")
    with open(path, "wb") as f:
        pickle.dump((bins, issame), f, protocol=pickle.HIGHEST_PROTOCOL)


def load_bin(path: str, image_size: SizeLike = 112, flip: bool = True, conversions=None,
             non_square: str = DEFAULT_NON_SQUARE) -> VerificationSet:
    """Decode a ``.bin`` set into normalized arrays (see :class:`VerificationSet`).

    Images are decoded to RGB and brought to ``image_size`` when different (the policy of
    :mod:`paddle_pfc.data.photos`, ``non_square``; counted in ``conversions``, a ``Conversions``
    whose own policy then applies, when given).
    An undecodable image raises ``ValueError`` naming the file and image index; a set whose
    pairs are all same-identity (or all different) warns that its accuracy means nothing.
    Memory: ``2P*3*H*W*4`` bytes per copy (LFW at 112: ~1.8 GB with ``flip``).
    """
    size = as_size(image_size)
    bins, issame = read_bin(path)
    if all(issame) or not any(issame):
        warnings.warn(f"{path}: all {len(issame)} pairs are {'same' if issame[0] else 'different'}-identity "
                      "pairs: its accuracy does not measure verification (a threshold that accepts "
                      "or rejects every pair is right on all of them)", stacklevel=2)
    fit = ((lambda img, to: fit_size(img, to, non_square)) if conversions is None
           else (lambda img, to: conversions.fit(img, to, f"{path}[{i}]")))
    i = 0
    first = fit(decode_bin_image(bins[0], path, 0), size)
    h, w = first.shape[:2]
    images = np.empty((len(bins), 3, h, w), dtype=np.float32)
    chunk = 256
    buf = np.empty((min(chunk, len(bins)), h, w, 3), dtype=np.uint8)
    for start in range(0, len(bins), chunk):
        stop = min(start + chunk, len(bins))
        for i in range(start, stop):
            img = first if i == 0 else fit(decode_bin_image(bins[i], path, i), size or (h, w))
            buf[i - start] = img
        images[start:stop] = normalize_nchw(buf[: stop - start])
    flipped = np.ascontiguousarray(images[:, :, :, ::-1]) if flip else None
    return VerificationSet(images, flipped, np.asarray(issame, dtype=bool))
