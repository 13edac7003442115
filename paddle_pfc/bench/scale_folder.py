"""Image folders of the size users bring, for benchmarks: a full ``label.txt`` and only the images
a loader reads.

:func:`write_label_file` lists ``num_images`` images spread evenly over ``num_classes`` folders
(``id_0001234/0000012.jpg<TAB>1234``); :func:`write_images` writes the listed images of the given
indices (a loader's first batches), the others are absent: the dataset over such a folder checks
each file when it is read (beyond :data:`~paddle_pfc.data.image_folder.FILE_CHECK_LIMIT` images).
:func:`write_tree` makes a small real tree (every file present, folders reached through symlinks
inside the root) to measure the file and folder checks.
"""
from __future__ import annotations

import os

import numpy as np

from .scale_rec import _ascii, class_ends

_WIDTH = 7


def _fixed(values: np.ndarray) -> np.ndarray:
    """Zero-padded ``_WIDTH``-digit ASCII of ``values`` as uint8 ``[n, _WIDTH]``."""
    return (values[:, None] // 10 ** np.arange(_WIDTH - 1, -1, -1) % 10 + 48).astype(np.uint8)


def label_lines(first: int, last: int, ends: np.ndarray) -> bytes:
    """The lines of images ``first .. last-1`` (classes ending at ``ends``), vectorized."""
    index = np.arange(first, last, dtype=np.int64)
    labels = np.searchsorted(ends, index, side="right")
    within = index - np.concatenate(([0], ends[:-1]))[labels]
    n = index.size

    def const(text: bytes) -> np.ndarray:
        return np.broadcast_to(np.frombuffer(text, np.uint8), (n, len(text)))

    lines = np.concatenate([const(b"id_"), _fixed(labels), const(b"/"), _fixed(within), const(b".jpg\t"),
                            _ascii(labels), const(b"\n")], axis=1)
    return lines[lines != 0].tobytes()


def relative_path(index: int, ends: np.ndarray) -> str:
    """The path :func:`label_lines` lists for image ``index``."""
    label = int(np.searchsorted(ends, index, side="right"))
    within = index - (int(ends[label - 1]) if label else 0)
    return f"id_{label:0{_WIDTH}d}/{within:0{_WIDTH}d}.jpg"


def write_label_file(path: str, num_images: int, num_classes: int, block: int = 1 << 20) -> int:
    """Write the ``label.txt`` of the module doc; returns its size in bytes."""
    ends = class_ends(num_images, num_classes)
    with open(path, "wb") as f:
        for start in range(0, num_images, block):
            f.write(label_lines(start, min(num_images, start + block), ends))
        return f.tell()


def write_images(root: str, num_images: int, num_classes: int, indices: np.ndarray, jpeg: bytes) -> None:
    """Write the images of ``indices`` (their folders created), the others left absent."""
    ends = class_ends(num_images, num_classes)
    for index in np.unique(indices).tolist():
        path = os.path.join(root, relative_path(index, ends))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(jpeg)


def write_empty_images(root: str, num_images: int, num_classes: int, linked_every: int = 0) -> None:
    """An empty file for each listed image; with ``linked_every``, every ``linked_every``-th
    folder is a symlink to a folder under ``root/store``."""
    ends = class_ends(num_images, num_classes)
    start = 0
    for label, end in enumerate(ends.tolist()):
        folder = os.path.join(root, f"id_{label:0{_WIDTH}d}")
        linked = linked_every and label % linked_every == 0
        real = os.path.join(root, "store", f"id_{label:0{_WIDTH}d}") if linked else folder
        os.makedirs(real, exist_ok=True)
        if real != folder:
            os.symlink(real, folder)
        for within in range(end - start):
            open(os.path.join(real, f"{within:0{_WIDTH}d}.jpg"), "wb").close()
        start = end


def write_tree(root: str, num_images: int, num_classes: int, linked_every: int = 10) -> None:
    """A folder of ``num_images`` empty image files in ``num_classes`` folders (every
    ``linked_every``-th one a symlink inside the root) and its ``label.txt``."""
    write_empty_images(root, num_images, num_classes, linked_every)
    write_label_file(os.path.join(root, "label.txt"), num_images, num_classes)
