"""The images a ``label.txt`` lists, as arrays: a sequence of ``(path, label)`` that holds no
Python object per image.

The relative paths are one ``uint8`` buffer with ``int64`` offsets, the labels an ``int64`` array,
the line numbers an array only when they are not ``1 .. N``. Forked loader workers read the
arrays their parent built (no copy); a pickled list (``spawn`` workers) carries them whole,
about the label file's size.
"""
from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence

import numpy as np

from paddle_pfc.utils.errors import InputDataError


class ImageList(Sequence):
    """``items[i] -> (os.path.join(root, relative path), label)``; see the module doc.

    ``files_checked``: every image file was found at parse time; otherwise :meth:`checked_path`
    finds it when it is read (and, unless ``allow_outside_root``, that a symlink stays inside
    ``root``).
    """

    def __init__(self, root: str, label_file: str, paths: np.ndarray, offsets: np.ndarray, labels: np.ndarray,
                 lines: np.ndarray | None, files_checked: bool, allow_outside_root: bool) -> None:
        self.root, self.label_file = root, label_file
        self.paths, self.offsets, self.labels = paths, offsets, labels
        # lines count up from 1: they are 1 .. N exactly when the last is N
        self.lines = None if lines is None or lines.size == 0 or int(lines[-1]) == lines.size else lines
        self.files_checked, self.allow_outside_root = files_checked, allow_outside_root
        self._real_root: str | None = None

    def __len__(self) -> int:
        return int(self.labels.size)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return self.path_of(i), int(self.labels[i])

    def __iter__(self) -> Iterator[tuple[str, int]]:
        return (self[i] for i in range(len(self)))

    def rel_bytes(self, i: int) -> bytes:
        """The path of entry ``i`` as the label file writes it (UTF-8 bytes)."""
        i = range(len(self))[i]
        return self.paths[self.offsets[i]:self.offsets[i + 1]].tobytes()

    def rel_of(self, i: int) -> str:
        return self.rel_bytes(i).decode("utf-8")

    def rels_of(self, indices: np.ndarray) -> list[str]:
        """The relative paths of entries ``indices``, decoded in one pass."""
        indices = np.asarray(indices, np.int64)
        starts, lengths = self.offsets[indices], self.offsets[indices + 1] - self.offsets[indices]
        total = int(lengths.sum())
        shift = np.repeat(np.arange(indices.size), lengths)  # one separator before each later path
        source = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths) + np.repeat(starts, lengths)
        out = np.full(total + indices.size, 10, np.uint8)
        out[np.arange(total) + shift] = self.paths[source]
        return out.tobytes().decode("utf-8").split("\n")[:indices.size]

    def path_of(self, i: int) -> str:
        """``os.path.join(root, relative path)`` of entry ``i``."""
        return os.path.join(self.root, self.rel_of(i))

    def line_of(self, i: int) -> int:
        """The line of the label file entry ``i`` is on."""
        i = range(len(self))[i]
        return int(self.lines[i]) if self.lines is not None else i + 1

    def take(self, keep: np.ndarray) -> ImageList:
        """The entries where ``keep`` (bool, one per entry) holds."""
        lengths = np.diff(self.offsets)[keep]
        byte_keep = np.repeat(keep, np.diff(self.offsets))
        offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        lines = (self.lines if self.lines is not None else np.arange(1, len(self) + 1))[keep]
        return ImageList(self.root, self.label_file, self.paths[byte_keep], offsets, self.labels[keep], lines,
                         self.files_checked, self.allow_outside_root)

    def checked_path(self, i: int) -> str:
        """:meth:`path_of` ``i``; when the files were not checked at parse time, an error naming the
        line if the file is missing or (unless ``allow_outside_root``) a symlink leading out of the root."""
        path = self.path_of(i)
        if self.files_checked:
            return path
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            mode = None
        if mode is None or (stat.S_ISLNK(mode) and not os.path.isfile(path)):
            raise InputDataError(f"{self.label_file}, line {self.line_of(i)}: image file {self.rel_of(i)!r} not "
                                 f"found ({path})")
        if stat.S_ISLNK(mode) and not self.allow_outside_root:
            if self._real_root is None:
                self._real_root = os.path.realpath(self.root)
            real, root = os.path.realpath(path), self._real_root
            if not (real == root or real.startswith(root.rstrip(os.sep) + os.sep)):
                raise InputDataError(f"{self.label_file}, line {self.line_of(i)}: image {self.rel_of(i)!r} is a "
                                     f"symlink to {real}, outside the data root {self.root} (set "
                                     "data.allow_outside_root: true to read files outside it)")
        return path
