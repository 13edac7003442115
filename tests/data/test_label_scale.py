"""label.txt at scale: the block-wise numpy parse against a line-by-line reference, every bad line
named across blocks, folder symlinks leaving the root, image files checked when read, workers."""
from __future__ import annotations

import os
import pickle
import re
from pathlib import Path

import numpy as np
import pytest

from helpers.loader_batches import assert_workers_read_as_inline
from paddle_pfc.data import ImageFolderDataset, image_folder, label_blocks, label_checks
from paddle_pfc.data.image_folder import parse_label_file


def reference(raw: bytes, root: str) -> list[tuple[str, int]]:
    """The entries of a valid label file, parsed line by line with Python's str methods."""
    out = []
    for line in raw.decode("utf-8-sig").splitlines():
        if line.strip():
            rel, label = line.strip().rsplit(None, 1)
            out.append((os.path.join(root, rel), int(label)))
    return out


def varied_lines(n: int, seed: int = 0) -> list[bytes]:
    """Valid lines: spaces in paths, tabs or spaces before the label, CRLF, blank and blank-looking
    lines, leading spaces, './' and non-ASCII names."""
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        folder = [f"id_{i // 7:05d}", f"with space {i // 11}", f"caf\u00e9 {i // 13}", f"./d{i % 3}"][i % 4]
        sep = [b"\t", b" ", b"  \t ", b"\t\t"][int(rng.integers(4))]
        end = [b"\n", b"\r\n", b" \n", b"\t\r\n"][int(rng.integers(4))]
        lead = b"  " if i % 97 == 5 else b""
        lines.append(lead + f"{folder}/{i:06d} x.jpg".encode() + sep + str(int(rng.integers(0, 10**6))).encode() + end)
        if i % 50 == 3:
            lines.append([b"\n", b"   \n", b"\r\n", b" \t \r\n"][i % 4])
    return lines


@pytest.mark.parametrize("block", [1 << 21, 4096, 97])
def test_block_parse_equals_the_line_by_line_parse(tmp_path, monkeypatch, block):
    monkeypatch.setattr(image_folder, "BLOCK_BYTES", block)
    raw = label_blocks.BOM + b"".join(varied_lines(3000))
    (tmp_path / "label.txt").write_bytes(raw[:-1])  # the last line without its newline
    items, skipped = parse_label_file(str(tmp_path / "label.txt"), check_files=False)
    assert list(items) == reference(raw[:-1], str(tmp_path)) and skipped == []
    assert items.labels.dtype == np.int64 and len(items) == 3000
    assert items.line_of(0) == 1 and items.line_of(3) == 4 and items.line_of(4) == 6  # line 5 is blank
    assert pickle.loads(pickle.dumps(items))[2999] == items[2999]


@pytest.mark.parametrize("content", [b"", b"\n\n  \r\n", label_blocks.BOM])
def test_a_label_file_without_entries(tmp_path, content):
    (tmp_path / "label.txt").write_bytes(content)
    assert len(parse_label_file(str(tmp_path / "label.txt"))[0]) == 0
    with pytest.raises(ValueError, match="label.txt: no usable samples"):
        ImageFolderDataset(tmp_path)


def test_the_vectorized_block_takes_what_the_line_by_line_parse_takes():
    """Both block parsers on the same plain block (one is the other's fallback)."""
    data = b"".join(varied_lines(500, seed=1)).replace(b"caf\xc3\xa9", b"cafe")
    fast = label_blocks._fast_block(data, 10, None)
    slow = label_blocks._block_by_lines(data, 10, "label.txt", None)
    assert fast is not None
    for name in ("paths", "ends", "labels", "lines"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name))
    assert fast.line_count == slow.line_count == data.count(b"\n")


BAD_LINES = [
    (b"a/b.jpg\n", "malformed line"),
    (b"a/b.jpg\tx1\n", "is not an integer"),
    (b"a/b.jpg\t+3\n", "is not an integer"),
    (b"a/b.jpg\t1_0\n", "is not an integer"),
    ("a/b.jpg\t\uff13\n".encode(), "is not an integer"),
    (b"a/b.jpg\t-1\n", "outside [0, 700)"),
    (b"a/b.jpg\t700\n", "outside [0, 700)"),
    (b"a/b.jpg\t0\t5\n", "3 tab-separated fields"),
    (b"a/b\0.jpg\t1\n", "a NUL byte"),
    (b"a/\xff.jpg\t1\n", "not UTF-8 text"),
    (b"id_00001/000003.jpg\t1\n", "is already listed on line 4"),
    (b"./id_00001//000003.jpg\t9\n", "is already listed on line 4 with label 1; here with label 9"),
    (b"/etc/passwd\t1\n", "is an absolute path"),
    (b"id_00001/../../x.jpg\t1\n", "resolves to"),
]


@pytest.mark.parametrize("bad, problem", BAD_LINES)
def test_a_bad_line_far_into_the_file_is_named(tmp_path, monkeypatch, bad, problem):
    monkeypatch.setattr(image_folder, "BLOCK_BYTES", 4096)
    lines = [f"id_{i // 3:05d}/{i:06d}.jpg\t{i // 3}\n".encode() for i in range(2000)]
    lines.insert(1500, bad)  # line 1501
    (tmp_path / "label.txt").write_bytes(b"".join(lines))
    with pytest.raises(ValueError) as error:
        parse_label_file(str(tmp_path / "label.txt"), num_classes=700, check_files=False)
    message = str(error.value)
    assert re.search(r"label\.txt(, | \()line 1501\b", message) and problem in message, message


def test_a_folder_symlink_out_of_the_root_is_named_without_checking_files(tmp_path):
    root, outside = tmp_path / "data", tmp_path / "elsewhere"
    (root / "store" / "inner").mkdir(parents=True)
    outside.mkdir()
    (root / "linked").symlink_to(outside)
    (root / "inside").symlink_to(root / "store" / "inner")
    lines = [f"id_{i}/{i}.jpg\t0\n" for i in range(50)] + ["inside/a.jpg\t0\n", "linked/a.jpg\t0\n",
                                                           "linked/b.jpg\t0\n"]
    (root / "label.txt").write_text("".join(lines))
    message = (f"line 52: image 'linked/a.jpg' resolves to {outside / 'a.jpg'}, outside the data root {root}")
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_label_file(str(root / "label.txt"), check_files=False)
    items, _ = parse_label_file(str(root / "label.txt"), check_files=False, allow_outside_root=True)
    assert len(items) == 53
    (root / "label.txt").write_text("".join(lines[:51]))
    assert len(parse_label_file(str(root / "label.txt"), check_files=False)[0]) == 51  # a symlink inside


def thue_morse(bits: int) -> str:
    return "".join("ab"[bin(k).count("1") % 2] for k in range(1 << bits))


def test_folders_whose_hashes_collide_are_checked_one_by_one():
    """Thue-Morse strings collide under any polynomial hash mod 2^64: the folder check compares
    bytes, so the second folder is not taken for the first."""
    first, second = thue_morse(11), thue_morse(11).translate(str.maketrans("ab", "ba"))
    rels = [f"{first}/1.jpg", f"{first}/2.jpg", f"{second}/3.jpg", "x/4.jpg", f"{second}/5.jpg"]
    buf = np.frombuffer("".join(rels).encode(), np.uint8)
    offsets = np.concatenate(([0], np.cumsum([len(r) for r in rels])))
    starts = offsets[:-1]
    cuts = starts + np.array([len(r.rpartition("/")[0]) for r in rels])
    hashes = label_checks.span_hashes(buf, starts, cuts)
    assert hashes[0] == hashes[2] and hashes[0] != hashes[3]  # the collision is real
    reps, others = label_checks.folder_groups(buf, offsets, np.empty(0, np.int64))
    assert sorted(reps.tolist()) == [0, 3] and others.tolist() == [2, 4]


def make_folder(root: Path, count: int, missing: int | None = None) -> Path:
    import cv2

    root.mkdir(parents=True)
    lines = []
    for i in range(count):
        rel = f"p{i % 3}/im {i}.png"
        if i != missing:
            (root / rel).parent.mkdir(exist_ok=True)
            cv2.imwrite(str(root / rel), np.full((8, 8, 3), i * 10 % 256, np.uint8))
        lines.append(f"{rel}\t{i % 3}\n")
    (root / "label.txt").write_text("".join(lines))
    return root


def test_files_beyond_the_limit_are_checked_when_read(tmp_path, monkeypatch):
    root = make_folder(tmp_path / "f", 12, missing=7)
    (root / "p0" / "out.png").symlink_to(root / "p1" / "im 1.png")
    (tmp_path / "secret.png").write_bytes((root / "p1" / "im 1.png").read_bytes())
    with open(root / "label.txt", "a") as f:
        f.write("p0/out.png\t0\np0/leak.png\t0\n")
    (root / "p0" / "leak.png").symlink_to(tmp_path / "secret.png")
    with pytest.raises(ValueError, match="line 8: image file 'p1/im 7.png' not found"):
        ImageFolderDataset(root, image_size=None)
    monkeypatch.setattr(image_folder, "FILE_CHECK_LIMIT", 5)
    ds = ImageFolderDataset(root, image_size=None)
    assert len(ds) == 14 and not ds.samples.files_checked
    assert ds[6][0][0, 0, 0] == 60 and ds[12][0][0, 0, 0] == 10  # a symlink inside the root reads
    with pytest.raises(ValueError, match=re.escape("label.txt, line 8: image file 'p1/im 7.png' not found")):
        ds[7]
    with pytest.raises(ValueError, match=f"line 14: image 'p0/leak.png' is a symlink to {tmp_path / 'secret.png'}"):
        ds[13]


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_loader_workers_read_the_images_of_the_main_process(tmp_path, context):
    dataset = ImageFolderDataset(make_folder(tmp_path / "f", 24), image_size=8)
    assert_workers_read_as_inline(dataset, 8, batches=6, contexts=(context,))
