"""insightface-style image folder: ``root/label.txt`` + image files.

``label.txt`` format, one sample per line::

    images/00000001.jpg<TAB>0

The path (relative to ``root``; may contain spaces) and the integer label are
separated by the LAST run of whitespace (tab or spaces). Blank lines are ignored.
Parsing is strict: a malformed line, a label that is not ASCII digits, a negative label, a
label ``>= num_classes`` (when given), an image listed twice or a missing image file raises
``ValueError("<label file>, line <n>: ...")``. A UTF-8 byte-order mark is allowed.

Every path must stay inside ``root``: an absolute path, a ``..`` that climbs out, or a symlink
(of the file or of a folder on its way) that resolves outside ``root`` is an error naming the
line, unless ``allow_outside_root`` (``data.allow_outside_root`` / ``im2rec --allow-outside-root``)
is set: a label file from elsewhere then cannot make a run read arbitrary files of the machine.
"""
from __future__ import annotations

import logging
import os
import stat

import numpy as np

from paddle_pfc.utils.errors import InputDataError
from paddle_pfc.utils.progress import Progress

from ._image import SizeLike, as_size, fit_size, read_rgb
from ._text import ascii_int

_log = logging.getLogger("paddle_pfc.data")

#: The largest label a line may hold (labels are int64 and index the classifier's classes).
MAX_LABEL = 2**62


def parse_label_file(
    label_file: str,
    root: str | None = None,
    num_classes: int | None = None,
    check_files: bool = True,
    skip_missing: bool = False,
    allow_outside_root: bool = False,
) -> tuple[list[tuple[str, int]], list[tuple[str, str]]]:
    """Parse ``label_file`` strictly.

    Returns ``(samples, skipped)``: ``samples`` is a list of ``(absolute_path, label)``;
    ``skipped`` lists ``(path, reason)`` of missing files dropped when ``skip_missing``.
    A path that resolves outside ``root`` is an error naming the line unless
    ``allow_outside_root`` (see the module doc).
    Checking millions of files takes a while: a progress line is logged every 10 s and at the
    end (logger ``paddle_pfc.data``).
    """
    root = os.path.dirname(os.path.abspath(label_file)) if root is None else root
    try:
        with open(label_file, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ValueError(f"{label_file}: cannot read label file ({e.strerror or e})") from e
    nul = raw.find(b"\0")
    if nul >= 0:  # no file name holds one: the file is binary or damaged
        line = raw.count(b"\n", 0, nul) + 1
        raise InputDataError(label_file, "a NUL byte (no path or label holds one)", f"line {line}")
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark (Windows editors) is not part of the first path
    except UnicodeDecodeError as e:
        raise ValueError(f"{label_file}: not UTF-8 text ({e})") from e
    samples: list[tuple[str, int]] = []
    skipped: list[tuple[str, str]] = []
    line_of: dict = {}  # normalised path -> (line, label) of its first listing
    inside = None if allow_outside_root else _RootCheck(root)
    lines = text.splitlines()
    with Progress(f"index {label_file}", len(lines), "lines", write=_log) as progress:
        for lineno, line in enumerate(lines, start=1):
            progress.update()
            entry = _parse_line(line, lineno, label_file, num_classes)
            if entry is None:
                continue
            rel, label = entry
            path = os.path.join(root, rel)
            is_file = None
            if inside is not None:
                outside, is_file = inside.escape(rel, path)
                if outside is not None:
                    raise ValueError(f"{label_file}, line {lineno}: image {rel!r} {outside}, outside the data "
                                     f"root {root} (set data.allow_outside_root: true, or im2rec "
                                     "--allow-outside-root, to read files outside it)")
            first = line_of.setdefault(os.path.normpath(path), (lineno, label))
            if first[0] != lineno:
                also = "" if first[1] == label else f" with label {first[1]}; here with label {label}"
                raise ValueError(f"{label_file}, line {lineno}: image {rel!r} is already listed on line "
                                 f"{first[0]}{also} (each image once)")
            if check_files and not (is_file if is_file is not None else os.path.isfile(path)):
                if skip_missing:
                    skipped.append((path, f"{label_file}, line {lineno}: file not found"))
                    continue
                raise ValueError(f"{label_file}, line {lineno}: image file {rel!r} not found ({path})")
            samples.append((path, label))
    return samples, skipped


class _RootCheck:
    """Whether a label file's path stays inside ``root`` (folders resolved once each)."""

    def __init__(self, root: str) -> None:
        self.given_root, self.root = root, os.path.realpath(root)
        self._folders: dict = {}

    def _inside(self, real: str) -> bool:
        return real == self.root or real.startswith(self.root.rstrip(os.sep) + os.sep)

    def escape(self, rel: str, path: str) -> tuple[str | None, bool | None]:
        """``(how rel leaves the root or None, whether path is a regular file when known)``: the
        file's one ``lstat`` also answers the missing-file check."""
        if os.path.isabs(rel):
            return "is an absolute path", None
        folder = os.path.dirname(rel)
        real_folder = self._folders.get(folder)
        if real_folder is None:
            real_folder = self._folders[folder] = os.path.realpath(os.path.join(self.given_root, folder))
        if not self._inside(real_folder):
            return f"resolves to {os.path.join(real_folder, os.path.basename(path))}", None
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return None, False
        if stat.S_ISLNK(mode):
            real = os.path.realpath(path)
            return (None, None) if self._inside(real) else (f"is a symlink to {real}", None)
        return None, stat.S_ISREG(mode)


def _parse_line(line: str, lineno: int, label_file: str, num_classes: int | None) -> tuple[str, int] | None:
    """``(relative path, label)`` of line ``lineno`` of ``label_file``, None for a blank line;
    ValueError naming the file and line otherwise."""
    s = line.strip()
    if not s:
        return None
    parts = s.rsplit(None, 1)
    if len(parts) != 2:
        raise ValueError(f"{label_file}, line {lineno}: malformed line {line!r} "
                         "(expected 'relative/path<TAB>label')")
    rel, lab = parts
    if "\t" in rel:  # e.g. 'path<TAB>label<TAB>extra': the path would end in a tab and a number
        raise ValueError(f"{label_file}, line {lineno}: malformed line {line!r}: {s.count(chr(9)) + 1} "
                         "tab-separated fields (expected 'relative/path<TAB>label')")
    try:
        label = ascii_int(lab)
    except ValueError:
        raise ValueError(f"{label_file}, line {lineno}: label {lab!r} is not an integer") from None
    if label < 0 or label > MAX_LABEL or (num_classes is not None and label >= num_classes):
        rng = f"[0, {num_classes})" if num_classes is not None else f"[0, {MAX_LABEL}]"
        raise ValueError(f"{label_file}, line {lineno}: label {label} outside {rng}")
    return rel, label


class ImageFolderDataset:
    """Random-access dataset over an insightface image folder.

    ``ds[i] -> (rgb uint8 [H, W, 3], label int)``. Images are decoded with cv2;
    grayscale/alpha are converted to 3-channel RGB; an image whose size differs
    from ``image_size`` is resized to it (``image_size=None`` keeps native size).

    ``num_classes``: when given, labels must be in ``[0, num_classes)``; otherwise
    it is ``max(label) + 1``.

    ``skip_bad=True``: every listed image is checked at construction (exists and
    decodes - this costs one full decode per image); bad ones are dropped and
    counted in ``num_skipped`` (details in ``skipped``: ``(path, reason)``).
    With ``skip_bad=False`` a missing file raises at construction and an
    undecodable one raises ``ValueError`` naming the file at ``__getitem__``.
    """

    def __init__(self, root: str, label_file: str = "label.txt", image_size: SizeLike = 112,
                 num_classes: int | None = None, skip_bad: bool = False, allow_outside_root: bool = False):
        self.root = os.path.abspath(root)
        self.label_file = label_file if os.path.isabs(label_file) else os.path.join(self.root, label_file)
        self.image_size = as_size(image_size)
        samples, skipped = parse_label_file(self.label_file, self.root, num_classes,
                                            check_files=True, skip_missing=skip_bad,
                                            allow_outside_root=allow_outside_root)
        if skip_bad:
            good = []
            for path, label in samples:
                try:
                    read_rgb(path)
                except ValueError as e:
                    skipped.append((path, str(e)))
                    continue
                good.append((path, label))
            samples = good
        for path, reason in skipped:
            _log.warning("skip_bad: skipped %s (%s)", path, reason)
        if skipped:
            _log.warning("skip_bad: %d of %d images of %s skipped", len(skipped),
                         len(skipped) + len(samples), self.label_file)
        if not samples:
            raise ValueError(f"{self.label_file}: no usable samples")
        self.samples: list[tuple[str, int]] = samples
        self.skipped: list[tuple[str, str]] = skipped
        self.labels = np.asarray([lab for _, lab in samples], dtype=np.int64)
        self.num_classes = int(num_classes) if num_classes is not None else int(self.labels.max()) + 1

    @property
    def num_skipped(self) -> int:
        """Number of samples dropped by ``skip_bad``."""
        return len(self.skipped)

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, index: int) -> tuple[np.ndarray, int]:
        path, label = self.samples[index]
        return fit_size(read_rgb(path), self.image_size), int(label)
