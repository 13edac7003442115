"""The commands' own lines first: Paddle's start-up noise kept out unless asked for.

By default (:func:`quiet_paddle`, called by :func:`paddle_pfc.cli.entry.run` before Paddle is
imported): Paddle's C++ INFO and WARNING log lines (glog: ``GLOG_minloglevel=2``, unless the
environment sets it), the ``UserWarning`` / ``DeprecationWarning`` raised inside Paddle's Python
modules, the INFO lines of its extension builder and of its distributed setup ("distributed
strategy initialized"; the "Modified FLAGS detected" banner: :mod:`paddle_pfc.runtime.distributed`)
are not shown; errors still are. A warning that is shown is one line, ``warning: MESSAGE``,
without the file and source line Python adds.
``PADDLE_PFC_VERBOSE=1`` shows everything, and lets the commands print the full traceback of an
error they otherwise state in one line (:func:`verbose`).
"""
from __future__ import annotations

import logging
import os
import sys
import warnings

from paddle_pfc.utils.launch_env import VERBOSE_ENV, verbose

__all__ = ["VERBOSE_ENV", "verbose", "quiet_paddle", "PADDLE_WARNINGS"]

#: ``PYTHONWARNINGS`` entries for processes that import Paddle before any of our code runs (the
#: launcher): its extension builder's "No ccache found" at import.
PADDLE_WARNINGS = "ignore::UserWarning:paddle.utils.cpp_extension.extension_utils"


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
    # fleet's INFO lines ("distributed strategy initialized")
    logging.getLogger("paddle.distributed.fleet.utils.log_util").addFilter(_warnings_and_above)
    warnings.showwarning = _one_line_warning


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """``warnings.showwarning`` of a command: ``warning: MESSAGE`` on stderr (or ``file``)."""
    try:
        (file or sys.stderr).write(f"warning: {message}\n")
    except OSError:  # stderr gone: as the default, the warning is lost
        pass


def _warnings_and_above(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.WARNING
