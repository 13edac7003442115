"""The package's error family: every error a command reports as one line derives from one of these.

* :class:`PfcError` — the root; a command catches it by this base.
* :class:`UsageError` — the user asked for something that cannot be done (an option, a config key,
  a path that is not there or not allowed); commands exit 2.
* :class:`InputDataError` — a file or record the user gave is not what its format says (malformed,
  crafted, over budget); it names the file and, where there is one, the entry (record, line, member,
  tensor); commands exit 2.
* :class:`BudgetError` — an :class:`InputDataError` for a file that declares more than it may hold or
  more than a limit allows; it names both numbers.
* :class:`RunDataError` — data a running program met and cannot use (a label out of range, a batch
  that does not match its labels, a validation set that cannot be read); training exits 1.

Each class also derives from the built-in exception older callers caught (``ValueError``), so
``except ValueError`` keeps working; a subclass may add another (``RuntimeError``, ``TimeoutError``).
Errors that are none of these (a barrier timed out, non-finite steps, a preempted run) derive from
:class:`PfcError` directly, and a command reports them with their traceback.
"""
from __future__ import annotations

import os


class PfcError(Exception):
    """Root of every error paddle_pfc raises on purpose (its message is meant for the user)."""


class UsageError(PfcError, ValueError):
    """A request that cannot be done as asked: an option, a config value, a path."""


class InputDataError(PfcError, ValueError):
    """A file (or a record of one) that is not what its format says.

    ``str(error)`` starts with the file (and the entry, when given) so that one line tells the user
    what to look at. ``InputDataError(message)`` (no ``problem``): a message that names its file
    itself (``path`` stays None).
    """

    def __init__(self, path: str | os.PathLike | None, problem: str | None = None, entry: str | None = None):
        if problem is None:  # the whole message, naming its file
            self.path, self.entry, self.problem = None, entry, str(path)
            super().__init__(self.problem)
            return
        self.path = None if path is None else os.fspath(path)
        self.entry = entry
        self.problem = problem
        where = self.path or "<input>"
        if entry:
            where = f"{where} ({entry})"
        super().__init__(f"{where}: {problem}")


class BudgetError(InputDataError):
    """A file that declares more (bytes, elements, records, pixels, depth) than it holds or than a limit
    allows, refused before anything that size is allocated."""

    def __init__(self, path: str | os.PathLike | None, what: str, declared: int, limit: int,
                 entry: str | None = None, hint: str | None = None):
        self.declared = int(declared)
        self.limit = int(limit)
        problem = f"{what} is {self.declared:,}, over the limit of {self.limit:,}"
        if hint:
            problem = f"{problem} ({hint})"
        super().__init__(path, problem, entry)


class RunDataError(PfcError, ValueError):
    """Data met while a program runs that it cannot use: the message names the value and where it came
    from (feed, row, rank, file)."""
