"""The option of every command that reads images: how a non-square image becomes square."""
from __future__ import annotations

import argparse

from paddle_pfc.data.shape_policy import DEFAULT_NON_SQUARE, NON_SQUARE, recorded_non_square


def add_non_square_option(parser: argparse.ArgumentParser, model_default: bool = False) -> None:
    """``--non-square pad|crop|stretch`` (``args.non_square``), the commands' counterpart of
    ``data.non_square`` (:mod:`paddle_pfc.data.photos`). ``model_default``: a command that reads a
    model leaves it None when not given (the policy the model was trained with, else stretch)."""
    default = "the policy the model was trained with, where it says, else stretch" if model_default else \
        DEFAULT_NON_SQUARE
    parser.add_argument("--non-square", choices=NON_SQUARE, default=None if model_default else DEFAULT_NON_SQUARE,
                        help="how a non-square image becomes square before its resize: pad (with its "
                        "border), crop (its centre square) or stretch (resized without keeping its aspect "
                        f"ratio); square images are the same under each (data.non_square of training; default: "
                        f"{default})")


def model_policy_line(given: str | None, policy: str) -> str | None:
    """The line saying the model's own ``policy`` replaced the default (None when ``--non-square``
    was ``given`` or the policy is the default)."""
    if given is not None or policy == DEFAULT_NON_SQUARE:
        return None
    return f"non-square images made square by {policy}: the policy the model was trained with (--non-square to " \
        "choose another)"


def checkpoint_non_square(checkpoint: str) -> str | None:
    """The ``data.non_square`` a training checkpoint's run used (its ``meta.json`` config; a run's
    ``checkpoints/`` folder: its newest), or None."""
    from paddle_pfc.engine.checkpoint import read_meta, resolve_checkpoint

    config = read_meta(resolve_checkpoint(checkpoint)).get("config")
    return recorded_non_square(config.get("data") if isinstance(config, dict) else None)
