"""5-point similarity alignment against independent computations."""
from __future__ import annotations

import numpy as np
import pytest

from paddle_pfc.evaluation.face_align import ARCFACE_TEMPLATE, align_face, similarity_transform, template_points


def similarity(angle_deg: float, scale: float, tx: float, ty: float) -> np.ndarray:
    a = np.deg2rad(angle_deg)
    return np.array([[scale * np.cos(a), -scale * np.sin(a), tx], [scale * np.sin(a), scale * np.cos(a), ty]])


def apply(m: np.ndarray, pts: np.ndarray) -> np.ndarray:
    return pts @ m[:, :2].T + m[:, 2]


def lstsq_similarity(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Independent reference: the linear least-squares fit of x' = a x - b y + tx, y' = b x + a y + ty."""
    rows, rhs = [], []
    for (x, y), (u, v) in zip(src, dst):
        rows += [[x, -y, 1, 0], [y, x, 0, 1]]
        rhs += [u, v]
    a, b, tx, ty = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)[0]
    return np.array([[a, -b, tx], [b, a, ty]])


def test_exact_points_recover_the_transform():
    m = similarity(23.0, 1.7, 40.0, -12.5)
    src = np.random.default_rng(0).uniform(0, 100, (5, 2))
    np.testing.assert_allclose(similarity_transform(src, apply(m, src)), m, atol=1e-9)


def test_noisy_points_match_linear_least_squares():
    rng = np.random.default_rng(1)
    for _ in range(20):
        src = rng.uniform(0, 200, (5, 2))
        dst = apply(similarity(rng.uniform(-60, 60), rng.uniform(0.3, 3), *rng.uniform(-50, 50, 2)), src)
        dst += rng.normal(0, 3.0, dst.shape)
        np.testing.assert_allclose(similarity_transform(src, dst), lstsq_similarity(src, dst), atol=1e-8)


def test_no_reflection():
    src = ARCFACE_TEMPLATE
    mirrored = src * np.array([-1.0, 1.0])  # a reflection fits best; a similarity must not reflect
    m = similarity_transform(src, mirrored)
    assert np.linalg.det(m[:, :2]) > 0


def test_align_face_undoes_a_warp():
    import cv2

    rng = np.random.default_rng(2)
    face = (rng.uniform(0, 255, (112, 112, 3))).astype(np.uint8)
    face = cv2.GaussianBlur(face, (0, 0), 3)  # smooth, so bilinear resampling errors are small
    m = similarity(-15.0, 1.6, 60.0, 20.0)  # aligned face -> loose crop
    loose = cv2.warpAffine(face, m, (300, 260), flags=cv2.INTER_LINEAR)
    landmarks = apply(m, ARCFACE_TEMPLATE)
    back = align_face(loose, landmarks.reshape(-1), 112)
    inner = (slice(8, 104), slice(8, 104))
    assert np.abs(back[inner].astype(int) - face[inner].astype(int)).mean() < 2.0
    small = align_face(loose, landmarks, 56)
    assert small.shape == (56, 56, 3)
    np.testing.assert_allclose(template_points(56), ARCFACE_TEMPLATE / 2)


@pytest.mark.parametrize("landmarks,match", [(np.zeros((4, 2)), "5 points"), (np.ones((5, 2)), "all the same"),
                                              (np.full(10, np.nan), "finite")])
def test_bad_landmarks(landmarks, match):
    with pytest.raises(ValueError, match=match):
        align_face(np.zeros((50, 50, 3), np.uint8), landmarks)
