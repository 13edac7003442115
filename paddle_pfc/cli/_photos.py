"""The option of every command that reads images: how a non-square image becomes square."""
from __future__ import annotations

import argparse

from paddle_pfc.data.shape_policy import DEFAULT_NON_SQUARE, NON_SQUARE


def add_non_square_option(parser: argparse.ArgumentParser) -> None:
    """``--non-square pad|crop|stretch`` (``args.non_square``), the commands' counterpart of
    ``data.non_square`` (:mod:`paddle_pfc.data.photos`)."""
    parser.add_argument("--non-square", choices=NON_SQUARE, default=DEFAULT_NON_SQUARE,
                        help="how a non-square image becomes square before its resize: pad (with its "
                        "border), crop (its centre square) or stretch (resized without keeping its aspect "
                        "ratio); square images are the same under each (data.non_square of training)")
