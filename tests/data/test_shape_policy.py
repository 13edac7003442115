"""data.non_square leaves square data alone: aligned crops and insightface-layout data (.rec,
.bin, folders of square images) give the same bytes in and the same tensor out under each policy."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from paddle_pfc.data._image import decode_rgb, normalize_nchw
from paddle_pfc.data.image_folder import ImageFolderDataset
from paddle_pfc.data.recordio import RecordDataset, write_insightface_rec
from paddle_pfc.data.shape_policy import NON_SQUARE
from paddle_pfc.evaluation.bin_set import load_bin, write_bin
from paddle_pfc.evaluation.validation import load_bin_part


def _crops(count: int = 4, side: int = 112) -> list[bytes]:
    """JPEG bytes of square crops (as paddle-pfc-align writes them)."""
    rng = np.random.default_rng(3)
    out = []
    for _ in range(count):
        img = cv2.GaussianBlur(rng.integers(0, 256, (side, side, 3), dtype=np.uint8), (7, 7), 0)
        out.append(cv2.imencode(".jpg", img)[1].tobytes())
    return out


@pytest.mark.parametrize("size", [112, 64])
def test_rec_and_folder_images_are_the_same_under_each_policy(tmp_path, size):
    crops = _crops()
    write_insightface_rec(str(tmp_path / "rec"), [(i // 2, data) for i, data in enumerate(crops)])
    (tmp_path / "folder").mkdir()
    for i, data in enumerate(crops):
        (tmp_path / "folder" / f"{i}.jpg").write_bytes(data)
    (tmp_path / "folder" / "label.txt").write_text("".join(f"{i}.jpg\t{i // 2}\n" for i in range(len(crops))))
    decoded = [decode_rgb(data, "crop") for data in crops]
    for make in (lambda p: RecordDataset(str(tmp_path / "rec"), image_size=size, non_square=p),
                 lambda p: ImageFolderDataset(str(tmp_path / "folder"), image_size=size, non_square=p)):
        images = {p: [make(p)[i][0] for i in range(len(crops))] for p in NON_SQUARE}
        for p in NON_SQUARE:
            assert [a.tobytes() for a in images[p]] == [a.tobytes() for a in images["pad"]], p
        if size == 112:  # at the input size: the decoded bytes themselves
            assert [a.tobytes() for a in images["pad"]] == [a.tobytes() for a in decoded]


@pytest.mark.parametrize("size", [112, 64])
def test_bin_pairs_are_the_same_tensor_under_each_policy(tmp_path, size):
    crops = _crops()
    write_bin(str(tmp_path / "pairs.bin"), crops, [True, False])
    sets = {p: load_bin(str(tmp_path / "pairs.bin"), size, flip=False, non_square=p).images for p in NON_SQUARE}
    parts = {p: load_bin_part(tmp_path / "pairs.bin", size, non_square=p)[0] for p in NON_SQUARE}
    for p in NON_SQUARE:
        assert sets[p].tobytes() == sets["pad"].tobytes() and parts[p].tobytes() == sets["pad"].tobytes(), p
    if size == 112:
        expected = normalize_nchw(np.stack([decode_rgb(data, "crop") for data in crops]))
        assert sets["pad"].tobytes() == expected.tobytes()
