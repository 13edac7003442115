"""Shared image helpers (decode, resize, normalize). Pure numpy / cv2."""
from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from paddle_pfc.data.shape_policy import DEFAULT_NON_SQUARE, checked_non_square

SizeLike = int | Sequence[int] | None


def as_size(image_size: SizeLike) -> tuple[int, int] | None:
    """Normalize ``image_size`` (int ``S`` or ``(H, W)`` or ``None``) to ``(H, W)`` or ``None``."""
    if image_size is None:
        return None
    if isinstance(image_size, (int, np.integer)):
        h = w = int(image_size)
    else:
        vals = [int(v) for v in image_size]
        if len(vals) != 2:
            raise ValueError(f"image_size must be an int or (H, W), got {image_size!r}")
        h, w = vals
    if h <= 0 or w <= 0:
        raise ValueError(f"image_size must be positive, got {image_size!r}")
    return h, w


def decode_rgb(buf, source: str) -> np.ndarray:
    """Decode encoded image bytes to RGB uint8 ``[H, W, 3]``.

    Grayscale / 16-bit / alpha images are converted to 8-bit 3-channel RGB.
    Raises ``ValueError`` mentioning ``source`` when the bytes cannot be decoded.
    """
    arr = np.frombuffer(buf, dtype=np.uint8) if not isinstance(buf, np.ndarray) else buf.reshape(-1)
    if arr.dtype != np.uint8:
        arr = arr.astype(np.uint8)
    img = None
    if arr.size > 0:
        try:
            img = cv2.imdecode(arr, cv2.IMREAD_COLOR)
        except cv2.error:
            img = None
    if img is None or img.ndim != 3 or img.shape[2] != 3 or img.size == 0:
        raise ValueError(f"{source}: cannot decode image ({arr.size} bytes)")
    return cv2.cvtColor(img, cv2.COLOR_BGR2RGB)


def read_rgb(path: str) -> np.ndarray:
    """Read an image file to RGB uint8 ``[H, W, 3]``; ``ValueError`` naming the file on failure."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ValueError(f"{path}: cannot read image file ({e.strerror or e})") from e
    return decode_rgb(data, path)


def pad_to_aspect(img: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``img`` (HW or HWC) padded on both sides of its short direction with copies of its border
    row / column (centred) to the aspect ratio of ``size=(H, W)``; unchanged when it has it."""
    h, w = size
    ih, iw = img.shape[:2]
    if ih * w == iw * h:
        return img
    if ih * w > iw * h:  # too tall: widen
        extra = int(round(ih * w / h)) - iw
        pads = (0, 0, extra // 2, extra - extra // 2)
    else:
        extra = int(round(iw * h / w)) - ih
        pads = (extra // 2, extra - extra // 2, 0, 0)
    if extra <= 0:
        return img
    out = cv2.copyMakeBorder(img, *pads, borderType=cv2.BORDER_REPLICATE)
    return out[:, :, None] if img.ndim == 3 and out.ndim == 2 else out


def crop_to_aspect(img: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``img`` (HW or HWC) cut to the aspect ratio of ``size=(H, W)`` by dropping rows or columns
    of its long direction, as many on each side (one more at the end when odd); unchanged when
    it has that ratio."""
    h, w = size
    ih, iw = img.shape[:2]
    if ih * w > iw * h:  # too tall: drop rows
        keep = int(round(iw * h / w))
        top = (ih - keep) // 2
        return img[top:top + keep]
    if ih * w < iw * h:  # too wide: drop columns
        keep = int(round(ih * w / h))
        left = (iw - keep) // 2
        return img[:, left:left + keep]
    return img


def to_aspect(img: np.ndarray, size: tuple[int, int], non_square: str = DEFAULT_NON_SQUARE) -> np.ndarray:
    """``img`` brought to the aspect ratio of ``size=(H, W)`` by the policy ``non_square``:
    ``pad`` (:func:`pad_to_aspect`), ``crop`` (:func:`crop_to_aspect`) or ``stretch`` (unchanged:
    the resize changes the ratio). An image of that ratio is returned as it is by every policy."""
    if checked_non_square(non_square) == "pad":
        return pad_to_aspect(img, size)
    if non_square == "crop":
        return crop_to_aspect(img, size)
    return img


def fit_size(img: np.ndarray, size: tuple[int, int] | None, non_square: str = DEFAULT_NON_SQUARE) -> np.ndarray:
    """``img`` (HWC) at ``size=(H, W)``: brought to that aspect ratio by the policy ``non_square``
    (:func:`to_aspect`), then resized (INTER_AREA when shrinking, else INTER_LINEAR); unchanged
    when it has that size. The policy of every command (:mod:`paddle_pfc.data.photos`)."""
    if size is None:
        return img
    h, w = size
    if img.shape[0] == h and img.shape[1] == w:
        return img
    img = to_aspect(img, (h, w), non_square)
    if img.shape[0] == h and img.shape[1] == w:
        return img
    interp = cv2.INTER_AREA if (img.shape[0] > h and img.shape[1] > w) else cv2.INTER_LINEAR
    out = cv2.resize(img, (w, h), interpolation=interp)
    if out.ndim == 2:
        out = out[:, :, None]
    return out


def encode_jpeg(rgb: np.ndarray, quality: int = 95) -> bytes:
    """Encode RGB uint8 ``[H, W, 3]`` as JPEG bytes."""
    ok, buf = cv2.imencode(".jpg", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise ValueError("JPEG encoding failed")
    return buf.tobytes()


def normalize_nchw(batch_nhwc: np.ndarray) -> np.ndarray:
    """uint8 ``[N, H, W, 3]`` -> float32 ``[N, 3, H, W]`` with ``(x - 127.5) / 128``."""
    x = np.ascontiguousarray(batch_nhwc.transpose(0, 3, 1, 2)).astype(np.float32)
    x -= 127.5
    x *= 1.0 / 128.0
    return x
