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


#: How Paddle 3.3 reports a collective that failed because a peer died or timed out.
_PEER_FAILURE_MARKS = ("std::exception", "gloo", "Connection closed by peer", "Timed out")


def error_summary(exc: BaseException, rank: int) -> str:
    """``[rank R] ExcType: message (at file:line)``: one line, the innermost frame that raised it.
    A failed collective (usually the consequence of another rank's error) says so."""
    message = " ".join(str(exc).split()) or repr(exc)
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        frame = frames[-1]
        where = f" (at {os.path.basename(frame.filename)}:{frame.lineno})"
    hint = ""
    if isinstance(exc, RuntimeError) and any(mark in message for mark in _PEER_FAILURE_MARKS):
        hint = (" — a collective failed, most likely because another rank stopped first: "
                "see the other error_rank*.txt / workerlog.* files for the cause")
    return f"[rank {rank}] {type(exc).__name__}: {message}{where}{hint}"


def report_error(exc: BaseException, rank: int, output_dir: str | os.PathLike | None, echo: bool = True) -> str:
    """Print :func:`error_summary` to stderr (unless not ``echo``: the caller prints its own line)
    and write it (with the traceback) to ``output_dir/error_rank{rank}.txt`` when ``output_dir`` is
    given; returns the summary. A failure to write the file (e.g. the disk is full) is reported,
    never raised."""
    summary = error_summary(exc, rank)
    if echo:
        print(summary, file=sys.stderr, flush=True)
    if output_dir is not None:
        path = Path(output_dir) / f"error_rank{rank}.txt"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {summary}\n\n"
                            + "".join(traceback.format_exception(exc)))
        except OSError as write_error:
            print(f"[rank {rank}] (could not write {path}: {write_error})", file=sys.stderr, flush=True)
    return summary
