"""``label.txt`` read in blocks into arrays: every relative path in one bytes buffer, labels int64.

A block (complete lines) whose text holds nothing the vectorized parse does not handle (a NUL, a
line break or whitespace of Python's other than space, tab, ``\\n`` and ``\\r\\n``; non-UTF-8 or
Unicode whitespace) and whose every line is ``path<whitespace>digits`` (at most 18), the path without a
tab, the label below ``num_classes``, is parsed with numpy; any other block is parsed line by line
(:func:`parse_line`), which accepts what the format allows and names the first bad line. Line numbers
count lines the way ``str.splitlines`` does.
"""
from __future__ import annotations

import numpy as np

from paddle_pfc.utils.errors import InputDataError

from ._text import ascii_int

BLOCK_BYTES = 1 << 21
BOM = b"\xef\xbb\xbf"
_MAX_DIGITS = 18  # below MAX_LABEL: the vectorized parse needs no range check beyond num_classes
#: The largest label a line may hold (labels are int64 and index the classifier's classes).
MAX_LABEL = 2**62
_ODD_BREAKS = (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f")  # splitlines/split take these
_UNICODE_SPACE = (b"\xc2\x85", b"\xc2\xa0", b"\xe1\x9a\x80", b"\xe2\x80", b"\xe2\x81\x9f", b"\xe3\x80\x80")


class Parsed:
    """What a block yields: path bytes, their ends (exclusive, within ``paths``), labels and line numbers."""

    def __init__(self, paths: np.ndarray, ends: np.ndarray, labels: np.ndarray, lines: np.ndarray, count: int):
        self.paths, self.ends, self.labels, self.lines, self.line_count = paths, ends, labels, lines, count


def parse_block(data: bytes, first_line: int, label_file: str, num_classes: int | None) -> Parsed:
    """The entries of ``data`` (complete lines, ending with ``\\n``) whose first line is ``first_line``."""
    nul = data.find(b"\0")
    if nul >= 0:  # no file name holds one: the file is binary or damaged
        line = first_line + data.count(b"\n", 0, nul)
        raise InputDataError(label_file, "a NUL byte (no path or label holds one)", f"line {line}")
    parsed = _fast_block(data, first_line, num_classes) if _plain(data) else None
    return parsed if parsed is not None else _block_by_lines(data, first_line, label_file, num_classes)


def _plain(data: bytes) -> bool:
    if any(c in data for c in _ODD_BREAKS) or data.count(b"\r") != data.count(b"\r\n"):
        return False
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return not any(c in data for c in _UNICODE_SPACE)


_SPACE = np.zeros(256, bool)
_SPACE[[9, 13, 32]] = True
_DIGIT = np.zeros(256, bool)
_DIGIT[48:58] = True


def _walk(a: np.ndarray, at: np.ndarray, limit: np.ndarray, table: np.ndarray, step: int,
          most: int = 1 << 30) -> np.ndarray:
    """Move each position ``at`` in ``a`` by ``step`` while the byte it passes over is in ``table``, not past
    ``limit`` and at most ``most`` times (vectorized over lines; one pass a byte moved)."""
    at = at.copy()
    look = -1 if step < 0 else 0
    for _ in range(most):
        move = np.flatnonzero((at != limit) & table[a[at + look]])
        if move.size == 0:
            break
        at[move] += step
    return at


def _fast_block(data: bytes, first_line: int, num_classes: int | None) -> Parsed | None:
    """Numpy parse of a plain block; None when a line is not ``path<ws>digits`` or a label is out of range."""
    a = np.frombuffer(data, np.uint8)
    breaks = np.flatnonzero(a == 10)
    starts = np.concatenate(([0], breaks[:-1] + 1))
    ends = _walk(a, breaks, starts, _SPACE, -1)  # trailing spaces, tabs, the '\r' of '\r\n'
    full = ends > starts
    starts, ends = starts[full], ends[full]
    if ends.size == 0:
        return None
    begins = _walk(a, starts, ends, _SPACE, 1)
    label_starts = _walk(a, ends, begins, _DIGIT, -1, _MAX_DIGITS + 1)
    lengths = ends - label_starts
    if not ((lengths >= 1) & (lengths <= _MAX_DIGITS) & (label_starts > begins)).all():
        return None
    if not _SPACE[a[label_starts - 1]].all():
        return None  # '-1', 'x1', '1_0' ... : the line-by-line parse names them
    path_ends = _walk(a, label_starts, begins, _SPACE, -1)
    width = int(lengths.max())
    cols = ends[:, None] - width + np.arange(width)
    values = np.where(cols >= label_starts[:, None], a[np.maximum(cols, 0)].astype(np.int64) - 48, 0)
    labels = values @ (10 ** np.arange(width - 1, -1, -1, dtype=np.int64))
    if num_classes is not None and (labels >= num_classes).any():
        return None
    mark = np.zeros(a.size, np.int8)
    mark[begins] = 1
    mark[path_ends] -= 1
    paths = a[np.cumsum(mark, dtype=np.int8).view(bool)]
    if (paths == 9).any():
        return None  # a tab inside a path: 'path<TAB>label<TAB>extra'
    lines = first_line + np.flatnonzero(full)
    return Parsed(paths, np.cumsum(path_ends - begins), labels, lines, breaks.size)


def _block_by_lines(data: bytes, first_line: int, label_file: str, num_classes: int | None) -> Parsed:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = first_line + data.count(b"\n", 0, e.start)
        raise InputDataError(f"{label_file}, line {line}: not UTF-8 text ({e})") from None
    rels: list[bytes] = []
    labels: list[int] = []
    lines: list[int] = []
    all_lines = text.splitlines()
    for line_no, line in enumerate(all_lines, start=first_line):
        entry = parse_line(line, line_no, label_file, num_classes)
        if entry is not None:
            rels.append(entry[0].encode("utf-8"))
            labels.append(entry[1])
            lines.append(line_no)
    paths = np.frombuffer(b"".join(rels), np.uint8)
    ends = np.cumsum(np.fromiter(map(len, rels), np.int64, len(rels)))
    return Parsed(paths, ends, np.asarray(labels, np.int64).reshape(-1), np.asarray(lines, np.int64).reshape(-1),
                  len(all_lines))


def parse_line(line: str, lineno: int, label_file: str, num_classes: int | None) -> tuple[str, int] | None:
    """``(relative path, label)`` of line ``lineno`` of ``label_file``, None for a blank line;
    ValueError naming the file and line otherwise."""
    s = line.strip()
    if not s:
        return None
    parts = s.rsplit(None, 1)
    if len(parts) != 2:
        raise InputDataError(f"{label_file}, line {lineno}: malformed line {line!r} "
                             "(expected 'relative/path<TAB>label')")
    rel, lab = parts
    if "\t" in rel:  # e.g. 'path<TAB>label<TAB>extra': the path would end in a tab and a number
        raise InputDataError(f"{label_file}, line {lineno}: malformed line {line!r}: {s.count(chr(9)) + 1} "
                             "tab-separated fields (expected 'relative/path<TAB>label')")
    try:
        label = ascii_int(lab)
    except ValueError:
        raise InputDataError(f"{label_file}, line {lineno}: label {lab!r} is not an integer") from None
    if label < 0 or label > MAX_LABEL or (num_classes is not None and label >= num_classes):
        rng = f"[0, {num_classes})" if num_classes is not None else f"[0, {MAX_LABEL}]"
        raise InputDataError(f"{label_file}, line {lineno}: label {label} outside {rng}")
    return rel, label
