"""Shared image helpers (decode, resize, normalize). Pure numpy / cv2."""
from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

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


def fit_size(img: np.ndarray, size: tuple[int, int] | None) -> np.ndarray:
    """Resize ``img`` (HWC) to ``size=(H, W)`` if it differs (INTER_AREA when shrinking, else INTER_LINEAR)."""
    if size is None:
        return img
    h, w = size
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
