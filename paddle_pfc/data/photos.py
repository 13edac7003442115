"""Real photos as model input: one policy for every command, said once.

Every command that reads images (``paddle-pfc-im2rec``, training, ``paddle-pfc-validate``,
``paddle-pfc-infer``) turns an image into the model's input the same way:

* grey (one channel, or three equal ones) -> three equal RGB channels;
* not the model's aspect ratio (square) -> made square by the policy ``non_square``
  (:data:`~paddle_pfc.data.shape_policy.NON_SQUARE`, :func:`paddle_pfc.data._image.to_aspect`):
  ``pad`` (both sides of its short direction padded with copies of its border row / column,
  centred: the face keeps its shape), ``crop`` (its centre square) or ``stretch`` (no change
  here: the resize changes the aspect ratio; the default,
  :data:`~paddle_pfc.data.shape_policy.DEFAULT_NON_SQUARE`); a square image is the same under each;
* then resized to the input size.

A plain resize is no face alignment: the models expect crops aligned on five landmarks
(:mod:`paddle_pfc.evaluation.face_align`); ``--landmarks FILE`` (:func:`read_landmarks`) or a
face detector (``paddle-pfc-align``) gives them. :class:`Conversions` counts what a command
converted and gives the one line it prints (sizes as width x height).

Landmarks file: one line per image, ``PATH x1 y1 x2 y2 x3 y3 x4 y4 x5 y5`` (left eye, right
eye, nose tip, left and right mouth corners, pixels), fields separated by white space (the path
may hold spaces: the last ten fields are the numbers); a relative PATH is relative to the
file's folder; empty lines and lines starting with ``#`` are skipped.
"""
from __future__ import annotations

import math
import os

import numpy as np

from paddle_pfc.data._image import fit_size, to_aspect
from paddle_pfc.data.shape_policy import DEFAULT_NON_SQUARE, checked_non_square
from paddle_pfc.utils.errors import InputDataError

__all__ = ["Conversions", "is_grey", "is_square", "describe", "policy", "read_landmarks", "square_words"]

#: what the policy does to a grey image (all it says of images that need no squaring or resize)
GREY_POLICY = "grey -> 3 equal channels"
#: how each ``non_square`` policy makes an image square, as the commands say it
SQUARE_WORDS = {"pad": "padded with its border to square",
                "crop": "centre-cropped to square",
                "stretch": "stretched to square (aspect ratio not kept)"}
#: said of non-square images only: the crops of paddle-pfc-align (and any aligned crop) are square,
#: and a square aligned crop resized stays aligned
ALIGN_HINT = "a resize is no alignment: give aligned crops (--landmarks FILE, or paddle-pfc-align with a face detector)"


def square_words(non_square: str = DEFAULT_NON_SQUARE) -> str:
    """How the policy ``non_square`` makes an image square (``padded with its border to square``)."""
    return SQUARE_WORDS[checked_non_square(non_square)]


def policy(squared: bool, resized: bool, non_square: str = DEFAULT_NON_SQUARE) -> str:
    """The policy's words for images that were ``squared`` (not square) and/or ``resized``: the
    ``non_square`` policy and the alignment hint for non-square images only (aligned crops are
    square)."""
    resize = f"{GREY_POLICY}, non-square -> {square_words(non_square)}, then resized (non_square: {non_square})"
    if squared:
        return f"{resize}; {ALIGN_HINT}"
    return resize if resized else GREY_POLICY


def is_grey(img: np.ndarray) -> bool:
    """True for a one-channel image or one whose three channels are equal."""
    if img.ndim == 2 or img.shape[2] == 1:
        return True
    return bool(np.array_equal(img[:, :, 0], img[:, :, 1]) and np.array_equal(img[:, :, 1], img[:, :, 2]))


def is_square(img: np.ndarray) -> bool:
    """True for an image as high as wide (every aligned crop)."""
    return img.shape[0] == img.shape[1]


def _squares(img: np.ndarray, size: tuple[int, int]) -> bool:
    """True when ``img`` does not have the aspect ratio of ``size=(H, W)``."""
    return img.shape[0] * size[1] != img.shape[1] * size[0]


def describe(img: np.ndarray, size: tuple[int, int], non_square: str = DEFAULT_NON_SQUARE) -> str | None:
    """What the policy does to ``img`` at ``size=(H, W)`` (``grey, 92x112 (width x height):
    padded with its border to square, resized to 112x112``), or None when it is used as it is."""
    h, w = img.shape[:2]
    facts = ["grey"] if is_grey(img) else []
    if (h, w) != tuple(size):
        squared = to_aspect(img[:, :, :1] if img.ndim == 3 else img, size, non_square).shape[:2]
        steps = ([square_words(non_square)] if _squares(img, size) else []) + \
            ([f"resized to {size[1]}x{size[0]}"] if squared != tuple(size) else [])
        facts.append(f"{w}x{h} (width x height): {', '.join(steps)}")
    return ", ".join(facts) or None


class Conversions:
    """Counts the images a command converted by the policy ``non_square`` (see the module doc)
    and gives its one line."""

    def __init__(self, non_square: str = DEFAULT_NON_SQUARE) -> None:
        self.non_square = checked_non_square(non_square)
        self.grey = self.squared = self.resized = 0
        self.first: dict[str, str] = {}

    def fit(self, img: np.ndarray, size: tuple[int, int] | None, name: str = "") -> np.ndarray:
        """``img`` (RGB HWC uint8) converted to ``size=(H, W)`` by the policy, counted."""
        if is_grey(img):
            self.grey += 1
            self.first.setdefault("grey", name)
        if size is None or img.shape[:2] == tuple(size):
            return img
        h, w = img.shape[:2]
        if _squares(img, size):
            self.squared += 1
            self.first.setdefault("squared", f"{name} {w}x{h}".strip())
        square = to_aspect(img, size, self.non_square)
        if square.shape[:2] != tuple(size):
            self.resized += 1
            self.first.setdefault("resized", f"{name} {w}x{h}".strip())
        return fit_size(square, size, self.non_square)

    def add(self, other: Conversions) -> None:
        """Fold the counts of ``other`` (e.g. a worker's) into these."""
        self.grey += other.grey
        self.squared += other.squared
        self.resized += other.resized
        for key, value in other.first.items():
            self.first.setdefault(key, value)

    def line(self, size: tuple[int, int] | None = None) -> str | None:
        """``images: 400 grey (first: a.pgm), 400 not square (first: a.pgm 92x112), ...`` with the
        policy (of grey images alone: their conversion, no word of alignment), or None when nothing
        was converted."""
        parts = []
        if self.grey:
            parts.append(f"{self.grey:,} grey (first: {self.first['grey']})")
        if self.squared:
            parts.append(f"{self.squared:,} not square (first: {self.first['squared']})")
        if self.resized:
            at = f" to {size[1]}x{size[0]}" if size else ""
            parts.append(f"{self.resized:,} resized{at} (first: {self.first['resized']})")
        if not parts:
            return None
        return f"images: {', '.join(parts)}; policy: {policy(bool(self.squared), bool(self.resized), self.non_square)}"


def _landmark_line(line: str, lineno: int, path: str, folder: str) -> tuple[str, np.ndarray] | None:
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    fields = text.split()
    if len(fields) < 11:
        raise InputDataError(path, f"expected an image path and 10 numbers, got {len(fields)} fields",
                             entry=f"line {lineno}")
    try:
        values = [float(v) for v in fields[-10:]]
    except ValueError as e:
        raise InputDataError(path, f"a landmark is not a number ({e})", entry=f"line {lineno}") from e
    if not all(math.isfinite(v) for v in values):
        raise InputDataError(path, "a landmark is not finite", entry=f"line {lineno}")
    image = " ".join(fields[:-10])
    image = image if os.path.isabs(image) else os.path.join(folder, image)
    return os.path.realpath(image), np.asarray(values, np.float64).reshape(5, 2)


def read_landmarks(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """``{real path of the image: [5, 2] points}`` of a landmarks file (module doc);
    :class:`InputDataError` naming the file and line for a line that is not one, or an image
    given twice."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InputDataError(path, f"cannot read the landmarks file ({e})") from e
    folder = os.path.dirname(os.path.abspath(path))
    points: dict[str, np.ndarray] = {}
    for lineno, line in enumerate(lines, 1):
        parsed = _landmark_line(line, lineno, path, folder)
        if parsed is None:
            continue
        if parsed[0] in points:
            raise InputDataError(path, f"{parsed[0]} is given twice", entry=f"line {lineno}")
        points[parsed[0]] = parsed[1]
    return points
