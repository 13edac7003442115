"""The commands' help: descriptions as written, every option's default shown."""
from __future__ import annotations

import argparse

__all__ = ["HelpFormatter"]


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the description's line breaks and adds ``(default: X)`` to every option that has a
    default other than None / False and does not state it already."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text or "%(default)" in text or action.default is None or action.default is False \
                or action.default in (argparse.SUPPRESS, []):  # "is": a default of 0 equals False
            return text
        if action.option_strings or action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE):
            text += " (default: %(default)s)"
        return text.strip()
