"""Progress lines for long operations (validation, indexing, conversion, IJB embedding, export checks).

A :class:`Progress` prints one line at most every ``every_seconds`` (and one at the end) with the
count done, the total, the rate and the time left::

    validate lfw: 4096/12000 (34%) 812.3 images/s, 9.7 s elapsed, eta 00:00:10

Lines, not a redrawn bar: they read the same in a terminal, in ``workerlog.N`` files and in CI
logs. Output goes to a ``logging.Logger`` (default ``paddle_pfc.utils.progress``), or to any
``write(str)`` callable; ``enabled=False`` (e.g. on ranks other than 0) makes it silent.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable

_default_log = logging.getLogger("paddle_pfc.utils.progress")


def format_duration(seconds: float) -> str:
    """``HH:MM:SS`` (hours may exceed 24) of a non-negative duration."""
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    return f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"


class Progress:
    """Counts work done out of ``total`` (``None``: unknown) and reports it periodically.

    ``update(n)`` adds ``n`` items; ``close()`` (or leaving the ``with`` block) prints the final
    line. ``clock`` is injectable for tests (seconds, monotonic).
    """

    def __init__(self, description: str, total: int | None = None, unit: str = "items",
                 every_seconds: float = 10.0, write: Callable[[str], None] | logging.Logger | None = None,
                 enabled: bool = True, clock: Callable[[], float] = time.perf_counter) -> None:
        if total is not None and total < 0:
            raise ValueError(f"total must be >= 0 or None, got {total!r}")
        if every_seconds < 0:
            raise ValueError(f"every_seconds must be >= 0, got {every_seconds!r}")
        self.description, self.total, self.unit = description, total, unit
        self.every_seconds, self.enabled, self._clock = every_seconds, enabled, clock
        logger = write if write is not None else _default_log
        self._write = logger.info if isinstance(logger, logging.Logger) else logger
        self.done = 0
        self.started = self._last_report = clock()
        self.lines: list[str] = []  # what was reported (kept for callers that summarise)
        self._closed = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def rate(self) -> float:
        """Items per second since the start (0 before any time has passed)."""
        elapsed = self._clock() - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    def line(self) -> str:
        """The current progress line."""
        elapsed = self._clock() - self.started
        rate = self.rate()
        if self.total:
            text = f"{self.done}/{self.total} ({100.0 * self.done / self.total:.0f}%)"
        else:
            text = f"{self.done}"
        text = f"{self.description}: {text} {rate:.1f} {self.unit}/s, {elapsed:.1f} s elapsed"
        if self.total and rate > 0 and self.done < self.total:
            text += f", eta {format_duration((self.total - self.done) / rate)}"
        return text

    def _report(self) -> None:
        self._last_report = self._clock()
        if self.enabled:
            text = self.line()
            self.lines.append(text)
            self._write(text)

    def update(self, n: int = 1) -> None:
        """``n`` more items done; prints a line when ``every_seconds`` passed since the last."""
        self.done += n
        if self._clock() - self._last_report >= self.every_seconds:
            self._report()

    def close(self) -> None:
        """Print the final line (once)."""
        if not self._closed:
            self._closed = True
            self._report()
