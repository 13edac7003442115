"""insightface-style image folder: ``root/label.txt`` + image files.

``label.txt`` format, one sample per line::

    images/00000001.jpg<TAB>0

The path (relative to ``root``; may contain spaces) and the integer label are
separated by the LAST run of whitespace (tab or spaces). Blank lines are ignored.
Parsing is strict: a malformed line, a label that is not ASCII digits, a negative label, a
label ``>= num_classes`` (when given), an image listed twice or a missing image file raises
``ValueError("<label file>, line <n>: ...")``; so does a NUL byte. A UTF-8 byte-order mark is allowed.

Every path must stay inside ``root``: an absolute path, a ``..`` that climbs out, or a symlink
(of the file or of a folder on its way) that resolves outside ``root`` is an error naming the
line, unless ``allow_outside_root`` (``data.allow_outside_root`` / ``im2rec --allow-outside-root``)
is set: a label file from elsewhere then cannot make a run read arbitrary files of the machine.

At scale (WebFace42M: 42 million lines) the file is parsed in blocks with numpy
(:mod:`.label_blocks`) into one buffer of paths and an ``int64`` label array (:mod:`.label_list`),
a block the vectorized parse does not take being parsed line by line; folders are resolved once
each and duplicates found by hashing (:mod:`.label_checks`). The checks run in this order over the
whole file, each naming its first bad line: the lines' syntax and labels, paths leaving the root
through their folders, images listed twice, then the image files. Whether each file exists (and,
if a symlink, stays inside the root) costs one ``lstat`` a file, tens of microseconds when the
file system's cache does not hold it: ``check_files="auto"`` checks every file up to
:data:`FILE_CHECK_LIMIT` images and otherwise each file when it is read (a missing one is then an
error naming its line at the step that reads it); ``True`` checks every file at any size
(``skip_bad`` and ``im2rec`` do, as they read every image anyway).
"""
from __future__ import annotations

import logging
import os
import stat
import time

import numpy as np

from paddle_pfc.utils.errors import InputDataError
from paddle_pfc.utils.heap import release_free_heap
from paddle_pfc.utils.progress import Progress

from ._image import SizeLike, as_size, fit_size, read_rgb
from .label_blocks import (
    BLOCK_BYTES,
    BOM,
    MAX_LABEL,  # noqa: F401  (callers import it from here)
    parse_block,
)
from .label_checks import FolderResolver, folder_groups, irregular, release_powers, span_hashes
from .label_list import ImageList
from .shape_policy import DEFAULT_NON_SQUARE, checked_non_square

_log = logging.getLogger("paddle_pfc.data")

#: Up to this many images, ``check_files="auto"`` checks every image file at start-up.
FILE_CHECK_LIMIT = 1_000_000


def parse_label_file(
    label_file: str,
    root: str | None = None,
    num_classes: int | None = None,
    check_files: bool | str = True,
    skip_missing: bool = False,
    allow_outside_root: bool = False,
) -> tuple[ImageList, list[tuple[str, str]]]:
    """Parse ``label_file`` strictly (see the module doc).

    Returns ``(samples, skipped)``: ``samples`` an :class:`ImageList` (a sequence of
    ``(os.path.join(root, path), label)`` backed by arrays: ``samples.labels``, ``samples.path_of(i)``);
    ``skipped`` lists ``(path, reason)`` of missing files dropped when ``skip_missing``.
    ``check_files``: ``True`` / ``False`` / ``"auto"`` (every file when at most
    :data:`FILE_CHECK_LIMIT` are listed, else each when it is read). A progress line is logged every
    10 s and at the end (logger ``paddle_pfc.data``).
    """
    root = os.path.dirname(os.path.abspath(label_file)) if root is None else root
    paths, offsets, labels, lines = _read_entries(label_file, num_classes)
    check = len(labels) <= FILE_CHECK_LIMIT if check_files == "auto" else bool(check_files)
    items = ImageList(root, label_file, paths, offsets, labels, lines, check, allow_outside_root)
    _check_paths(items, allow_outside_root)
    release_powers()
    release_free_heap()
    skipped: list[tuple[str, str]] = []
    if check:
        items, skipped = _check_files(items, skip_missing, allow_outside_root)
    return items, skipped


def _read_entries(label_file: str, num_classes: int | None) -> tuple[np.ndarray, ...]:
    """``(paths buffer, offsets [N+1], labels [N], line numbers [N])`` of ``label_file``, read in blocks."""
    try:
        size = os.path.getsize(label_file)
        with open(label_file, "rb") as f:
            breaks, last = 0, b"\n"
            for block in iter(lambda: f.read(BLOCK_BYTES), b""):
                breaks, last = breaks + block.count(b"\n"), block[-1:]
            f.seek(0)
            _log.info("data: indexing %s (%.1f MB)", label_file, size / 1e6)
            most = breaks + 1
            buf, offsets = np.empty(size, np.uint8), np.zeros(most + 1, np.int64)
            labels, lines = np.empty(most, np.int64), np.empty(most, np.int32 if most < (1 << 31) else np.int64)
            used = count = 0
            line_no, rest = 1, b""
            with Progress(f"index {label_file}", breaks + (last != b"\n"), "lines", write=_log) as bar:
                while True:
                    block = f.read(BLOCK_BYTES)
                    if line_no == 1 and not rest and block.startswith(BOM):
                        block = block[len(BOM):]  # a byte-order mark (Windows editors) is not part of the first path
                    data = rest + block
                    cut = data.rfind(b"\n") + 1 if block else len(data)
                    data, rest = data[:cut], data[cut:]
                    if data:
                        part = parse_block(data if data.endswith(b"\n") else data + b"\n", line_no, label_file,
                                           num_classes)
                        k = part.labels.size
                        buf[used:used + part.paths.size] = part.paths
                        offsets[count + 1:count + 1 + k] = used + part.ends
                        labels[count:count + k], lines[count:count + k] = part.labels, part.lines
                        used, count, line_no = used + part.paths.size, count + k, line_no + part.line_count
                        bar.total = max(bar.total, line_no - 1)
                        bar.update(part.line_count)
                    if not block:
                        break
    except OSError as e:
        raise InputDataError(f"{label_file}: cannot read label file ({e.strerror or e})") from e
    return buf[:used], offsets[:count + 1], labels[:count], lines[:count]


def _escape_message(items: ImageList, i: int, how: str) -> str:
    return (f"{items.label_file}, line {items.line_of(i)}: image {items.rel_of(i)!r} {how}, outside the data "
            f"root {items.root} (set data.allow_outside_root: true, or im2rec --allow-outside-root, to read "
            "files outside it)")


def _check_paths(items: ImageList, allow_outside_root: bool) -> None:
    """Refuse the first path leaving the root through its folder and the first image listed twice."""
    odd = irregular(items.paths, items.offsets)
    found: list[tuple[int, str]] = []
    if not allow_outside_root:
        found += _folder_escapes(items, odd)
    twice = _listed_twice(items, odd)
    if twice is not None:
        found.append(twice)
    if found:
        raise InputDataError(min(found, key=lambda entry: entry[0])[1])


def _folder_escapes(items: ImageList, odd: np.ndarray) -> list[tuple[int, str]]:
    """``(index, message)`` of the first path whose folder resolves outside the root, if any."""
    reps, collided = folder_groups(items.paths, items.offsets, odd)
    resolver = FolderResolver(items.root)
    reps = np.sort(reps)
    for start in range(0, reps.size, 1 << 16):
        chunk = reps[start:start + (1 << 16)]
        for i, rel in zip(chunk.tolist(), items.rels_of(chunk)):
            folder, _, name = rel.rpartition("/")
            real = resolver.real(folder) if folder else resolver.root
            if not resolver.inside(real):
                how = f"resolves to {os.path.join(real, name)}"
                return [(i, _escape_message(items, i, how))] + _singly(items, collided, odd, i)
    return _singly(items, collided, odd, len(items))


def _singly(items: ImageList, collided: np.ndarray, odd: np.ndarray, before: int) -> list[tuple[int, str]]:
    """The first escape among the paths checked one by one (``os.path.realpath`` of their folder)."""
    check = _RootCheck(items.root)
    for i in np.union1d(collided, odd).tolist():
        if i >= before:
            break
        how = check.escape(items.rel_of(i), items.path_of(i))
        if how is not None:
            return [(i, _escape_message(items, i, how))]
    return []


def _key(items: ImageList, i: int, root: str) -> bytes:
    """The normalised path of irregular entry ``i``: relative to ``root`` when inside it, else absolute."""
    path = os.path.normpath(os.path.join(root, items.rel_of(i)))
    return (path[len(root) + 1:] if path.startswith(root + os.sep) else path).encode("utf-8")


def _listed_twice(items: ImageList, odd: np.ndarray) -> tuple[int, str] | None:
    """``(index, message)`` of the first entry whose image an earlier line lists, if any."""
    root = os.path.normpath(os.path.abspath(items.root))
    odd_keys = {i: _key(items, i, root) for i in odd.tolist()}
    hashes = span_hashes(items.paths, items.offsets[:-1], items.offsets[1:])
    if odd_keys:
        joined = np.frombuffer(b"".join(odd_keys.values()), np.uint8)
        ends = np.cumsum([len(k) for k in odd_keys.values()])
        hashes[odd] = span_hashes(joined, ends - [len(k) for k in odd_keys.values()], ends)
    ordered = np.sort(hashes)
    repeated = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
    del ordered
    if repeated.size == 0:
        return None
    first_of: dict[bytes, int] = {}
    for i in np.flatnonzero(np.isin(hashes, repeated)).tolist():
        key = odd_keys.get(i) or items.rel_bytes(i)
        first = first_of.setdefault(key, i)
        if first != i:
            a, b = int(items.labels[first]), int(items.labels[i])
            also = "" if a == b else f" with label {a}; here with label {b}"
            return i, (f"{items.label_file}, line {items.line_of(i)}: image {items.rel_of(i)!r} is already listed "
                       f"on line {items.line_of(first)}{also} (each image once)")
    return None


def _check_files(items: ImageList, skip_missing: bool, allow_outside_root: bool) -> tuple[ImageList, list]:
    """Each image file exists (and, unless ``allow_outside_root``, a symlink stays inside the root)."""
    skipped: list[tuple[str, str]] = []
    keep = np.ones(len(items), bool)
    check = None if allow_outside_root else _RootCheck(items.root)
    with Progress(f"check the image files of {items.label_file}", len(items), "files", write=_log,
                  enabled=len(items) > 100_000) as bar:
        for i in range(len(items)):
            bar.update()
            path = items.path_of(i)
            is_file = None
            if check is not None:
                outside, is_file = check.file_escape(path)
                if outside is not None:
                    raise InputDataError(_escape_message(items, i, outside))
            if not (is_file if is_file is not None else os.path.isfile(path)):
                where = f"{items.label_file}, line {items.line_of(i)}"
                if not skip_missing:
                    raise InputDataError(f"{where}: image file {items.rel_of(i)!r} not found ({path})")
                skipped.append((path, f"{where}: file not found"))
                keep[i] = False
    return (items if keep.all() else items.take(keep)), skipped


class _RootCheck:
    """Whether a label file's path stays inside ``root`` (folders resolved once each)."""

    def __init__(self, root: str) -> None:
        self.given_root, self.root = root, os.path.realpath(root)
        self._folders: dict = {}

    def _inside(self, real: str) -> bool:
        return real == self.root or real.startswith(self.root.rstrip(os.sep) + os.sep)

    def escape(self, rel: str, path: str) -> str | None:
        """How ``rel`` leaves the root through its folder (absolute, ``..``, a folder symlink), or None."""
        if os.path.isabs(rel):
            return "is an absolute path"
        folder = os.path.dirname(rel)
        real_folder = self._folders.get(folder)
        if real_folder is None:
            real_folder = self._folders[folder] = os.path.realpath(os.path.join(self.given_root, folder))
        if not self._inside(real_folder):
            return f"resolves to {os.path.join(real_folder, os.path.basename(path))}"
        return None

    def file_escape(self, path: str) -> tuple[str | None, bool | None]:
        """``(how the file leaves the root or None, whether it is a regular file when known)``: the
        file's one ``lstat`` also answers the missing-file check."""
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return None, False
        if stat.S_ISLNK(mode):
            real = os.path.realpath(path)
            return (None, None) if self._inside(real) else (f"is a symlink to {real}", None)
        return None, stat.S_ISREG(mode)


class ImageFolderDataset:
    """Random-access dataset over an insightface image folder.

    ``ds[i] -> (rgb uint8 [H, W, 3], label int)``. Images are decoded with cv2;
    grayscale/alpha are converted to 3-channel RGB; an image whose size differs
    from ``image_size`` is brought to it by the policy ``non_square`` (``pad`` | ``crop`` |
    ``stretch``, :func:`~paddle_pfc.data._image.fit_size`; ``image_size=None`` keeps native size).

    ``num_classes``: when given, labels must be in ``[0, num_classes)``; otherwise
    it is ``max(label) + 1``.

    ``skip_bad=True``: every listed image is checked at construction (exists and
    decodes - this costs one full decode per image); bad ones are dropped and
    counted in ``num_skipped`` (details in ``skipped``: ``(path, reason)``).
    With ``skip_bad=False`` a missing file raises at construction (up to
    :data:`FILE_CHECK_LIMIT` images; beyond, at ``__getitem__``, naming its line) and an
    undecodable one raises ``ValueError`` naming the file at ``__getitem__``.
    ``samples``: the :class:`ImageList` (``labels`` int64, ``path_of(i)``).
    """

    def __init__(self, root: str, label_file: str = "label.txt", image_size: SizeLike = 112,
                 num_classes: int | None = None, skip_bad: bool = False, allow_outside_root: bool = False,
                 non_square: str = DEFAULT_NON_SQUARE):
        started = time.perf_counter()
        self.non_square = checked_non_square(non_square)
        self.root = os.path.abspath(root)
        self.label_file = label_file if os.path.isabs(label_file) else os.path.join(self.root, label_file)
        self.image_size = as_size(image_size)
        samples, skipped = parse_label_file(self.label_file, self.root, num_classes,
                                            check_files=True if skip_bad else "auto", skip_missing=skip_bad,
                                            allow_outside_root=allow_outside_root)
        if skip_bad:
            samples = self._decodable(samples, skipped)
        for path, reason in skipped:
            _log.warning("skip_bad: skipped %s (%s)", path, reason)
        if skipped:
            _log.warning("skip_bad: %d of %d images of %s skipped", len(skipped),
                         len(skipped) + len(samples), self.label_file)
        if not len(samples):
            raise ValueError(f"{self.label_file}: no usable samples")
        self.samples: ImageList = samples
        self.skipped: list[tuple[str, str]] = skipped
        self.labels = samples.labels
        self.num_classes = int(num_classes) if num_classes is not None else int(self.labels.max()) + 1
        _log.info("data: %s: %d images of %d classes in %.1f s (image files checked %s)", self.label_file,
                  len(samples), self.num_classes, time.perf_counter() - started,
                  "at start-up" if samples.files_checked else "when read")

    @staticmethod
    def _decodable(samples: ImageList, skipped: list) -> ImageList:
        """The samples whose image decodes; the others noted in ``skipped``."""
        keep = np.ones(len(samples), bool)
        for i in range(len(samples)):
            path = samples.path_of(i)
            try:
                read_rgb(path)
            except ValueError as e:
                skipped.append((path, str(e)))
                keep[i] = False
        return samples if keep.all() else samples.take(keep)

    @property
    def num_skipped(self) -> int:
        """Number of samples dropped by ``skip_bad``."""
        return len(self.skipped)

    def __len__(self) -> int:
        return len(self.samples)

    def read_labels(self) -> np.ndarray:
        """Every sample's label (int64 ``[len(self)]``, from the label file)."""
        return self.labels

    def __getitem__(self, index: int) -> tuple[np.ndarray, int]:
        image = read_rgb(self.samples.checked_path(index))
        return fit_size(image, self.image_size, self.non_square), int(self.labels[index])
