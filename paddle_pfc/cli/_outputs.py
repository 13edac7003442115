"""Output paths of the command-line tools, checked before any work (a run must not fail at its
end on a path it could have refused at its start)."""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")


def _blocking_file(path: Path) -> Path | None:
    """The first existing non-directory among ``path``'s parents (it would stop a ``mkdir``)."""
    for parent in reversed(path.absolute().parents):
        if parent.exists() and not parent.is_dir():
            return parent
    return None


def check_output_dir(parser: argparse.ArgumentParser, option: str, path: str | os.PathLike) -> None:
    """``path`` can be (or is) a folder: not an existing file, no file among its parents."""
    path = Path(path)
    blocking = path if path.exists() and not path.is_dir() else _blocking_file(path)
    if blocking is not None:
        parser.error(f"{option} {path}: {blocking} is a file, not a folder")


def check_output_file(parser: argparse.ArgumentParser, option: str, path: str | os.PathLike,
                      suffixes: tuple[str, ...] | None = None) -> None:
    """``path`` can be written as a file: not a folder, no file among its parents (missing parent
    folders are created when it is written), and one of ``suffixes`` where the format needs it."""
    path = Path(path)
    if path.is_dir():
        parser.error(f"{option} {path}: is a folder; give a file name")
    blocking = _blocking_file(path)
    if blocking is not None:
        parser.error(f"{option} {path}: {blocking} is a file, not a folder")
    if suffixes is not None and path.suffix.lower() not in suffixes:
        parser.error(f"{option} {path}: the file name must end in one of {', '.join(suffixes)}")


def draw_figure(path: str | os.PathLike, draw: Callable[[], None], standing: str) -> int:
    """Run ``draw`` (which writes the figure ``path``): 0 drawn (``wrote PATH``), 1 it failed, said on
    stderr with what still ``standing`` (the results written before it: a plot must not hide them)."""
    try:
        draw()
    except Exception as e:  # the results are out; a plot must not hide them
        print(f"error: {path} not drawn ({type(e).__name__}: {e}); {standing}", file=sys.stderr)
        return 1
    print(f"wrote {path}")
    return 0
