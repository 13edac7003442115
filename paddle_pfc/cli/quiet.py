"""The commands' own lines first: Paddle's start-up noise kept out unless asked for.

By default (:func:`quiet_paddle`, called by :func:`paddle_pfc.cli.entry.run` before Paddle is
imported): Paddle's C++ INFO and WARNING log lines (glog: ``GLOG_minloglevel=2``, unless the
environment sets it), the ``UserWarning`` / ``DeprecationWarning`` raised inside Paddle's Python
modules, and the INFO lines of its extension builder are not shown; errors still are.
``PADDLE_PFC_VERBOSE=1`` shows everything, and lets the commands print the full traceback of an
error they otherwise state in one line (:func:`verbose`).
"""
from __future__ import annotations

import logging
import os
import warnings

__all__ = ["VERBOSE_ENV", "verbose", "quiet_paddle"]

VERBOSE_ENV = "PADDLE_PFC_VERBOSE"


def verbose() -> bool:
    """True when ``PADDLE_PFC_VERBOSE`` asks for Paddle's full logs and full tracebacks."""
    return os.environ.get(VERBOSE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def quiet_paddle() -> None:
    """Keep Paddle's start-up noise out of a command's output (see the module doc); nothing when
    :func:`verbose`. Environment variables take effect in processes started after the call
    (paddle imported later, launched ranks)."""
    if verbose():
        return
    os.environ.setdefault("GLOG_minloglevel", "2")
    for category in (UserWarning, DeprecationWarning, FutureWarning):
        warnings.filterwarnings("ignore", category=category, module=r"paddle(\.|$)")
    # "using custom operator only" per extension loaded; Paddle sets this logger's level at import
    logging.getLogger("utils.cpp_extension").addFilter(_warnings_and_above)


def _warnings_and_above(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.WARNING
