"""The RecordIO index at scale: the vectorized ``.idx`` read, lookups, the class count of a header-less
``.rec``, crafted headers and keys refused by name, and loader workers sharing the index."""
from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys

import cv2
import numpy as np
import pytest

from helpers.loader_batches import assert_workers_read_as_inline
from launcher import REPO
from paddle_pfc.bench import scale_rec
from paddle_pfc.data import (
    ImageFolderDataset,
    RecordDataset,
    rec_index,
    recordio,
)
from paddle_pfc.utils.errors import BudgetError, InputDataError


def _jpeg(value: int, size: int = 8) -> bytes:
    return cv2.imencode(".jpg", np.full((size, size, 3), value, np.uint8))[1].tobytes()


def _idx_by_lines(idx_path) -> tuple[list[int], list[int]]:
    """The reference read: each non-blank line split on whitespace into two integers."""
    keys, offsets = [], []
    for line in open(idx_path):
        if line.strip():
            key, offset = line.split()
            keys.append(int(key))
            offsets.append(int(offset))
    return keys, offsets


def _reference_items(rec_dir, keys) -> list[tuple[np.ndarray, int]]:
    """Each image record of ``keys`` read with the plain record reader and decoded with cv2."""
    offset_of = dict(zip(*_idx_by_lines(rec_dir / "train.idx")))
    data = (rec_dir / "train.rec").read_bytes()
    fd = os.open(rec_dir / "train.rec", os.O_RDONLY)
    try:
        items = []
        for key in keys:
            payload = recordio.read_record_at(fd, offset_of[key], len(data), "ref")[0]
            header, jpeg = recordio.unpack(payload)
            image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)[:, :, ::-1]
            items.append((image, int(recordio.header_class_label(header))))
        return items
    finally:
        os.close(fd)


@pytest.fixture(scope="module")
def im2rec_dir(small_folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("im2rec") / "rec"
    run = subprocess.run([sys.executable, "tools/im2rec.py", "--root", str(small_folder), "--output", str(out)],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return out


def test_idx_read_equals_the_line_by_line_read(im2rec_dir, tmp_path, monkeypatch):
    keys, offsets = rec_index.read_idx_file(str(im2rec_dir / "train.idx"))
    ref_keys, ref_offsets = _idx_by_lines(im2rec_dir / "train.idx")
    assert keys.dtype == offsets.dtype == np.int64
    assert keys.tolist() == ref_keys and offsets.tolist() == ref_offsets and len(ref_keys) == 21
    # blocks cut mid-line, some parsed by pandas and some (spaces, CRLF, blank lines) line by line
    lines = [f"{k}\t{o}" for k, o in zip(ref_keys, ref_offsets)]
    lines[3], lines[12] = lines[3].replace("\t", "   "), lines[12] + "\r"
    text = "\n".join(lines[:8]) + "\n\n" + "\n".join(lines[8:])  # no newline at the end
    (tmp_path / "mixed.idx").write_text(text, newline="")
    monkeypatch.setattr(rec_index, "_BLOCK_BYTES", 17)
    keys, offsets = rec_index.read_idx_file(str(tmp_path / "mixed.idx"))
    assert keys.tolist() == ref_keys and offsets.tolist() == ref_offsets


@pytest.mark.parametrize("line,problem", [
    ("123456789012345678901234567890\t0", "key 123456789012345678901234567890 is not an index key"),
    ("-3\t0", "key -3 is not an index key"),
    ("3\t-40", "offset -40 is not an index offset"),
    ("3\t4\t5", "malformed index line"),
    ("3\t0x10", "malformed index line"),
    ("3\t\u0664", "not ASCII"),
])
def test_crafted_idx_lines_refused_naming_the_line(tmp_path, line, problem):
    _write_rec(tmp_path, [0, 1, 1])
    idx = tmp_path / "train.idx"
    lines = idx.read_text().splitlines()
    idx.write_text("\n".join(lines[:2] + [line] + lines[2:]) + "\n", encoding="utf-8")
    with pytest.raises(InputDataError) as caught:
        RecordDataset(tmp_path)
    assert str(caught.value).startswith(f"{idx} (line 3): ") and problem in str(caught.value)


def test_offset_beyond_the_rec_refused_naming_the_line(tmp_path):
    _write_rec(tmp_path, [0, 1])
    idx = tmp_path / "train.idx"
    lines = idx.read_text().splitlines()
    size = (tmp_path / "train.rec").stat().st_size
    idx.write_text("\n".join(lines[:1] + ["", f"{lines[1].split()[0]}\t{size}"] + lines[2:]) + "\n")
    with pytest.raises(InputDataError, match=rf"train\.idx \(line 3\): key 2 points at offset {size} beyond the end"):
        RecordDataset(tmp_path)


def _write_rec(folder, labels, num_classes=None):
    items = [(label, _jpeg(10 * i + 5)) for i, label in enumerate(labels)]
    return recordio.write_insightface_rec(str(folder), items, num_classes=num_classes)


def _header_only_rec(folder, first_identity: float, end: float) -> None:
    with recordio.RecordIOWriter(str(folder / "train.rec"), str(folder / "train.idx")) as writer:
        writer.write_idx(0, recordio.pack(recordio.IRHeader(2, [first_identity, end], 0, 0), b""))


def test_header_announcing_more_than_the_idx_lists_is_refused_before_allocating(tmp_path):
    assert (tmp_path / "train.rec").exists() is False
    _header_only_rec(tmp_path, 2.0 ** 31, 2.0 ** 31 + 5)  # a 40-byte .rec announcing 2^31 - 1 images
    assert (tmp_path / "train.rec").stat().st_size == 40
    with pytest.raises(BudgetError) as caught:
        RecordDataset(tmp_path)
    error = caught.value
    assert (error.declared, error.limit) == (2 ** 31 - 1, 1)
    assert str(error).startswith(f"{tmp_path / 'train.rec'} (record 0): the number of images")
    assert "train.idx" in str(error)
    _header_only_rec(tmp_path, 2.0, 2.0 ** 24)  # one image (missing) and 2^24 - 2 identities
    with pytest.raises(BudgetError, match=r"number of identities .* is 16,777,214, over the limit of 1"):
        RecordDataset(tmp_path)


def test_header_less_rec_class_count(tmp_path):
    """Labels read by the vectorized pass, and records it leaves to the one-record reader: one split
    in parts (its payload holds the magic word) and one short record at the end of the file."""
    magic = struct.pack("<I", recordio.MAGIC)
    labels = [3, 0, 7, 2, 5, 1]
    with recordio.RecordIOWriter(str(tmp_path / "train.rec"), str(tmp_path / "train.idx")) as writer:
        for key, label in enumerate(labels[:-1]):
            payload = _jpeg(20 * key) + (magic * 3 if key == 2 else b"")
            writer.write_idx(key, recordio.pack(recordio.IRHeader(0, float(label), key, 0), payload))
        writer.write_idx(5, recordio.pack(recordio.IRHeader(0, 1.0, 5, 0), b""))
    dataset = RecordDataset(tmp_path, image_size=None)
    assert dataset.header is None and dataset.num_classes == 8 and len(dataset) == 6
    assert dataset._keys is None and dataset._index.in_order  # keys 0..5 in order: no key array
    assert [dataset.read_label(i) for i in range(6)] == labels
    # a label that is no class in a record the pass reads: the record is named
    with recordio.RecordIOWriter(str(tmp_path / "train.rec"), str(tmp_path / "train.idx")) as writer:
        for key, label in enumerate([0.0, 2.5, 1.0]):
            writer.write_idx(key, recordio.pack(recordio.IRHeader(0, label, key, 0), _jpeg(key)))
    with pytest.raises(ValueError, match=r"train\.rec: record 1 \(offset \d+\): label 2\.5 is not a non-negative"):
        RecordDataset(tmp_path)


def test_sparse_keys_are_looked_up_through_sorted_keys(tmp_path):
    keys = [10 ** 12, 5, 10 ** 9]
    with recordio.RecordIOWriter(str(tmp_path / "train.rec"), str(tmp_path / "train.idx")) as writer:
        offsets = [writer.write_idx(key, recordio.pack(recordio.IRHeader(0, float(i), key, 0), _jpeg(40 * i)))
                   for i, key in enumerate(keys)]
    dataset = RecordDataset(tmp_path, image_size=None)
    assert dataset._index._dense is None and dataset.keys.tolist() == keys and dataset.num_classes == 3
    assert [dataset.offset_of(k) for k in keys] == offsets and dataset.offset_of(6) is None
    assert dataset._index.offsets_of(np.array([5, 7, 10 ** 12])).tolist() == [offsets[1], -1, offsets[0]]
    assert [dataset[i][1] for i in range(3)] == [0, 1, 2]


def test_dataset_returns_what_the_records_hold(im2rec_dir, small_folder):
    """Everything the dataset gives, against the records read one by one and the image folder they
    were written from."""
    dataset = RecordDataset(im2rec_dir, image_size=None)
    folder = ImageFolderDataset(small_folder, image_size=None)
    assert len(dataset) == 10 and dataset.num_classes == dataset.header_num_classes == 10
    assert dataset.keys.tolist() == list(range(1, 11)) and dataset.header.label.tolist() == [11.0, 21.0]
    reference = _reference_items(im2rec_dir, range(1, 11))
    for i, (ref_image, ref_label) in enumerate(reference):
        image, label = dataset[i]
        np.testing.assert_array_equal(image, ref_image)
        assert label == ref_label == dataset.read_label(i) == folder[i][1]
    restored = pickle.loads(pickle.dumps(dataset))
    np.testing.assert_array_equal(restored[4][0], reference[4][0])


def test_loader_workers_read_the_images_of_the_main_process(tmp_path):
    _write_rec(tmp_path, [i // 3 for i in range(24)])
    assert_workers_read_as_inline(RecordDataset(tmp_path, image_size=8), 8, batches=6)


@pytest.mark.parametrize("layout", ["sparse", "packed"])
def test_scale_files_read_as_written(tmp_path, layout):
    jpeg = _jpeg(90, size=16)
    image_keys = np.array([0, 17, 99])
    if layout == "sparse":
        files = scale_rec.write_sparse_rec(str(tmp_path), 100, 7, image_keys + 1, jpeg, stride=1024)
        assert files["rec_bytes"] == 100 * 1024 + 40 + 7 * 40
    else:
        files = scale_rec.write_packed_rec(str(tmp_path), 100, 7, image_keys, jpeg)
    dataset = RecordDataset(tmp_path, image_size=None)
    ends = scale_rec.class_ends(100, 7)
    assert ends.tolist() == [15, 30, 44, 58, 72, 86, 100]
    assert len(dataset) == 100 and dataset.num_classes == 7
    assert [dataset[i][1] for i in image_keys] == np.searchsorted(ends, image_keys, side="right").tolist()
    assert dataset[17][0].shape == (16, 16, 3)
    keys, offsets = rec_index.read_idx_file(files["idx"])
    assert keys.tolist() == _idx_by_lines(files["idx"])[0] and (np.diff(offsets) > 0).all()  # a writer's order


def test_label_file_with_a_nul_byte_refused_naming_the_line(small_folder, tmp_path):
    import shutil

    root = tmp_path / "f"
    shutil.copytree(small_folder, root)
    lines = (root / "label.txt").read_bytes().splitlines()
    lines[6] = lines[6].replace(b".jpg", b".jpg\0.png")
    (root / "label.txt").write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(InputDataError, match=r"label\.txt \(line 7\): a NUL byte"):
        ImageFolderDataset(root)


def test_keys_of_a_header_layout_without_an_array(tmp_path):
    _write_rec(tmp_path, [0, 1, 1, 2])
    dataset = RecordDataset(tmp_path, image_size=None)
    assert dataset._keys is None and dataset.keys.tolist() == [1, 2, 3, 4]
    assert [dataset.key_of(i) for i in (0, 3, -1, -4)] == [1, 4, 4, 1]
    for outside in (4, -5):
        with pytest.raises(IndexError):
            dataset[outside]
    assert [label for _, label in dataset] == [0, 1, 1, 2]  # iteration stops at the end


def test_keys_in_order_with_an_offset_listed_twice(tmp_path):
    with recordio.RecordIOWriter(str(tmp_path / "train.rec"), str(tmp_path / "train.idx")) as writer:
        offsets = [writer.write_idx(key, recordio.pack(recordio.IRHeader(0, 0.0, key, 0), _jpeg(key)))
                   for key in range(3)]
    (tmp_path / "train.idx").write_text(f"0\t{offsets[2]}\n1\t{offsets[1]}\n2\t{offsets[2]}\n")
    with pytest.raises(InputDataError,
                       match=rf"offset {offsets[2]} appears in index entries 1 and 3 \(lines 1 and 3\)"):
        RecordDataset(tmp_path)
    (tmp_path / "train.idx").write_text(f"0\t{offsets[2]}\n1\t{offsets[1]}\n2\t{offsets[0]}\n")
    dataset = RecordDataset(tmp_path, image_size=None)  # records in another order than their keys
    assert dataset._index.in_order and [dataset.offset_of(k) for k in range(3)] == offsets[::-1]


def test_read_labels_equals_each_records_label(tmp_path):
    """RecordDataset.read_labels (the vectorized pass center initialisation uses) gives every
    sample's label as read_label does, record by record."""
    from paddle_pfc.data.recordio import write_insightface_rec

    labels = np.random.default_rng(0).integers(0, 7, 40).tolist()
    write_insightface_rec(str(tmp_path), [(label, _jpeg(10 * label)) for label in labels], num_classes=7)
    dataset = RecordDataset(str(tmp_path), image_size=(8, 8))
    got = dataset.read_labels()
    assert got.dtype == np.int64 and got.tolist() == [dataset.read_label(i) for i in range(len(dataset))]
    assert got.tolist() == sorted(labels)
