"""label.txt entries stay inside the data root: '../x.jpg', absolute paths and symlinks leading out
are errors naming the line (training data and tools/im2rec.py), unless explicitly allowed."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers.tool_scripts import load_tool
from launcher import REPO
from paddle_pfc.data.image_folder import ImageFolderDataset, parse_label_file


def make_root(tmp_path: Path, entries: list[str]) -> Path:
    """``tmp_path/data`` with images/a.jpg and a label file of ``entries`` (label 0 each), and
    ``tmp_path/outside.jpg`` beside it."""
    from paddle_pfc.data._image import encode_jpeg
    from paddle_pfc.data.synthetic import SyntheticFaces

    jpeg = encode_jpeg(SyntheticFaces(num_classes=1, samples_per_class=1, image_size=32, seed=0)[0][0])
    root = tmp_path / "data"
    (root / "images").mkdir(parents=True)
    (root / "images" / "a.jpg").write_bytes(jpeg)
    (tmp_path / "outside.jpg").write_bytes(jpeg)
    (root / "label.txt").write_text("images/a.jpg\t0\n" + "".join(f"{e}\t0\n" for e in entries))
    return root


@pytest.mark.parametrize("entry, how", [
    ("../outside.jpg", "resolves to {tmp}/outside.jpg"),
    ("images/../../outside.jpg", "resolves to {tmp}/outside.jpg"),
    ("{tmp}/outside.jpg", "is an absolute path"),
    ("link.jpg", "is a symlink to {tmp}/outside.jpg"),
    ("linked_dir/outside.jpg", "resolves to {tmp}/outside.jpg"),
])
def test_a_path_leaving_the_root_is_an_error_naming_the_line(tmp_path, entry, how):
    entry = entry.format(tmp=tmp_path)
    root = make_root(tmp_path, [entry])
    (root / "link.jpg").symlink_to(tmp_path / "outside.jpg")
    (root / "linked_dir").symlink_to(tmp_path)
    message = (f"{root / 'label.txt'}, line 2: image {entry!r} {how.format(tmp=tmp_path)}, outside the data root "
               f"{root}")
    with pytest.raises(ValueError, match=re.escape(message)):
        ImageFolderDataset(str(root), image_size=32)
    # the explicit opt-in reads it
    assert len(ImageFolderDataset(str(root), image_size=32, allow_outside_root=True)) == 2


def test_symlinks_inside_the_root_are_fine(tmp_path):
    root = make_root(tmp_path, ["alias.jpg", "images_alias/a2.jpg"])
    (root / "alias.jpg").symlink_to(root / "images" / "a.jpg")
    (root / "images" / "a2.jpg").write_bytes((root / "images" / "a.jpg").read_bytes())
    (root / "images_alias").symlink_to(root / "images")
    samples, _ = parse_label_file(str(root / "label.txt"), str(root))
    assert len(samples) == 3


def test_im2rec_refuses_a_path_outside_the_root_unless_allowed(tmp_path, capsys):
    root = make_root(tmp_path, ["../outside.jpg"])
    im2rec = load_tool("im2rec")
    assert im2rec.main(["--root", str(root), "--output", str(tmp_path / "rec"), "--workers", "0"]) == 2
    err = capsys.readouterr().err
    assert f"{root / 'label.txt'}, line 2: image '../outside.jpg' resolves to {tmp_path / 'outside.jpg'}" in err
    assert not (tmp_path / "rec" / "train.rec").exists()
    assert im2rec.main(["--root", str(root), "--output", str(tmp_path / "rec"), "--workers", "0",
                        "--allow-outside-root"]) == 0
    assert "wrote 2 images" in capsys.readouterr().out


def test_training_config_key(tmp_path):
    from paddle_pfc.engine.config import load_config
    from paddle_pfc.engine.input import dataset_from_config

    root = make_root(tmp_path, ["../outside.jpg"])
    cfg = load_config(str(REPO / "tests" / "train_tiny.yaml"), ["data.kind=folder", f"data.root={root}",
                                                                 "data.num_classes=2"])
    with pytest.raises(ValueError, match="line 2: image '../outside.jpg' resolves to"):
        dataset_from_config(cfg.data, 32)
    cfg = load_config(str(REPO / "tests" / "train_tiny.yaml"), ["data.kind=folder", f"data.root={root}",
                                                                 "data.num_classes=2", "data.allow_outside_root=true"])
    assert len(dataset_from_config(cfg.data, 32)) == 2
