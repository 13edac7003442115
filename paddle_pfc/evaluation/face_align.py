"""Face alignment: a 5-point similarity transform onto the 112×112 ArcFace template.

The five points are (left eye, right eye, nose tip, left mouth corner, right mouth corner) in
image pixels, ``x, y``, as insightface's detectors and the IJB ``*_name_5pts_score.txt`` files
give them. :func:`similarity_transform` is Umeyama's least-squares estimate (rotation, uniform
scale, translation; no reflection) from source to destination points; :func:`align_face` warps
the image with it (bilinear, black border) to the template at ``output_size`` (the template is
scaled for sizes other than 112).
"""
from __future__ import annotations

import numpy as np

__all__ = ["ARCFACE_TEMPLATE", "similarity_transform", "align_face", "template_points"]

#: Landmarks of an aligned 112×112 face (insightface's ``arcface_dst``), pixels (x, y).
ARCFACE_TEMPLATE = np.array([[38.2946, 51.6963], [73.5318, 51.5014], [56.0252, 71.7366],
                             [41.5493, 92.3655], [70.7299, 92.2041]], dtype=np.float64)


def template_points(output_size: int = 112) -> np.ndarray:
    """The ArcFace template scaled to an ``output_size``-pixel square."""
    if output_size < 1:
        raise ValueError(f"output_size must be >= 1, got {output_size}")
    return ARCFACE_TEMPLATE * (output_size / 112.0)


def _points(name: str, value) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 1 and arr.size % 2 == 0:
        arr = arr.reshape(-1, 2)
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] < 2:
        raise ValueError(f"{name}: expected [N >= 2, 2] points, got shape {np.shape(value)}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: points must be finite, got {arr.tolist()}")
    return arr


def similarity_transform(src, dst) -> np.ndarray:
    """2×3 matrix ``M`` of the similarity ``x -> M[:, :2] @ x + M[:, 2]`` minimising
    ``sum |M(src_i) - dst_i|²`` (Umeyama 1991, without reflection)."""
    src, dst = _points("src", src), _points("dst", dst)
    if src.shape != dst.shape:
        raise ValueError(f"src and dst differ in shape: {src.shape} vs {dst.shape}")
    mu_s, mu_d = src.mean(axis=0), dst.mean(axis=0)
    s, d = src - mu_s, dst - mu_d
    var_s = float(np.mean(np.sum(s * s, axis=1)))
    if var_s <= 0.0:
        raise ValueError("src points are all the same: no transform is defined")
    cov = d.T @ s / src.shape[0]
    u, sig, vt = np.linalg.svd(cov)
    sign = np.eye(2)
    if np.linalg.det(u) * np.linalg.det(vt) < 0:
        sign[1, 1] = -1.0
    rot = u @ sign @ vt
    scale = float(np.sum(sig * np.diag(sign))) / var_s
    out = np.empty((2, 3))
    out[:, :2] = scale * rot
    out[:, 2] = mu_d - scale * rot @ mu_s
    return out


def align_face(image: np.ndarray, landmarks, output_size: int = 112) -> np.ndarray:
    """``image`` (HWC uint8) warped so that ``landmarks`` (5 points, or 10 numbers x1 y1 …)
    land on the ArcFace template; returns ``[output_size, output_size, C]``."""
    import cv2

    image = np.asarray(image)
    if image.ndim not in (2, 3) or image.shape[0] < 1 or image.shape[1] < 1:
        raise ValueError(f"image: expected HxW or HxWxC, got shape {image.shape}")
    pts = _points("landmarks", landmarks)
    if pts.shape[0] != 5:
        raise ValueError(f"landmarks: expected 5 points, got {pts.shape[0]}")
    m = similarity_transform(pts, template_points(output_size))
    return cv2.warpAffine(image, m, (output_size, output_size), flags=cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=0)
