"""Synthetic face-like identities, generated on the fly, deterministic by seed.

Every identity ``c`` has a prototype image: a shared face-like template (oval,
eye/mouth shading - common to all identities, so raw intensity is not a
shortcut) plus identity-specific smooth structure (``num_blobs`` anisotropic
Gaussian blobs with per-channel amplitudes, a colour offset and a gradient),
drawn from ``SeedSequence([seed, stream, c])``. A sample is a random jitter of
its prototype: similarity warp (shift up to 12 %, scale 0.86-1.14, rotation
+-18 deg), a random occluding blob, colour mixing, lighting gradient,
brightness/contrast and Gaussian pixel noise (scaled by ``hardness``), drawn from
``SeedSequence([seed, stream, 1_000_003, i])``. Training identities use
stream 0; verification identities (:func:`make_verification_set`) use stream
1, so they are disjoint from every training identity for any seed.
"""
from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from ._image import SizeLike, as_size, encode_jpeg
from .recordio import write_insightface_rec
from .shape_policy import DEFAULT_NON_SQUARE

_TRAIN_STREAM = 0
_VERIF_STREAM = 1
_SAMPLE_TAG = 1_000_003


def _check_seed(seed: int) -> int:
    seed = int(seed)
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    return seed


@lru_cache(maxsize=8)
def _template(h: int, w: int) -> np.ndarray:
    """Shared face-like template, float32 [H, W, 3] in [0, 1]."""
    y, x = np.meshgrid(np.linspace(-1, 1, h, dtype=np.float32), np.linspace(-1, 1, w, dtype=np.float32),
                       indexing="ij")
    face = 1.0 / (1.0 + np.exp(12.0 * ((x / 0.72) ** 2 + (y / 0.9) ** 2 - 1.0)))
    eyes = np.exp(-(((np.abs(x) - 0.33) / 0.13) ** 2 + ((y + 0.2) / 0.08) ** 2))
    mouth = np.exp(-((x / 0.3) ** 2 + ((y - 0.5) / 0.07) ** 2))
    nose = np.exp(-((x / 0.07) ** 2 + ((y - 0.1) / 0.2) ** 2))
    skin = np.array([0.78, 0.6, 0.5], np.float32)
    bg = np.array([0.35, 0.38, 0.42], np.float32)
    img = face[..., None] * skin + (1 - face[..., None]) * bg
    img -= (0.35 * eyes + 0.25 * mouth)[..., None] * face[..., None]
    img += (0.08 * nose)[..., None]
    return img.astype(np.float32)


@lru_cache(maxsize=256)  # <= ~40 MB at 112x112
def _prototype(seed: int, stream: int, cls: int, h: int, w: int, num_blobs: int) -> np.ndarray:
    """Identity prototype, float32 [H, W, 3] (not clipped)."""
    rng = np.random.default_rng([seed, stream, cls])
    ys = np.linspace(-1, 1, h, dtype=np.float32)
    xs = np.linspace(-1, 1, w, dtype=np.float32)
    cy = rng.uniform(-0.75, 0.75, num_blobs).astype(np.float32)
    cx = rng.uniform(-0.65, 0.65, num_blobs).astype(np.float32)
    sy = rng.uniform(0.08, 0.35, num_blobs).astype(np.float32)
    sx = rng.uniform(0.08, 0.35, num_blobs).astype(np.float32)
    amp = rng.normal(0.0, 0.22, (num_blobs, 3)).astype(np.float32)
    gy = np.exp(-0.5 * ((ys[None, :] - cy[:, None]) / sy[:, None]) ** 2)  # [K, H]
    gx = np.exp(-0.5 * ((xs[None, :] - cx[:, None]) / sx[:, None]) ** 2)  # [K, W]
    blobs = np.stack([(gy.T * amp[:, c]) @ gx for c in range(3)], axis=-1)  # sum_k amp[k,c] gy[k,h] gx[k,w]
    grad = rng.normal(0.0, 0.08, (2, 3)).astype(np.float32)
    color = rng.normal(0.0, 0.08, 3).astype(np.float32)
    img = _template(h, w) + blobs + color + ys[:, None, None] * grad[0] + xs[None, :, None] * grad[1]
    img.setflags(write=False)
    return img


_BANK_SIZE = 1 << 20
_bank = np.zeros(0, np.float32)


def _noise_bank(min_size: int) -> np.ndarray:
    """Process-wide standard-normal float32 bank (fixed seed, deterministic)."""
    global _bank
    need = _BANK_SIZE + min_size
    if _bank.size < need:
        _bank = np.random.default_rng(0x5EED).standard_normal(need, dtype=np.float32)
        _bank.setflags(write=False)
    return _bank


@lru_cache(maxsize=8)
def _grid(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    ys = np.linspace(-1, 1, h, dtype=np.float32)
    xs = np.linspace(-1, 1, w, dtype=np.float32)
    ys.setflags(write=False)
    xs.setflags(write=False)
    return ys, xs


def render_sample(proto: np.ndarray, rng: np.random.Generator, noise: float = 0.06,
                  hardness: float = 1.0) -> np.ndarray:
    """Random jitter of a prototype -> RGB uint8 [H, W, 3].

    Nuisances (scaled by ``hardness``): similarity warp, one random occluding
    blob, per-sample colour mixing, contrast, brightness and lighting gradient,
    and Gaussian pixel noise (std ``noise`` in [0, 1] units).
    """
    h, w = proto.shape[:2]
    k = float(hardness)
    u = rng.random(16).tolist()  # all scalar draws at once (python floats keep float32 math)
    ang = (u[0] * 2 - 1) * 18.0 * k
    scale = 1.0 + (u[1] * 2 - 1) * 0.14 * k
    m = cv2.getRotationMatrix2D(((w - 1) / 2.0, (h - 1) / 2.0), ang, scale)
    m[0, 2] += (u[2] * 2 - 1) * 0.12 * k * w
    m[1, 2] += (u[3] * 2 - 1) * 0.12 * k * h
    img = cv2.warpAffine(proto, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    ys, xs = _grid(h, w)
    # occluder / accessory blob of random colour
    cy, cx = (u[4] * 2 - 1) * 0.9, (u[5] * 2 - 1) * 0.9
    sy, sx = 0.1 + 0.2 * u[6], 0.1 + 0.2 * u[7]
    a = 0.8 * k * (0.3 + 0.7 * u[8])
    oy = np.exp(-0.5 * ((ys - cy) / sy) ** 2) * a
    ox = np.exp(-0.5 * ((xs - cx) / sx) ** 2)
    occ = (oy[:, None] * ox[None, :])[..., None]
    occ_col = np.array(u[9:12], dtype=np.float32)
    img += occ * (occ_col - img)
    # colour mixing (near identity), contrast, brightness + directional lighting
    mix = np.eye(3, dtype=np.float32) + rng.normal(0.0, 0.08 * k, (3, 3)).astype(np.float32)
    mix *= 1.0 + (u[12] * 2 - 1) * 0.3 * k  # contrast
    img = cv2.transform(img - 0.5, mix)
    gy, gx = (u[13] * 2 - 1) * 0.25 * k, (u[14] * 2 - 1) * 0.25 * k
    light = (0.5 + (u[15] * 2 - 1) * 0.15 * k) + gy * ys[:, None] + gx * xs[None, :]
    img += light[..., None]
    if noise > 0:  # slice of a fixed Gaussian bank at a random offset: ~10x cheaper than fresh normals
        n = h * w * 3
        bank = _noise_bank(n)
        off = int(rng.integers(0, _BANK_SIZE))
        img += bank[off:off + n].reshape(h, w, 3) * noise
    img *= 255.0
    img += 0.5
    return np.clip(img, 0, 255, out=img).astype(np.uint8)


class SyntheticFaces:
    """Deterministic synthetic identity dataset.

    ``len = num_classes * samples_per_class``; ``ds[i] -> (rgb uint8 [H, W, 3],
    label int)`` with ``label = i // samples_per_class``; the output depends only
    on ``(seed, i)`` (and the constructor's size/difficulty arguments). Images are drawn at
    ``image_size``: ``non_square`` never applies and nothing is skipped.
    """

    non_square = DEFAULT_NON_SQUARE
    num_skipped = 0

    def __init__(self, num_classes: int, samples_per_class: int = 20, image_size: SizeLike = 112, seed: int = 0,
                 num_blobs: int = 8, noise: float = 0.06, hardness: float = 1.0):
        if num_classes <= 0 or samples_per_class <= 0:
            raise ValueError("num_classes and samples_per_class must be positive")
        self.num_classes = int(num_classes)
        self.samples_per_class = int(samples_per_class)
        self.image_size = as_size(image_size)
        if self.image_size is None:
            raise ValueError("SyntheticFaces needs an image_size")
        self.seed = _check_seed(seed)
        self.num_blobs = int(num_blobs)
        self.noise = float(noise)
        self.hardness = float(hardness)

    def __len__(self) -> int:
        return self.num_classes * self.samples_per_class

    def label(self, index: int) -> int:
        return int(index) // self.samples_per_class

    @property
    def labels(self) -> np.ndarray:
        """int64 [len] labels."""
        return np.arange(len(self), dtype=np.int64) // self.samples_per_class

    def read_labels(self) -> np.ndarray:
        """Every sample's label (int64 ``[len(self)]``)."""
        return self.labels

    def prototype(self, cls: int) -> np.ndarray:
        h, w = self.image_size
        return _prototype(self.seed, _TRAIN_STREAM, int(cls), h, w, self.num_blobs)

    def __getitem__(self, index: int) -> tuple[np.ndarray, int]:
        index = int(index)
        if not 0 <= index < len(self):
            raise IndexError(f"SyntheticFaces index {index} out of range [0, {len(self)})")
        cls = index // self.samples_per_class
        rng = np.random.default_rng([self.seed, _TRAIN_STREAM, _SAMPLE_TAG, index])
        return render_sample(self.prototype(cls), rng, self.noise, self.hardness), cls


def make_verification_set(num_identities: int, num_pairs: int, image_size: SizeLike = 112, seed: int = 0,
                          num_blobs: int = 8, noise: float = 0.06, hardness: float = 1.0, quality: int = 95
                          ) -> tuple[list[bytes], list[bool]]:
    """Verification pairs over ``num_identities`` identities disjoint from training ones.

    Returns ``(bins, issame)``: ``bins`` = ``2 * num_pairs`` JPEG byte strings
    (pair ``k`` is ``bins[2k], bins[2k+1]``), ``issame`` = ``num_pairs`` bools,
    ``ceil(num_pairs/2)`` True and the rest False, in a seeded random order.
    Same-pairs are two different jitters of one identity; different-pairs use
    two distinct identities. Save with :func:`paddle_pfc.evaluation.bin_set.write_bin`.
    """
    if num_identities < 2:
        raise ValueError("make_verification_set needs num_identities >= 2")
    seed = _check_seed(seed)
    h, w = as_size(image_size)
    rng = np.random.default_rng([seed, _VERIF_STREAM, 7])
    n_same = (num_pairs + 1) // 2
    issame = np.array([True] * n_same + [False] * (num_pairs - n_same))
    rng.shuffle(issame)
    bins: list[bytes] = []
    for k, same in enumerate(issame.tolist()):
        a = int(rng.integers(num_identities))
        b = a if same else int((a + rng.integers(1, num_identities)) % num_identities)
        for j, cls in enumerate((a, b)):
            proto = _prototype(seed, _VERIF_STREAM, cls, h, w, int(num_blobs))
            srng = np.random.default_rng([seed, _VERIF_STREAM, _SAMPLE_TAG, 2 * k + j])
            bins.append(encode_jpeg(render_sample(proto, srng, noise, hardness), quality))
    return bins, [bool(s) for s in issame]


def write_synthetic_rec(folder: str, num_images: int, image_size: int = 112, seed: int = 0) -> dict:
    """``num_images`` synthetic faces (8 a class) as JPEGs in an insightface ``train.rec`` / ``.idx``
    pair under ``folder``: data with a real decode cost for the loader benchmarks. Returns
    :func:`~paddle_pfc.data.recordio.write_insightface_rec`'s summary."""
    faces = SyntheticFaces(num_classes=-(-num_images // 8), samples_per_class=8, image_size=image_size, seed=seed)
    return write_insightface_rec(folder, ((faces.label(i), encode_jpeg(faces[i][0])) for i in range(num_images)),
                                 num_classes=faces.num_classes)
