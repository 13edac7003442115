"""paddle-pfc-pairs: identities held out of training, their verification pairs in a .bin the
package reads back, the others' label file renumbered for training."""
from __future__ import annotations

import itertools
from pathlib import Path

import cv2
import numpy as np
import pytest

from paddle_pfc.cli.pairs import main
from paddle_pfc.evaluation.bin_set import decode_bin_image, read_bin

IMAGES = {0: 4, 1: 3, 2: 5, 3: 4, 4: 1, 5: 4, 6: 3, 7: 4, 8: 2}  # label -> images; label 4 has no pair


def write_folder(root: Path) -> dict[str, int]:
    """A folder of grey images whose pixel value names the image: identity x 10 + index; PNG
    for even identities, PGM (re-encoded by the command) for odd ones. ``{rel path: label}``."""
    labels = {}
    for label, count in IMAGES.items():
        (root / f"id{label}").mkdir(parents=True)
        for index in range(count):
            rel = f"id{label}/{index}.{'png' if label % 2 == 0 else 'pgm'}"
            cv2.imwrite(str(root / rel), np.full((12, 10), label * 10 + index, np.uint8))
            labels[rel] = label
    (root / "label.txt").write_text("".join(f"{rel}\t{label}\n" for rel, label in labels.items()))
    return labels


def identity_of(data: bytes, index: int) -> int:
    """The identity an image of the .bin shows (its pixel value // 10; every pixel the same)."""
    rgb = decode_bin_image(data, "pairs.bin", index)
    assert rgb.min() == rgb.max()
    return int(rgb[0, 0, 0]) // 10


def read_split(root: Path) -> tuple[dict[str, int], list[int], list[tuple[int, int, bool]]]:
    """``(train label lines, held-out identities, [(identity a, identity b, issame)])``."""
    train = dict(line.split("\t") for line in (root / "train_label.txt").read_text().splitlines())
    bins, issame = read_bin(str(root / "pairs.bin"))
    ids = [identity_of(data, i) for i, data in enumerate(bins)]
    pairs = [(ids[2 * k], ids[2 * k + 1], same) for k, same in enumerate(issame)]
    return {rel: int(label) for rel, label in train.items()}, sorted({i for a, b, _ in pairs for i in (a, b)}), pairs


def test_split_is_disjoint_renumbered_and_the_pairs_are_right(tmp_path, capsys):
    labels = write_folder(tmp_path)
    assert main(["--root", str(tmp_path), "--holdout-ids", "3", "--seed", "5"]) == 0
    train, heldout, pairs = read_split(tmp_path)
    assert len(heldout) == 3 and 4 not in heldout  # an identity of one image makes no genuine pair
    # training: every other identity's images, none held out, labels renumbered 0..C-1 in old order
    kept = sorted(set(IMAGES) - set(heldout))
    assert train == {rel: kept.index(label) for rel, label in labels.items() if label in kept}
    # genuine pairs: every pair of two images of one identity; as many impostor pairs, all distinct
    genuine = [(a, b) for a, b, same in pairs if same]
    assert all(a == b for a, b in genuine) and len(genuine) == sum(IMAGES[i] * (IMAGES[i] - 1) // 2 for i in heldout)
    impostor = [(a, b) for a, b, same in pairs if not same]
    assert len(impostor) == len(genuine) and all(a != b for a, b in impostor)
    assert not all(same for *_, same in pairs[:len(genuine)])  # shuffled
    out = capsys.readouterr().out
    assert f"training: {len(kept)} identities" in out and "held out: 3 identities" in out
    assert "-o data.num_classes" not in out and "--label-file train_label.txt" in out  # read from the data
    assert f"held-out identities: {', '.join(f'id{i}' for i in heldout)}\n" in out


def test_a_folder_per_person_without_label_txt_gets_one(tmp_path, capsys):
    """No label.txt, one sub-folder of images per identity (a non-image file beside them): the
    command writes label.txt, one label per sub-folder in name order, then splits it as usual."""
    labels = write_folder(tmp_path)
    (tmp_path / "label.txt").unlink()
    (tmp_path / "notes.txt").write_text("not an image")
    (tmp_path / "empty").mkdir()
    assert main(["--root", str(tmp_path), "--holdout-ids", "3"]) == 0
    written = dict(line.split("\t") for line in (tmp_path / "label.txt").read_text().splitlines())
    assert {rel: int(label) for rel, label in written.items()} == labels
    out = capsys.readouterr().out
    assert out.startswith(f"pairs: {tmp_path / 'label.txt'} written from 9 sub-folders of {tmp_path}, one identity "
                          "each (30 images, labels 0..8 in folder-name order)\n")
    train, heldout, _ = read_split(tmp_path)
    assert len(heldout) == 3 and len(train) == 30 - sum(IMAGES[i] for i in heldout)


def test_no_label_txt_and_no_person_folders_is_an_error(tmp_path, capsys):
    cv2.imwrite(str(tmp_path / "a.png"), np.zeros((4, 4), np.uint8))
    assert main(["--root", str(tmp_path), "--holdout-ids", "2"]) == 2
    assert capsys.readouterr().err == (f"pairs: error: {tmp_path / 'label.txt'}: no such file, and {tmp_path} holds "
                                       "no sub-folders of images (one per person) to write it from "
                                       "(docs/your_own_data.md)\n")
    assert not (tmp_path / "label.txt").exists()


def test_pairs_bin_stores_png_files_as_they_are_and_reencodes_others(tmp_path):
    write_folder(tmp_path)
    assert main(["--root", str(tmp_path), "--holdout-ids", "4"]) == 0
    bins, _ = read_bin(str(tmp_path / "pairs.bin"))
    originals = {p.read_bytes() for p in tmp_path.glob("id*/*.png")}
    assert all(data in originals or data.startswith(b"\x89PNG") for data in bins)
    assert any(data in originals for data in bins) and not any(data.startswith(b"P5") for data in bins)


def test_same_seed_same_split_and_a_cap_on_genuine_pairs(tmp_path):
    write_folder(tmp_path)
    assert main(["--root", str(tmp_path), "--holdout", "0.4", "--seed", "1", "--max-genuine", "5"]) == 0
    first = read_split(tmp_path)
    assert sum(same for *_, same in first[2]) == 5 and len(first[2]) == 10
    assert main(["--root", str(tmp_path), "--holdout", "0.4", "--seed", "1", "--max-genuine", "5"]) == 0
    assert read_split(tmp_path) == first
    assert main(["--root", str(tmp_path), "--holdout", "0.4", "--seed", "2", "--max-genuine", "5"]) == 0
    assert read_split(tmp_path)[1:] != first[1:]


@pytest.mark.parametrize("holdout, message", [
    (["--holdout-ids", "8"], "leaves 1 to train on"),
    (["--holdout-ids", "9"], "leaves 0 to train on"),
])
def test_an_impossible_split_writes_nothing(tmp_path, capsys, holdout, message):
    write_folder(tmp_path)
    assert main(["--root", str(tmp_path), *holdout]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "pairs.bin").exists() and not (tmp_path / "train_label.txt").exists()


def test_too_few_identities_with_two_images(tmp_path, capsys):
    (tmp_path / "a").mkdir()
    lines = []
    for label in range(5):
        cv2.imwrite(str(tmp_path / f"a/{label}.png"), np.zeros((4, 4), np.uint8))
        lines.append(f"a/{label}.png\t{label}\n")
    (tmp_path / "label.txt").write_text("".join(lines))
    assert main(["--root", str(tmp_path), "--holdout-ids", "2"]) == 2
    assert "only 0 have 2 or more images" in capsys.readouterr().err


def test_every_genuine_pair_of_a_small_set_is_written():
    from paddle_pfc.data.holdout import verification_pairs

    groups = {0: ["a0", "a1", "a2"], 1: ["b0", "b1"]}
    pairs = verification_pairs(groups, [0, 1], max_genuine=100, seed=0)
    genuine = {frozenset((a, b)) for a, b, same in pairs if same}
    assert genuine == {frozenset(p) for p in [*itertools.combinations(groups[0], 2), ("b0", "b1")]}
    impostor = [frozenset((a, b)) for a, b, same in pairs if not same]
    assert len(impostor) == 4 == len(set(impostor)) and all(a[0] != b[0] for a, b in map(sorted, impostor))


def test_a_test_set_of_other_people_beside_the_selection_set(tmp_path, capsys):
    labels = write_folder(tmp_path)
    assert main(["--root", str(tmp_path), "--holdout-ids", "2", "--test-ids", "3", "--seed", "4"]) == 0
    train, selection, _ = read_split(tmp_path)
    bins, issame = read_bin(str(tmp_path / "test_pairs.bin"))
    ids = [identity_of(data, i) for i, data in enumerate(bins)]
    test = sorted(set(ids))
    assert len(selection) == 2 and len(test) == 3 and not set(selection) & set(test)
    trained = {labels[rel] for rel in train}
    assert not trained & (set(selection) | set(test)) and len(trained) == 9 - 5
    assert all((ids[2 * k] == ids[2 * k + 1]) == same for k, same in enumerate(issame))
    out = capsys.readouterr().out
    assert "accuracy on it is selection-biased" in out and "pairs: test: 3 identities" in out
    assert f"python tools/validate.py --checkpoint output/train_small/best --bin {tmp_path / 'test_pairs.bin'}" in out
    assert main(["--root", str(tmp_path), "--holdout-ids", "2", "--test-ids", "6"]) == 2
    assert "leaves 1 of 9 to train on: the test set needs at least 2 and training at least 2" in \
        capsys.readouterr().err


def test_eval_only_holds_every_person_out(tmp_path, capsys):
    write_folder(tmp_path)
    assert main(["--root", str(tmp_path), "--eval-only"]) == 0
    bins, issame = read_bin(str(tmp_path / "pairs.bin"))
    ids = [identity_of(data, i) for i, data in enumerate(bins)]
    paired = sorted(i for i, n in IMAGES.items() if n >= 2)
    assert sorted(set(ids)) == paired and not (tmp_path / "train_label.txt").exists()
    assert sum(issame) == sum(IMAGES[i] * (IMAGES[i] - 1) // 2 for i in paired) == len(issame) - sum(issame)
    out = capsys.readouterr().out
    assert "pairs: evaluation only, every identity held out: 8 identities" in out
    assert "pairs: 1 identities of one image make no genuine pair: left out" in out


@pytest.mark.parametrize("bin_name", ["pairs.bin", "test_pairs.bin"])
def test_each_set_names_the_people_of_its_pairs(tmp_path, capsys, bin_name):
    """Beside each .bin, its people file names each pair's two identities: the ones the pair's
    images show (read back from their pixels)."""
    from paddle_pfc.evaluation.pair_people import read_pair_people

    write_folder(tmp_path)
    (tmp_path / bin_name.replace(".bin", ".people.json")).write_text("an earlier run's")
    assert main(["--root", str(tmp_path), "--holdout-ids", "3", "--test-ids", "2", "--seed", "3"]) == 0
    bins, issame = read_bin(str(tmp_path / bin_name))
    ids = [identity_of(data, i) for i, data in enumerate(bins)]
    people = read_pair_people(str(tmp_path / bin_name), issame)
    named = [(people.names[a], people.names[b]) for a, b in people.pairs]
    assert named == [(f"id{ids[2 * k]}", f"id{ids[2 * k + 1]}") for k in range(len(issame))]
    assert sorted(people.names) == sorted({f"id{i}" for i in ids})
    out = capsys.readouterr().out
    assert f"who each shows: {tmp_path / bin_name.replace('.bin', '.people.json')})" in out
    assert f"pairs: warning: {'held-out' if bin_name == 'pairs.bin' else 'test'} set: only " \
           f"{3 if bin_name == 'pairs.bin' else 2} people: error-rate intervals over them cannot be trusted" in out


def test_identities_sharing_a_folder_get_names_of_their_own(tmp_path):
    from paddle_pfc.cli.pairs import person_names

    groups = {0: ["r/a/1.png", "r/a/2.png"], 1: ["r/a/3.png"], 2: ["r/b/1.png"]}
    assert person_names(groups, [0, 1, 2], "r") == {"r/a/1.png": "a (label 0)", "r/a/2.png": "a (label 0)",
                                                    "r/a/3.png": "a (label 1)", "r/b/1.png": "b"}


def test_im2rec_copies_the_people_file_with_the_pairs(tmp_path, capsys):
    from paddle_pfc.cli import im2rec

    root, out = tmp_path / "faces", tmp_path / "rec"
    write_folder(root)
    assert main(["--root", str(root), "--holdout-ids", "3"]) == 0
    convert = ["--root", str(root), "--label-file", "train_label.txt", "--output", str(out), "--workers", "0"]
    assert im2rec.main(convert) == 0
    assert (out / "pairs.bin").read_bytes() == (root / "pairs.bin").read_bytes()
    assert (out / "pairs.people.json").read_bytes() == (root / "pairs.people.json").read_bytes()
    (root / "pairs.people.json").unlink()  # a set without people: no earlier copy's file left to describe it
    assert im2rec.main(convert) == 0
    assert not (out / "pairs.people.json").exists()
