"""The data-format table (paddle_pfc.data.formats) and the Dataset protocol: every row opens a real
tiny dataset written here, each dataset satisfies the protocol, and the table's texts are the ones
the config, the preflight and the loader report."""
from __future__ import annotations

import inspect
from pathlib import Path

import cv2
import numpy as np
import pytest

from paddle_pfc.data.dataset import Dataset
from paddle_pfc.data.formats import FORMAT_NAMES, FORMATS, UnknownFormatError, data_format
from paddle_pfc.data.image_folder import ImageFolderDataset
from paddle_pfc.data.loader import build_dataset
from paddle_pfc.data.recordio import RecordDataset, write_insightface_rec
from paddle_pfc.data.synthetic import SyntheticFaces
from paddle_pfc.engine.config import SCHEMA, ConfigError, load_config

LABELS = [0, 0, 1, 2, 2, 2]  # six images of three identities


def _images() -> list[np.ndarray]:
    """Six RGB images, 20 high and 24 wide (not square), stored losslessly (PNG) below."""
    rng = np.random.default_rng(4)
    return [rng.integers(0, 256, (20, 24, 3), dtype=np.uint8) for _ in LABELS]


def _png(rgb: np.ndarray) -> bytes:
    return cv2.imencode(".png", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))[1].tobytes()


def _folder(root: Path) -> dict:
    lines = []
    for i, (image, label) in enumerate(zip(_images(), LABELS)):
        (root / f"id{label}").mkdir(parents=True, exist_ok=True)
        (root / f"id{label}" / f"{i}.png").write_bytes(_png(image))
        lines.append(f"id{label}/{i}.png\t{label}")
    (root / "faces.txt").write_text("\n".join(lines) + "\n")
    return {"root": str(root), "num_classes": None, "label_file": "faces.txt", "non_square": "crop"}


def _rec(root: Path) -> dict:
    write_insightface_rec(str(root), [(label, _png(image)) for image, label in zip(_images(), LABELS)])
    return {"root": str(root), "num_classes": None, "non_square": "crop"}


def _synthetic(root: Path) -> dict:
    return {"root": None, "num_classes": 3, "samples_per_class": 2, "seed": 5}


#: How each row's files are made here; a row without a maker fails test_every_row_has_a_maker.
MAKERS = {"folder": _folder, "rec": _rec, "synthetic": _synthetic}


def test_every_row_has_a_maker():
    assert set(MAKERS) == set(FORMAT_NAMES)


@pytest.mark.parametrize("name", FORMAT_NAMES)
def test_each_row_opens_a_real_dataset(name, tmp_path):
    row = data_format(name)
    data = MAKERS[name](tmp_path / name)
    dataset = row.open(data, image_size=None if row.under_root else (20, 24))
    assert isinstance(dataset, Dataset)
    labels = [0, 0, 1, 1, 2, 2] if name == "synthetic" else LABELS  # synthetic: sample i is identity i // 2
    assert len(dataset) == 6 and dataset.num_classes == 3 and dataset.num_skipped == 0
    read = dataset.read_labels()
    assert read.dtype == np.int64 and read.tolist() == labels
    for i in range(6):
        image, label = dataset[i]
        assert label == labels[i] and image.dtype == np.uint8 and image.shape == (20, 24, 3)
        if row.under_root:  # stored losslessly, read at their own size: the very pixels written
            np.testing.assert_array_equal(image, _images()[i])
    if row.under_root:
        assert dataset.non_square == "crop"
        dataset.image_size = (16, 16)  # the crop policy: the centre 20x20, then resized
        expected = cv2.resize(_images()[0][:, 2:22], (16, 16), interpolation=cv2.INTER_AREA)
        np.testing.assert_array_equal(dataset[0][0], expected)


def test_the_rows_open_through_build_dataset_and_their_aliases(tmp_path):
    rec = _rec(tmp_path / "rec")
    for alias in ("rec", "RecordIO", "mxnet"):
        assert isinstance(build_dataset(alias, rec["root"], image_size=None), RecordDataset)
    folder = _folder(tmp_path / "folder")
    dataset = build_dataset("image_folder", folder["root"], 3, None, label_file="faces.txt")
    assert isinstance(dataset, ImageFolderDataset) and dataset.read_labels().tolist() == LABELS
    with pytest.raises(ValueError, match="rec dataset needs root"):
        build_dataset("rec")
    with pytest.raises(ValueError, match="synthetic dataset needs num_classes"):
        build_dataset("synthetic", image_size=8)


def test_an_unknown_kind_lists_the_names():
    with pytest.raises(UnknownFormatError) as caught:
        data_format("lmdb")
    assert str(caught.value) == ("unknown dataset kind 'lmdb' (expected 'synthetic', 'folder' or 'rec'; "
                                 "aliases: 'image_folder', 'recordio', 'mxnet')")
    with pytest.raises(ConfigError, match=r"data\.kind: must be one of synthetic, folder, rec; got 'lmdb'"):
        load_config(None, ["data.kind=lmdb", "data.num_classes=4"])


def test_the_protocol_refuses_what_lacks_a_member(tmp_path):
    class NoLabels:  # len, items and counts, but no read_labels
        image_size, non_square, num_classes, num_skipped = None, "pad", 2, 0

        def __len__(self):
            return 1

        def __getitem__(self, index):
            return np.zeros((2, 2, 3), np.uint8), 0

    assert not isinstance(NoLabels(), Dataset)
    for dataset in (SyntheticFaces(2, 1, 8), RecordDataset(_rec(tmp_path / "r")["root"]),
                    ImageFolderDataset(_folder(tmp_path / "f")["root"], "faces.txt")):
        assert isinstance(dataset, Dataset)


@pytest.mark.parametrize("row", FORMATS, ids=FORMAT_NAMES)
def test_a_row_names_config_keys_its_class_takes(row):
    """The settings are data.* keys, and the class takes each by name with root / num_classes /
    image_size: what DataFormat.open passes."""
    assert set(row.settings) <= set(SCHEMA["data"])
    parameters = inspect.signature(row.dataset_class()).parameters
    assert {"num_classes", "image_size", *row.settings} <= set(parameters)
    assert ("root" in parameters) == row.under_root


def test_missing_input_names_the_file_and_what_makes_it(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    folder = data_format("folder")
    settings = {"root": str(empty), "label_file": "train_label.txt"}
    assert folder.missing_input(settings) == (
        f"data.label_file {empty / 'train_label.txt'}: not found. python tools/pairs.py --root YOUR_IMAGE_FOLDER "
        "writes train_label.txt (the identities it does not hold out for validation); -o data.label_file=label.txt "
        "trains on every identity")
    assert data_format("rec").missing_input({"root": str(empty)}) == (
        f"data.root {empty}: no train.rec. python tools/im2rec.py --root YOUR_IMAGE_FOLDER --label-file "
        f"train_label.txt --output {empty} writes it (docs/your_own_data.md)")
    assert data_format("rec").missing_input({"root": str(tmp_path / "nowhere")}) == \
        f"data.root {tmp_path / 'nowhere'}: no such folder"
    assert folder.missing_input(_folder(tmp_path / "f")) is None
    assert data_format("rec").missing_input(_rec(tmp_path / "r")) is None
    assert data_format("synthetic").missing_input({"root": str(tmp_path / "nowhere")}) is None


@pytest.mark.parametrize("overrides, error", [
    (["data.kind=rec"], "data.root: required when data.kind is 'rec'"),
    (["data.kind=folder", "data.root=/d", "validation.synthetic_pairs=10"],
     "validation.synthetic_pairs: only supported with data.kind 'synthetic' (data.kind='folder'); set it to 0"),
])
def test_the_config_checks_read_the_table(overrides, error):
    with pytest.raises(ConfigError) as caught:
        load_config(None, [*overrides, "data.num_classes=4"])
    assert error in str(caught.value)
