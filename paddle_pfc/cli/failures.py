"""How a command reports an error the user can fix: one line ``error: ...`` on stderr, exit status 2.

:data:`USER_ERRORS` are the bases a command catches: the error family's :class:`UsageError` (a
request that cannot be done) and :class:`InputDataError` (a file that is not what its format
says), and the built-in errors the libraries beneath raise for the same causes (``ValueError``:
numpy, YAML, OpenCV; ``OSError``: a path that cannot be read or written). ``PADDLE_PFC_VERBOSE=1``
re-raises instead, with the traceback.
"""
from __future__ import annotations

import sys

from paddle_pfc.cli.quiet import verbose
from paddle_pfc.utils.errors import InputDataError, UsageError

USAGE_EXIT = 2
USER_ERRORS: tuple[type[BaseException], ...] = (UsageError, InputDataError, ValueError, OSError)


def usage_failure(exc: BaseException, prefix: str = "error") -> int:
    """Print ``{prefix}: {exc}`` on stderr and return :data:`USAGE_EXIT`; with ``PADDLE_PFC_VERBOSE=1``
    raise ``exc`` (call it from the ``except`` clause that caught it)."""
    if verbose():
        raise exc
    print(f"{prefix}: {exc}", file=sys.stderr)
    return USAGE_EXIT
