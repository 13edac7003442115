"""One-line error summaries per rank, where the user looks: stderr and ``output_dir/error_rank{r}.txt``.

``paddle.distributed.launch`` stops every rank when one fails and reports whichever it noticed
first, which is not always the rank that failed first. Each rank therefore states its own error
in one line, prefixed with its rank, and writes it to a file named after the rank, so the cause
(file, record, step) is found without reading every ``workerlog.N``.
"""
from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

from paddle_pfc.utils.atomic import write_text_atomic

#: How Paddle 3.3 reports a collective that failed because a peer died or timed out.
_PEER_FAILURE_MARKS = ("std::exception", "gloo", "Connection closed by peer", "Timed out")
#: How Paddle 3.3 reports a request to the job's TCP store (served by rank 0) that failed,
#: whatever the exception type: rank 0 has stopped.
_STORE_FAILURE_MARKS = ("TCP receive error", "TCP send error", "Connection reset by peer", "Broken pipe")
_STAMP = "%Y-%m-%d %H:%M:%S"


def _stamp(seconds: float) -> str:
    return f"{time.strftime(_STAMP, time.localtime(seconds))}.{int(seconds * 1000) % 1000:03d}"


def is_peer_failure(exc: BaseException) -> bool:
    """True for the error a rank gets when another rank stopped first (a failed collective or
    TCP-store request)."""
    message = str(exc)
    return (isinstance(exc, RuntimeError) and any(mark in message for mark in _PEER_FAILURE_MARKS)) or \
        any(mark in message for mark in _STORE_FAILURE_MARKS)


def error_summary(exc: BaseException, rank: int) -> str:
    """``[rank R] ExcType: message (at file:line)``: one line, the innermost frame that raised it.
    A failed collective or TCP-store request (usually the consequence of another rank's error)
    says so."""
    message = " ".join(str(exc).split()) or repr(exc)
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        frame = frames[-1]
        where = f" (at {os.path.basename(frame.filename)}:{frame.lineno})"
    hint = ""
    if is_peer_failure(exc):
        hint = (" — a collective or the job's TCP store (served by rank 0) failed, most likely because another "
                "rank stopped first: see the other error_rank*.txt / workerlog.* files for the cause")
    return f"[rank {rank}] {type(exc).__name__}: {message}{where}{hint}"


def report_error(exc: BaseException, rank: int, output_dir: str | os.PathLike | None, echo: bool = True) -> str:
    """Print :func:`error_summary` to stderr (unless not ``echo``: the caller prints its own line)
    and write it, after its time (to the millisecond) and followed by the traceback, to
    ``output_dir/error_rank{rank}.txt`` when ``output_dir`` is given; returns the summary. The
    file is written whole or not at all (a full disk: the summary alone if that fits, else no
    file, never an empty one); a failure to write it is reported, never raised."""
    summary = error_summary(exc, rank)
    if echo:
        print(summary, file=sys.stderr, flush=True)
    if output_dir is not None:
        path = Path(output_dir) / f"error_rank{rank}.txt"
        head = f"{_stamp(time.time())} {summary}\n"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                write_text_atomic(path, head + "\n" + "".join(traceback.format_exception(exc)))
            except OSError:
                write_text_atomic(path, head)
        except OSError as write_error:
            print(f"[rank {rank}] (could not write {path}: {write_error})", file=sys.stderr, flush=True)
    return summary


def first_error(output_dir: str | os.PathLike, since: float, wait: float = 0.0) -> tuple[str, str] | None:
    """``(file name, first line)`` of the earliest ``error_rank*.txt`` of ``output_dir`` written
    at or after ``since`` (seconds since the epoch), by the time in its first line; waits up to
    ``wait`` seconds for one written by another rank when only this one's exists (call it with
    the files of every rank written). None when there is none."""
    deadline = time.monotonic() + wait
    while True:
        found = []
        for path in Path(output_dir).glob("error_rank*.txt"):
            try:
                if path.stat().st_mtime < since - 1:
                    continue  # an earlier run's
                line = path.read_text(errors="replace").splitlines()[0]
            except (OSError, IndexError):
                continue
            found.append((line[:23], path.name, line))
        if len(found) > 1 or time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    return min(found)[1:] if found else None


def first_cause_line(exc: BaseException, rank: int, output_dir: str | os.PathLike, since: float) -> str:
    """The line a failed rank prints after :func:`report_error`: the job's first error (the
    earliest of its ``error_rank*.txt``), which ``paddle.distributed.launch``'s own report may not
    name. A rank whose error is a peer's consequence waits up to 2 s for that peer's file."""
    earliest = first_error(output_dir, since, wait=2.0 if is_peer_failure(exc) else 0.0)
    if earliest is None:
        return f"[rank {rank}] no error file of this job in {output_dir}"
    name, line = earliest
    if name == f"error_rank{rank}.txt":
        others = "" if not is_peer_failure(exc) else (
            "; no other rank wrote an error file: a rank ended by a signal (SIGKILL, the OOM killer) writes "
            "none, see the workerlog.* files")
        return f"[rank {rank}] the first error of this job is this rank's ({name}){others}"
    return f"[rank {rank}] the first error of this job is in {Path(output_dir) / name}: {line.split(' ', 2)[2]}"
