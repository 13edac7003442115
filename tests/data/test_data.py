"""Tests for paddle_pfc.data (pure numpy / cv2; no Paddle)."""
from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import struct
import subprocess
import sys
import time
import warnings
from pathlib import Path

import cv2
import numpy as np
import pytest

from launcher import REPO
from paddle_pfc.data import (
    BatchLoader,
    DistributedBatchSampler,
    ImageFolderDataset,
    RecordDataset,
    SyntheticFaces,
    build_dataset,
    flip_mask,
    make_verification_set,
    recordio,
    write_insightface_rec,
)
from paddle_pfc.data.synthetic import _prototype
from paddle_pfc.evaluation.bin_set import load_bin, read_bin, write_bin


def _copy_folder(src: Path, dst: Path) -> Path:
    import shutil
    shutil.copytree(src, dst)
    return dst


# ----------------------------------------------------------------------------- image folder
def test_image_folder_small_dataset(small_folder):
    ds = ImageFolderDataset(small_folder)
    assert len(ds) == 10 and ds.num_classes == 10 and ds.num_skipped == 0
    assert ds.labels.tolist() == list(range(10))
    for i in range(10):
        img, lab = ds[i]
        assert img.shape == (112, 112, 3) and img.dtype == np.uint8 and lab == i
    ref = cv2.imread(str(small_folder / "images/00000001.jpg"))[:, :, ::-1]
    np.testing.assert_array_equal(ds[0][0], ref)  # RGB order
    small = ImageFolderDataset(small_folder, image_size=(56, 48))
    assert small[3][0].shape == (56, 48, 3)


def test_image_folder_grayscale_and_spaces(small_folder, tmp_path):
    root = _copy_folder(small_folder, tmp_path / "f")
    gray = cv2.imread(str(root / "images/00000001.jpg"), cv2.IMREAD_GRAYSCALE)
    cv2.imwrite(str(root / "images/gray img.png"), gray)
    (root / "label.txt").write_text("\nimages/gray img.png   3\n\nimages/00000111.jpg\t1\n")
    ds = ImageFolderDataset(root, num_classes=5)
    img, lab = ds[0]
    assert img.shape == (112, 112, 3) and lab == 3 and len(ds) == 2 and ds.num_classes == 5
    assert np.array_equal(img[..., 0], img[..., 1]) and np.array_equal(img[..., 0], gray)


@pytest.mark.parametrize("content,line,msg", [
    ("images/00000001.jpg\t0\nimages/00000111.jpg\n", 2, "malformed"),
    ("images/00000001.jpg\t0\n\nimages/00000111.jpg\tx1\n", 3, "not an integer"),
    ("images/00000001.jpg\t0\nimages/00000111.jpg\t10\n", 2, "outside [0, 10)"),
    ("images/00000001.jpg\t-1\n", 1, "outside"),
    ("images/00000001.jpg\t0\nimages/nope.jpg\t1\n", 2, "not found"),
    ("images/00000001.jpg\t0\t5\n", 1, "3 tab-separated fields"),
    ("images/00000001.jpg\t+3\n", 1, "not an integer"),       # int() would take these three
    ("images/00000001.jpg\t1_0\n", 1, "not an integer"),
    ("images/00000001.jpg\t\uff13\n", 1, "not an integer"),   # a full-width 3
    ("images/00000001.jpg\t0\nimages/00000111.jpg\t1\nimages/00000001.jpg\t0\n", 3,
     "already listed on line 1 (each image once)"),
    ("images/00000001.jpg\t0\n./images//00000001.jpg\t5\n", 2, "with label 0; here with label 5"),
])
def test_image_folder_bad_label_file(small_folder, tmp_path, content, line, msg):
    root = _copy_folder(small_folder, tmp_path / "f")
    (root / "label.txt").write_text(content)
    with pytest.raises(ValueError) as ei:
        ImageFolderDataset(root, num_classes=10)
    s = str(ei.value)
    assert "label.txt" in s and f"line {line}" in s and msg in s


def test_image_folder_label_file_with_a_byte_order_mark(small_folder, tmp_path):
    root = _copy_folder(small_folder, tmp_path / "f")
    (root / "label.txt").write_bytes("images/00000001.jpg\t0\r\nimages/00000111.jpg\t1\r\n".encode("utf-8-sig"))
    ds = ImageFolderDataset(root)
    assert [os.path.basename(p) for p, _ in ds.samples] == ["00000001.jpg", "00000111.jpg"]
    assert ds.labels.tolist() == [0, 1]


def test_image_folder_bad_image_and_skip_bad(small_folder, tmp_path):
    root = _copy_folder(small_folder, tmp_path / "f")
    (root / "images/broken.jpg").write_bytes(b"this is not a jpeg")
    lines = (root / "label.txt").read_text().strip().splitlines()
    lines += ["images/broken.jpg\t3", "images/missing.jpg\t4"]
    (root / "label.txt").write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="missing.jpg.*not found"):
        ImageFolderDataset(root)
    ds = ImageFolderDataset(root, skip_bad=True)
    assert len(ds) == 10 and ds.num_skipped == 2
    assert sorted(os.path.basename(p) for p, _ in ds.skipped) == ["broken.jpg", "missing.jpg"]
    (root / "label.txt").write_text("\n".join(lines[:-1]) + "\n")
    ds = ImageFolderDataset(root)  # bad image only detected when decoded
    with pytest.raises(ValueError, match=r"broken\.jpg: cannot decode"):
        ds[10]


# ----------------------------------------------------------------------------- recordio
def test_record_framing_with_embedded_magic(tmp_path):
    m = struct.pack("<I", recordio.MAGIC)
    payloads = [b"", b"abc", m, b"wxyz" + m + b"12345678" + m + b"q", m + m, b"x" + m + b"yz"]
    rec, idx = tmp_path / "t.rec", tmp_path / "t.idx"
    with recordio.RecordIOWriter(str(rec), str(idx)) as w:
        offs = [w.write_idx(k, p) for k, p in enumerate(payloads)]
    data = rec.read_bytes()
    assert len(data) % 4 == 0 and data[:4] == m
    fd = os.open(rec, os.O_RDONLY)
    try:
        for p, off in zip(payloads, offs):
            got, _ = recordio.read_record_at(fd, off, len(data), str(rec))
            assert got == p
    finally:
        os.close(fd)
    keys, o2 = recordio.read_idx_file(str(idx))
    assert keys.tolist() == list(range(len(payloads))) and o2.tolist() == offs
    # IRHeader pack/unpack, scalar and vector labels
    h, body = recordio.unpack(recordio.pack(recordio.IRHeader(0, 7.0, 3, 0), b"img"))
    assert (h.flag, h.label, h.id, body) == (0, 7.0, 3, b"img")
    h, body = recordio.unpack(recordio.pack(recordio.IRHeader(0, [5.0, 1.0], 4, 0), b"img"))
    assert h.flag == 2 and h.label.tolist() == [5.0, 1.0] and body == b"img"


def test_rec_roundtrip_via_im2rec(small_folder, tmp_path):
    out = tmp_path / "rec"
    r = subprocess.run([sys.executable, "tools/im2rec.py", "--root", str(small_folder), "--output", str(out),
                        "--quality", "95"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert (out / "property").read_text().strip() == "10,112,112"
    folder = ImageFolderDataset(small_folder)
    ds = RecordDataset(out)
    assert len(ds) == 10 and ds.num_classes == 10 and ds.header_num_classes == 10
    # insightface header record: key 0, flag 2, label [N+1, N+1+C]; identity records [start, end)
    assert ds.header.flag == 2 and ds.header.label.tolist() == [11.0, 21.0]
    for c in range(10):
        h, body = recordio.unpack(ds._read_payload(11 + c))
        assert h.flag == 2 and h.label.tolist() == [c + 1.0, c + 2.0] and body == b""
    for i in range(10):
        img, lab = ds[i]
        ref, ref_lab = folder[i]
        assert lab == ref_lab == i and img.shape == (112, 112, 3) and img.dtype == np.uint8
        assert np.abs(img.astype(np.float32) - ref).mean() < 3.0
    assert ds.read_label(4) == 4
    ds2 = build_dataset("rec", str(out), num_classes=10, image_size=64)
    assert ds2[2][0].shape == (64, 64, 3) and ds2[2][1] == 2


def _make_rec(tmp_path, labels, num_classes=None):
    rng = np.random.default_rng(0)
    items = []
    for lab in labels:
        img = rng.integers(0, 255, (16, 16, 3), dtype=np.uint8)
        items.append((lab, cv2.imencode(".jpg", img)[1].tobytes()))
    write_insightface_rec(str(tmp_path), items, num_classes=num_classes)
    return tmp_path / "train.rec"


def test_rec_without_header_and_label_range(tmp_path):
    rec = tmp_path / "plain.rec"
    with recordio.RecordIOWriter(str(rec), str(tmp_path / "plain.idx")) as w:
        for k, lab in enumerate([0, 2, 1]):
            jpg = cv2.imencode(".jpg", np.full((8, 8, 3), 100, np.uint8))[1].tobytes()
            w.write_idx(k, recordio.pack(recordio.IRHeader(0, float(lab), k, 0), jpg))
    ds = RecordDataset(rec_path=str(rec), image_size=None)
    assert ds.header is None and len(ds) == 3 and ds.num_classes == 3
    assert [ds[i][1] for i in range(3)] == [0, 2, 1]
    ds = RecordDataset(rec_path=str(rec), image_size=None, num_classes=2)
    with pytest.raises(ValueError, match=r"plain\.rec: record 1 \(offset \d+\).*outside \[0, 2\)"):
        ds[1]


def test_rec_corrupt_and_truncated(tmp_path):
    rec = _make_rec(tmp_path, [0, 0, 1, 1, 2])
    ds = RecordDataset(tmp_path, image_size=None)
    assert len(ds) == 5 and ds.num_classes == 3
    data = bytearray(rec.read_bytes())
    off2 = ds.offset_of(2)
    # corrupt magic of record 2
    bad = bytearray(data)
    bad[off2:off2 + 4] = b"\0\0\0\0"
    rec.write_bytes(bytes(bad))
    ds = RecordDataset(tmp_path, image_size=None)
    assert ds[0][1] == 0
    with pytest.raises(ValueError, match=rf"train\.rec: record 2: bad RecordIO magic .* at offset {off2}"):
        ds[1]
    # truncated in the middle of record 2's payload; header record now beyond EOF
    rec.write_bytes(bytes(data[:off2 + 20]))
    with pytest.raises(ValueError, match=r"train\.idx \(line \d+\): key \d+ points at offset \d+ "
                                         r"beyond the end of .*train\.rec"):
        RecordDataset(tmp_path, image_size=None)
    # truncated payload of the last indexed record: found at construction
    idx_lines = (tmp_path / "train.idx").read_text().splitlines()
    (tmp_path / "train.idx").write_text("\n".join(idx_lines[:2]) + "\n")  # keys 1, 2; no header
    with pytest.raises(ValueError, match=rf"train\.rec: record 2: truncated record at offset {off2}"):
        RecordDataset(tmp_path, image_size=None, num_classes=3)
    (tmp_path / "train.idx").write_text("1\t0\n2\tabc\n")
    with pytest.raises(ValueError, match=r"train\.idx \(line 2\): malformed"):
        RecordDataset(tmp_path)


def _jpeg(value: int) -> bytes:
    return cv2.imencode(".jpg", np.full((8, 8, 3), value, np.uint8))[1].tobytes()


def test_rec_multi_label_image_at_key_0_is_an_image(tmp_path):
    """mxnet's ``im2rec --pack-label`` numbers images from 0 with label vectors (flag > 0): record 0
    is an image, not insightface's header (which carries no image)."""
    labels = [[2, 7], [0, 1], [1, 5], [2, 0]]
    with recordio.RecordIOWriter(str(tmp_path / "train.rec"), str(tmp_path / "train.idx")) as w:
        for k, lab in enumerate(labels):
            w.write_idx(k, recordio.pack(recordio.IRHeader(0, [float(v) for v in lab], k, 0), _jpeg(10 * k)))
    ds = RecordDataset(tmp_path, image_size=None)
    assert ds.header is None and len(ds) == 4 and ds.num_classes == 3
    assert [ds[i][1] for i in range(4)] == [2, 0, 1, 2]
    assert ds[0][0].mean() == pytest.approx(0, abs=2) and ds[3][0].mean() == pytest.approx(30, abs=2)


def _idx_lines(tmp_path) -> list:
    return (tmp_path / "train.idx").read_text().splitlines()


def test_rec_header_that_does_not_describe_the_file(tmp_path):
    # 10 images, but the header announces 5 (keys 6..10 would be identities): record 6 holds an image
    with recordio.RecordIOWriter(str(tmp_path / "train.rec"), str(tmp_path / "train.idx")) as w:
        for k in range(1, 11):
            w.write_idx(k, recordio.pack(recordio.IRHeader(0, float(k % 3), k, 0), _jpeg(k)))
        w.write_idx(0, recordio.pack(recordio.IRHeader(2, [6.0, 11.0], 0, 0), b""))
    with pytest.raises(ValueError, match=r"train\.rec: record 6, the first identity record by the header, "
                                         r"holds an image .*announces fewer images than the file holds"):
        RecordDataset(tmp_path)
    # an image key lost from the .idx between others
    _make_rec(tmp_path, [0, 0, 1, 1, 2, 2])
    (tmp_path / "train.idx").write_text("\n".join(line for line in _idx_lines(tmp_path)
                                                  if not line.startswith("4\t")) + "\n")
    with pytest.raises(ValueError, match=r"record 0 .*announces images 1\.\.6, but .*train\.idx lacks 1 of "
                                         r"them \(first: key 4\)"):
        RecordDataset(tmp_path)
    # keys the header does not explain
    _make_rec(tmp_path, [0, 1])
    with recordio.RecordIOWriter(str(tmp_path / "more.rec"), str(tmp_path / "more.idx")) as w:
        w.write_idx(0, recordio.pack(recordio.IRHeader(0, 0.0, 0, 0), _jpeg(5)))
    rec_bytes = (tmp_path / "train.rec").read_bytes()
    (tmp_path / "train.rec").write_bytes(rec_bytes + (tmp_path / "more.rec").read_bytes())
    (tmp_path / "train.idx").write_text((tmp_path / "train.idx").read_text() + f"9\t{len(rec_bytes)}\n")
    with pytest.raises(ValueError, match=r"holds 1 key\(s\) beyond the header's images 1\.\.2 and identities "
                                         r"3\.\.4 \(first: key 9\)"):
        RecordDataset(tmp_path)


def test_rec_stale_or_doubled_index(tmp_path):
    _make_rec(tmp_path, [0, 1, 1])
    good_rec, good_idx = (tmp_path / "train.rec").read_bytes(), (tmp_path / "train.idx").read_text()
    assert len(RecordDataset(tmp_path)) == 3
    # records appended to the .rec, the .idx not rebuilt
    (tmp_path / "train.rec").write_bytes(good_rec + recordio.frame_record(
        recordio.pack(recordio.IRHeader(0, 1.0, 9, 0), _jpeg(1))))
    with pytest.raises(ValueError, match=r"train\.rec: \d+ bytes follow the last record that .*train\.idx "
                                         r"indexes .*stale or incomplete"):
        RecordDataset(tmp_path)
    # index lines lost at the end (here the last identity record's)
    (tmp_path / "train.rec").write_bytes(good_rec)
    (tmp_path / "train.idx").write_text("\n".join(good_idx.splitlines()[:-1]) + "\n")
    with pytest.raises(ValueError, match="bytes follow the last record"):
        RecordDataset(tmp_path)
    # a key listed twice (and so a record read twice, another never)
    lines = good_idx.splitlines()
    key2_offset = lines[1].split("\t")[1]
    lines[2] = f"2\t{lines[2].split(chr(9))[1]}"
    (tmp_path / "train.idx").write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"train\.idx: key 2 appears in index entries 2 and 3"):
        RecordDataset(tmp_path)
    lines = good_idx.splitlines()
    lines[2] = f"3\t{key2_offset}"
    (tmp_path / "train.idx").write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=rf"train\.idx: offset {key2_offset} appears in index entries 2 and 3"):
        RecordDataset(tmp_path)
    (tmp_path / "train.idx").write_text(good_idx.replace("2\t", "+2\t", 1))
    with pytest.raises(ValueError, match=r"train\.idx \(line \d+\): malformed index line '\+2"):
        RecordDataset(tmp_path)


def test_rec_num_classes_below_the_last_label(tmp_path):
    _make_rec(tmp_path, [0, 0, 1, 3, 3], num_classes=6)  # header: 6 identities, the last two empty
    assert RecordDataset(tmp_path).num_classes == 6
    assert RecordDataset(tmp_path, num_classes=4).num_classes == 4  # enough for every image
    with pytest.raises(ValueError, match=r"num_classes=3, but the header lists 6 identities and the last "
                                         r"image \(record 5\) has label 3: give num_classes >= 4"):
        RecordDataset(tmp_path, num_classes=3)


# ----------------------------------------------------------------------------- bin sets
def test_load_small_lfw_bin(small_lfw, tmp_path):
    vs = load_bin(str(small_lfw), image_size=112)
    assert vs.images.shape == (20, 3, 112, 112) and vs.images.dtype == np.float32
    assert vs.issame.dtype == bool and vs.issame.shape == (10,)
    np.testing.assert_array_equal(vs.flipped, vs.images[:, :, :, ::-1])
    bins, issame = read_bin(str(small_lfw))
    ref = cv2.imdecode(np.frombuffer(bins[3], np.uint8), 1)[:, :, ::-1].transpose(2, 0, 1)
    np.testing.assert_allclose(vs.images[3], (ref.astype(np.float32) - 127.5) / 128, atol=1e-6)
    assert vs.issame.tolist() == issame
    small = load_bin(str(small_lfw), image_size=(56, 56), flip=False)
    assert small.images.shape == (20, 3, 56, 56) and small.flipped is None
    # write/read round trip
    write_bin(str(tmp_path / "x.bin"), bins, issame)
    b2, s2 = read_bin(str(tmp_path / "x.bin"))
    assert b2 == bins and s2 == issame


def test_bin_corrupt(tmp_path):
    p = tmp_path / "bad.bin"
    p.write_bytes(b"\x80\x04garbage")
    with pytest.raises(ValueError, match=r"bad\.bin: not a valid insightface \.bin"):
        read_bin(str(p))
    write_bin(str(tmp_path / "odd.bin"), [b"a", b"b"], [True])
    with pytest.raises(ValueError, match=r"odd\.bin image 0: cannot decode"):
        load_bin(str(tmp_path / "odd.bin"))
    import pickle
    (tmp_path / "mismatch.bin").write_bytes(pickle.dumps(([b"a"] * 3, [True, False])))
    with pytest.raises(ValueError, match=r"mismatch\.bin: 3 images for 2 pairs"):
        read_bin(str(tmp_path / "mismatch.bin"))
    for name, content, message in [
            ("empty", ([], []), r"empty verification set"),
            ("decoded", ([np.zeros((8, 8, 3), np.uint8)] * 2, [True]),
             r"image 0 is a decoded array of shape \(8, 8, 3\); a \.bin holds encoded images"),
            ("two", ([b"a"] * 4, [1, 2]), r"issame_list\[1\] is 2, not a bool")]:
        (tmp_path / f"{name}.bin").write_bytes(pickle.dumps(content))
        with pytest.raises(ValueError, match=rf"{name}\.bin: .*{message}"):
            read_bin(str(tmp_path / f"{name}.bin"))
    # encoded images as insightface stores them: [n, 1] uint8 columns
    column = [np.frombuffer(_jpeg(v), np.uint8).reshape(-1, 1) for v in (0, 200)]
    (tmp_path / "column.bin").write_bytes(pickle.dumps((column, [False])))
    assert read_bin(str(tmp_path / "column.bin"))[0] == [_jpeg(0), _jpeg(200)]


def test_bin_of_one_kind_of_pair_warns(tmp_path):
    bins = [_jpeg(v) for v in (0, 10, 20, 30)]
    for issame, kind in (([True, True], "same"), ([False, False], "different")):
        write_bin(str(tmp_path / "one.bin"), bins, issame)
        with pytest.warns(UserWarning, match=rf"one\.bin: all 2 pairs are {kind}-identity pairs: its accuracy "
                                             "does not measure verification"):
            load_bin(str(tmp_path / "one.bin"), image_size=8)
    write_bin(str(tmp_path / "both.bin"), bins, [True, False])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_bin(str(tmp_path / "both.bin"), image_size=8)


# ----------------------------------------------------------------------------- synthetic
def test_synthetic_determinism():
    a, b = SyntheticFaces(50, 4, 32, seed=3), SyntheticFaces(50, 4, 32, seed=3)
    c = SyntheticFaces(50, 4, 32, seed=4)
    assert len(a) == 200
    for i in (0, 5, 77, 199):
        ia, la = a[i]
        ib, lb = b[i]
        assert ia.shape == (32, 32, 3) and ia.dtype == np.uint8 and la == lb == i // 4
        np.testing.assert_array_equal(ia, ib)
        assert np.abs(ia.astype(int) - c[i][0]).mean() > 5
    # identities are distinguishable (nearest class mean far above the 5 % chance level)
    # but not trivially so (raw-pixel template matching is far from perfect)
    ds = SyntheticFaces(20, 8, 32, seed=0)
    x = np.stack([ds[i][0] for i in range(len(ds))]).reshape(20, 8, -1).astype(np.float32)
    d = ((x[:, 0][:, None] - x[:, 1:].mean(1)[None]) ** 2).sum(-1)
    acc = (d.argmin(1) == np.arange(20)).mean()
    assert 0.3 <= acc < 0.95, acc
    assert np.abs(x[0, 0] - x[0, 1]).mean() > 5  # the jitter is real


def test_verification_set_disjoint_and_balanced(tmp_path):
    bins, issame = make_verification_set(8, 10, image_size=32, seed=3)
    bins2, issame2 = make_verification_set(8, 10, image_size=32, seed=3)
    assert bins == bins2 and issame == issame2
    assert len(bins) == 20 and len(issame) == 10 and sum(issame) == 5
    img = cv2.imdecode(np.frombuffer(bins[0], np.uint8), 1)
    assert img.shape == (32, 32, 3)
    train = [_prototype(3, 0, c, 32, 32, 8) for c in range(50)]
    for v in range(8):
        pv = _prototype(3, 1, v, 32, 32, 8)
        assert min(np.abs(pv - t).mean() for t in train) > 0.02
    write_bin(str(tmp_path / "syn.bin"), bins, issame)
    vs = load_bin(str(tmp_path / "syn.bin"), image_size=32)
    assert vs.images.shape == (20, 3, 32, 32) and vs.issame.tolist() == issame


# ----------------------------------------------------------------------------- sampler
def test_distributed_sampler():
    n, bs, W = 103, 4, 3
    samplers = [DistributedBatchSampler(n, bs, r, W, seed=7) for r in range(W)]
    assert all(s.steps_per_epoch == 103 // 12 == len(s) for s in samplers)
    per_rank = [np.concatenate(list(s.batches(0))) for s in samplers]
    allidx = np.concatenate(per_rank)
    assert len(np.unique(allidx)) == len(allidx) == 8 * 12  # disjoint
    np.testing.assert_array_equal(np.sort(allidx), np.sort(samplers[0].epoch_permutation(0)))
    assert not np.array_equal(samplers[0].epoch_permutation(0), samplers[0].epoch_permutation(1))
    np.testing.assert_array_equal(samplers[1].epoch_permutation(5),
                                  DistributedBatchSampler(n, bs, 1, W, seed=7).epoch_permutation(5))
    full = list(samplers[2].batches(1))
    tail = list(samplers[2].batches(1, start_step=5))
    assert len(tail) == 3 and all(np.array_equal(a, b) for a, b in zip(full[5:], tail))
    # drop_last=False covers every sample, same step count on all ranks
    nd = [DistributedBatchSampler(n, bs, r, W, seed=7, drop_last=False) for r in range(W)]
    assert all(s.steps_per_epoch == 9 for s in nd)
    cover = np.concatenate([np.concatenate(list(s.batches(0))) for s in nd])
    assert set(cover.tolist()) == set(range(n))
    ns = DistributedBatchSampler(10, 5, 0, 1, shuffle=False)
    assert [b.tolist() for b in ns.batches(3)] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    with pytest.raises(ValueError):
        DistributedBatchSampler(5, 4, 0, 2)


# ----------------------------------------------------------------------------- loader
class _BadLabel:
    num_classes = 3

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return np.zeros((8, 8, 3), np.uint8), (7 if i == 5 else 0)


class _StuckAt:
    """8 blank samples; reading sample ``stuck`` hangs (a hung file system), the others return."""
    num_classes = 3

    def __init__(self, stuck: int):
        self.stuck = stuck

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == self.stuck:
            time.sleep(3600)
        return np.full((8, 8, 3), i, np.uint8), i % 3


def test_loader_timeout_kills_a_stuck_worker_and_names_the_step():
    """Batch 1 of epoch 0 (samples 4-7) never arrives: the loader fails after its timeout with
    the epoch and step, its workers gone (killed, not waited for), and a later epoch that avoids
    the sample works on new workers."""
    sampler = DistributedBatchSampler(8, 4, 0, 1, shuffle=False)
    with BatchLoader(_StuckAt(6), sampler, image_size=8, num_workers=2, prefetch=1, timeout=2.0) as ld:
        started = time.monotonic()
        batches = ld.epoch(0)
        first, labels = next(batches)
        np.testing.assert_array_equal(labels, [0, 1, 2, 0])
        with pytest.raises(TimeoutError, match=r"no batch from its workers within 2 s \(epoch 0, step 1\)"):
            next(batches)
        assert time.monotonic() - started < 30
        deadline = time.time() + 10
        while mp.active_children() and time.time() < deadline:
            time.sleep(0.05)
        assert mp.active_children() == []
        ld.dataset.stuck = -1  # the new workers fork the dataset as it is now
        again = list(ld.epoch(0))
    assert [list(y) for _, y in again] == [[0, 1, 2, 0], [1, 2, 0, 1]]
    np.testing.assert_array_equal(again[0][0], first)


def test_loader_flip_determinism_and_resume():
    ds = SyntheticFaces(10, 4, 16, seed=0)
    sampler = DistributedBatchSampler(len(ds), 8, 0, 1, seed=1)
    ld = BatchLoader(ds, sampler, image_size=16, num_workers=0, seed=5)
    b1 = list(ld.epoch(2))
    b2 = list(BatchLoader(ds, sampler, image_size=16, seed=5).epoch(2))
    assert len(b1) == 5
    imgs, labs = b1[0]
    assert imgs.shape == (8, 3, 16, 16) and imgs.dtype == np.float32 and labs.dtype == np.int64
    assert imgs.min() >= -1.0 and imgs.max() <= 1.0
    for (x1, y1), (x2, y2) in zip(b1, b2):
        np.testing.assert_array_equal(x1, x2)
        np.testing.assert_array_equal(y1, y2)
    for (x1, _), (x2, _) in zip(b1[3:], ld.epoch(2, start_step=3)):
        np.testing.assert_array_equal(x1, x2)
    # flips follow flip_mask exactly
    idx = next(sampler.batches(2))
    mask = flip_mask(5, 2, idx)
    assert 0 < mask.sum() < len(mask) or len(mask) < 4
    noflip = next(BatchLoader(ds, sampler, image_size=16, flip=False).epoch(2))[0]
    for j in range(8):
        exp = noflip[j, :, :, ::-1] if mask[j] else noflip[j]
        np.testing.assert_array_equal(imgs[j], exp)
        assert labs[j] == ds.label(idx[j])
    m_all = flip_mask(5, 2, np.arange(2000))
    assert 0.45 < m_all.mean() < 0.55 and not np.array_equal(m_all, flip_mask(5, 3, np.arange(2000)))


def test_loader_workers_match_and_shutdown():
    ds = SyntheticFaces(12, 4, 24, seed=2)
    sampler = DistributedBatchSampler(len(ds), 6, 1, 2, seed=3)
    ref = list(BatchLoader(ds, sampler, image_size=20, num_workers=0, seed=9).epoch(1))
    with BatchLoader(ds, sampler, image_size=20, num_workers=2, seed=9, prefetch=1) as ld:
        got = list(ld.epoch(1))
        it = ld.epoch(2)
        next(it)
        it.close()  # early stop leaves the pool usable
        again = list(ld.epoch(1, start_step=2))
        assert len(mp.active_children()) >= 1
    assert len(got) == len(ref) == 4 and len(again) == 2
    for (x1, y1), (x2, y2) in zip(ref, got):
        assert x2.shape == (6, 3, 20, 20)
        np.testing.assert_array_equal(x1, x2)
        np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(again[0][0], ref[2][0])
    deadline = time.time() + 10
    while mp.active_children() and time.time() < deadline:
        time.sleep(0.05)
    assert mp.active_children() == []
    # an error inside a worker propagates and the loader still shuts down cleanly
    bad = _BadLabel()
    with BatchLoader(bad, DistributedBatchSampler(8, 4, 0, 1, shuffle=False), image_size=8,
                     num_workers=2) as ld:
        with pytest.raises(ValueError, match=r"sample 5: label 7 outside \[0, 3\)"):
            list(ld.epoch(0))
    deadline = time.time() + 10
    while mp.active_children() and time.time() < deadline:
        time.sleep(0.05)
    assert mp.active_children() == []


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_loader_workers_slot_reuse(context):
    """Workers decode into shared uint8 slots: with 3 workers x prefetch 1 the 5 batches reuse
    slots (the last one wrap-around padded, drop_last=False), and every batch equals the
    in-process one, with fork and spawn workers."""
    ds = SyntheticFaces(7, 3, 16, seed=4)  # 21 samples, batch 5 -> 5 batches
    sampler = DistributedBatchSampler(len(ds), 5, 0, 1, seed=1, drop_last=False)
    ref = list(BatchLoader(ds, sampler, image_size=12, num_workers=0, seed=2).epoch(0))
    with BatchLoader(ds, sampler, image_size=12, num_workers=3, seed=2, prefetch=1,
                     mp_context=context) as ld:
        got = list(ld.epoch(0))
    assert len(got) == len(ref) == 5
    if context == "fork":  # the parent's OpenCV pool was stopped before the fork (see loader.py)
        import cv2
        assert cv2.getNumThreads() == 1
    for (x1, y1), (x2, y2) in zip(ref, got):
        assert x2.dtype == np.float32 and x2.flags.c_contiguous
        np.testing.assert_array_equal(x1, x2)
        np.testing.assert_array_equal(y1, y2)


def test_build_dataset_and_label_range(small_folder, tmp_path):
    ds = build_dataset("folder", str(small_folder), num_classes=10, image_size=112)
    assert isinstance(ds, ImageFolderDataset) and len(ds) == 10
    with pytest.raises(ValueError, match=r"label\.txt, line 6: label 5 outside \[0, 5\)"):
        build_dataset("folder", str(small_folder), num_classes=5)
    huge = tmp_path / "huge"
    shutil.copytree(small_folder, huge)
    lines = (huge / "label.txt").read_text().splitlines()
    lines[2] = lines[2].rsplit("\t", 1)[0] + "\t99999999999999999999"  # beyond int64: was an OverflowError
    (huge / "label.txt").write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"label\.txt, line 3: label 99999999999999999999 outside \[0, "):
        build_dataset("folder", str(huge))
    syn = build_dataset("synthetic", None, num_classes=4, image_size=16, samples_per_class=3, seed=1)
    assert len(syn) == 12 and syn[11][1] == 3
    with pytest.raises(ValueError, match="unknown dataset kind"):
        build_dataset("lmdb", "x")
    sampler = DistributedBatchSampler(len(ds), 5, 0, 1, seed=0)
    x, y = next(BatchLoader(ds, sampler, image_size=112).epoch(0))
    assert x.shape == (5, 3, 112, 112) and sorted(y.tolist()) == sorted(sampler.epoch_permutation(0)[:5].tolist())


def test_image_folder_indexing_logs_progress(small_folder, caplog):
    """Checking a label file's images is a long operation on millions of files: it reports."""
    import logging

    with caplog.at_level(logging.INFO, logger="paddle_pfc.data"):
        ImageFolderDataset(small_folder)
    lines = [r.getMessage() for r in caplog.records if r.name == "paddle_pfc.data"]
    assert any(line.startswith("index ") and "label.txt: 10/10 (100%)" in line and "lines/s" in line
               for line in lines), lines
