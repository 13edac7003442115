"""The one policy for real photos (grey, not square, resized) and the landmarks file."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from paddle_pfc.data._image import fit_size, pad_to_aspect
from paddle_pfc.data.photos import Conversions, describe, is_grey, read_landmarks
from paddle_pfc.utils.errors import InputDataError


def test_a_tall_image_is_padded_with_its_border_columns_then_resized():
    img = np.arange(112 * 92 * 3, dtype=np.int64).reshape(112, 92, 3).astype(np.uint8)  # ORL's 92x112 (WxH)
    square = pad_to_aspect(img, (112, 112))
    assert square.shape == (112, 112, 3)
    np.testing.assert_array_equal(square[:, 10:102], img)
    np.testing.assert_array_equal(square[:, :10], np.repeat(img[:, :1], 10, axis=1))
    np.testing.assert_array_equal(square[:, 102:], np.repeat(img[:, -1:], 10, axis=1))
    np.testing.assert_array_equal(fit_size(img, (112, 112), "pad"), square)
    wide = np.zeros((40, 60, 3), np.uint8)
    wide[0], wide[-1] = 7, 9
    out = fit_size(wide, (30, 30), "pad")  # 60x40 -> 60x60 (10 rows of each border) -> 30x30
    np.testing.assert_array_equal(out, cv2.resize(pad_to_aspect(wide, (1, 1)), (30, 30), interpolation=cv2.INTER_AREA))
    assert pad_to_aspect(wide, (1, 1))[:11].max() == 7 and pad_to_aspect(wide, (1, 1))[-11:].min() == 9


def test_conversions_count_and_say_it_in_one_line():
    seen = Conversions("pad")
    grey = np.full((112, 92, 3), 80, np.uint8)
    colour = np.zeros((112, 112, 3), np.uint8)
    colour[..., 0] = 1
    for name, img in (("a.pgm", grey), ("b.jpg", colour), ("c.pgm", grey)):
        seen.fit(img, (112, 112), name)
    assert (seen.grey, seen.squared, seen.resized) == (2, 2, 0)
    line = seen.line((112, 112))
    assert line.startswith("images: 2 grey (first: a.pgm), 2 not square (first: a.pgm 92x112); policy: grey -> 3 "
                           "equal channels, non-square -> padded with its border to square, then resized")
    assert Conversions().line() is None
    aligned = Conversions()  # grey crops at the input size (paddle-pfc-align's): no word of alignment
    aligned.fit(np.full((112, 112, 3), 80, np.uint8), (112, 112), "s1/1.jpg")
    assert aligned.line((112, 112)) == "images: 1 grey (first: s1/1.jpg); policy: grey -> 3 equal channels"
    assert describe(grey, (112, 112), "pad") == "grey, 92x112 (width x height): padded with its border to square"
    assert describe(np.zeros((250, 250, 3), np.uint8), (112, 112)).endswith(": resized to 112x112")
    assert describe(colour, (112, 112)) is None
    assert is_grey(np.zeros((4, 4), np.uint8)) and not is_grey(colour)


def test_landmarks_file(tmp_path):
    (tmp_path / "faces").mkdir()
    text = "# image x1 y1 ... x5 y5\n\nfaces/a b.jpg 1 2 3 4 5 6 7 8 9 10\n" + f"{tmp_path}/c.jpg " + "0 " * 10 + "\n"
    (tmp_path / "points.txt").write_text(text)
    points = read_landmarks(tmp_path / "points.txt")
    np.testing.assert_array_equal(points[str(tmp_path / "faces" / "a b.jpg")], np.arange(1, 11).reshape(5, 2))
    assert set(points) == {str(tmp_path / "faces" / "a b.jpg"), str(tmp_path / "c.jpg")}
    for bad, message in (("a.jpg 1 2 3\n", r"points\.txt \(line 1\): expected an image path and 10 numbers"),
                         ("a.jpg 1 2 3 4 5 6 7 8 9 x\n", r"\(line 1\): a landmark is not a number"),
                         ("a.jpg 1 2 3 4 5 6 7 8 9 nan\n", r"\(line 1\): a landmark is not finite"),
                         ("a.jpg " + "1 " * 10 + "\n./a.jpg " + "2 " * 10 + "\n",
                          r"\(line 2\): .*a\.jpg is given twice")):
        (tmp_path / "points.txt").write_text(bad)
        with pytest.raises(InputDataError, match=message):
            read_landmarks(tmp_path / "points.txt")


def test_the_alignment_hint_is_for_non_square_images_only():
    """Crops of paddle-pfc-align are square: resized (or grey) they get no alignment hint; a
    non-square image does."""
    from paddle_pfc.data.photos import ALIGN_HINT, Conversions, policy

    aligned = Conversions("pad")
    grey_crop = np.repeat(np.full((112, 112, 1), 90, np.uint8), 3, axis=2)
    assert aligned.fit(grey_crop, (32, 32), "crop.jpg").shape[:2] == (32, 32)
    line = aligned.line((32, 32))
    assert line.startswith("images: 1 grey (first: crop.jpg), 1 resized to 32x32 (first: crop.jpg 112x112); ")
    assert ALIGN_HINT not in line
    assert line.endswith("non-square -> padded with its border to square, then resized (non_square: pad)")
    photo = Conversions()
    photo.fit(np.zeros((112, 92, 3), np.uint8), (112, 112), "photo.jpg")
    assert photo.line((112, 112)).endswith(ALIGN_HINT)
    assert policy(False, False) == "grey -> 3 equal channels"


def _tall() -> np.ndarray:
    """An 8x4 (HxW) RGB image of distinct pixels whose row pairs (0, 1), (2, 3), ... sum to even
    values: a 2x shrink of its rows is their exact mean."""
    base = np.arange(4 * 4 * 3, dtype=np.int64).reshape(4, 4, 3) * 4
    return np.stack([base, base + 2], axis=1).reshape(8, 4, 3).astype(np.uint8)


@pytest.mark.parametrize("image", [_tall(), _tall().transpose(1, 0, 2).copy()], ids=["tall", "wide"])
def test_each_non_square_policy_against_numpy(image):
    tall = image.shape[0] > image.shape[1]
    axis = 1 if tall else 0  # the short direction
    widths = [(0, 0), (0, 0), (0, 0)]
    widths[axis] = (2, 2)
    np.testing.assert_array_equal(fit_size(image, (8, 8), "pad"), np.pad(image, widths, mode="edge"))
    np.testing.assert_array_equal(fit_size(image, (4, 4), "crop"), image[2:6] if tall else image[:, 2:6])
    pairs = (image[0::2], image[1::2]) if tall else (image[:, 0::2], image[:, 1::2])
    mean = ((pairs[0].astype(np.int64) + pairs[1]) // 2).astype(np.uint8)
    np.testing.assert_array_equal(fit_size(image, (4, 4), "stretch"), mean)


def test_an_odd_difference_puts_the_extra_pixel_at_the_end():
    image = np.arange(7 * 4, dtype=np.uint8).reshape(7, 4, 1)
    np.testing.assert_array_equal(fit_size(image, (7, 7), "pad"), np.pad(image, [(0, 0), (1, 2), (0, 0)], mode="edge"))
    np.testing.assert_array_equal(fit_size(image, (4, 4), "crop"), image[1:5])


@pytest.mark.parametrize("size", [(64, 64), (32, 32), (100, 100)])
def test_a_square_image_is_the_same_under_each_policy(size):
    rng = np.random.default_rng(0)
    square = rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)
    padded = fit_size(square, size, "pad")
    for non_square in ("crop", "stretch"):
        out = fit_size(square, size, non_square)
        assert out.dtype == padded.dtype and out.tobytes() == padded.tobytes()
    if size == (64, 64):
        assert padded is square


def test_the_line_names_the_policy_applied():
    photo = np.zeros((112, 92, 3), np.uint8)
    words = {"pad": "padded with its border to square", "crop": "centre-cropped to square",
             "stretch": "stretched to square (aspect ratio not kept)"}
    for non_square, said in words.items():
        seen = Conversions(non_square)
        assert seen.fit(photo, (32, 32), "s1/1.pgm").shape == (32, 32, 3)
        assert f"non-square -> {said}, then resized (non_square: {non_square})" in seen.line((32, 32))
        assert describe(photo, (32, 32), non_square) == f"grey, 92x112 (width x height): {said}, resized to 32x32"
    assert describe(photo, (92, 92), "crop") == "grey, 92x112 (width x height): centre-cropped to square"


def test_an_unknown_policy_is_refused_by_name():
    with pytest.raises(ValueError, match=r"non_square must be one of pad, crop, stretch; got 'squash'"):
        fit_size(np.zeros((8, 4, 3), np.uint8), (4, 4), "squash")
    with pytest.raises(ValueError, match="non_square must be one of"):
        Conversions("squash")
