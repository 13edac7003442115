"""Runs a reader over many input files in worker subprocesses and classifies each outcome.

:func:`run_reader` feeds the files to ``tests/workers/fuzz_worker.py`` (one process reads a batch; see its doc
for the outcomes it reports). What a worker cannot report itself is seen here: a death by a signal
(``crash``), a death at the address-space limit (``oom``, a SIGKILL / SIGABRT after a failed
allocation), no answer within ``timeout`` seconds (``hang``; the worker is killed). The file being
read then is the one the worker last wrote to its progress file; the remaining files go to a new
worker. Outcomes other than ``read`` and ``refused`` are findings.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
WORKER = REPO / "tests" / "workers" / "fuzz_worker.py"
#: Address space a worker may take beyond what its imports took (an unbounded allocation fails).
EXTRA_ADDRESS_SPACE = 2 << 30
TIMEOUT = 20.0
FINE = ("read", "refused")


@dataclass
class Outcome:
    file: str
    outcome: str
    error: str = ""
    rss_kb: int = 0
    seconds: float = 0.0


@dataclass
class Summary:
    reader: str
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def counts(self) -> Counter:
        return Counter(o.outcome for o in self.outcomes)

    @property
    def findings(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.outcome not in FINE]

    def line(self) -> str:
        peak = max((o.rss_kb for o in self.outcomes), default=0)
        slowest = max(self.outcomes, key=lambda o: o.seconds, default=None)
        counts = ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
        longest = f"{slowest.seconds:.2f} s ({os.path.basename(slowest.file)})" if slowest else "-"
        return (f"{self.reader}: {len(self.outcomes)} files; {counts}; peak RSS {peak / 1024:.0f} MiB; "
                f"longest read {longest}")


def _worker(reader: str, listing: str, progress: str, extra: int, stderr) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
               PYTHONHASHSEED="0", OMP_NUM_THREADS="1")
    return subprocess.Popen([sys.executable, str(WORKER), reader, listing, progress, str(extra)], cwd=str(REPO),
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr)


def _died(process: subprocess.Popen, current: str, seconds: float, stderr: str) -> Outcome:
    """The outcome of the file the worker was reading when it died."""
    code = process.returncode
    if code is not None and code < 0:
        name = signal.Signals(-code).name
        memory = "MemoryError" in stderr or "std::bad_alloc" in stderr or "Cannot allocate" in stderr
        kind = "oom" if memory else "crash"
        return Outcome(current, kind, f"killed by {name}; {stderr.strip().splitlines()[-1:]!r}", 0, seconds)
    return Outcome(current, "crash", f"worker exited {code}: {stderr.strip().splitlines()[-1:]!r}", 0, seconds)


def _run_batch(reader: str, files: list[str], timeout: float, extra: int, progress: str,
               stop: bool) -> list[Outcome]:
    """Outcomes of the files up to (and including) the one the worker died on, or all of them."""
    Path(progress).write_text("")
    with open(progress + ".stderr", "w+") as stderr:
        outcomes = _collect(reader, files, timeout, extra, progress, stderr, stop)
    return outcomes


def _collect(reader: str, files: list[str], timeout: float, extra: int, progress: str, stderr,
             stop: bool) -> list[Outcome]:
    listing = progress + ".list"
    Path(listing).write_text("".join(f + "\n" for f in files))
    process = _worker(reader, listing, progress, extra, stderr)
    outcomes: list[Outcome] = []
    pending = b""  # the worker's output read so far, not yet a whole line
    fd = process.stdout.fileno()
    deadline = time.monotonic() + timeout + 60.0  # the first read waits for the imports as well
    while len(outcomes) < len(files):
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            outcomes.append(Outcome(**json.loads(line)))
            deadline = time.monotonic() + timeout
        if outcomes and stop and outcomes[-1].outcome not in FINE or len(outcomes) == len(files):
            break
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 1 << 16) if ready else None
        if chunk:
            pending += chunk
            continue
        current = Path(progress).read_text() or files[len(outcomes)]
        if chunk is None:  # no answer in time: a hang
            process.kill()
            process.wait()
            outcomes.append(Outcome(current, "hang", f"no result within {timeout:g} s", 0, timeout))
        else:  # end of output: the worker died
            process.wait()
            stderr.seek(0)
            outcomes.append(_died(process, current, 0.0, stderr.read()[-4000:]))
        return outcomes
    process.kill()
    process.wait()
    return outcomes


def run_reader(reader: str, files: list[str | os.PathLike], timeout: float = TIMEOUT,
               extra: int = EXTRA_ADDRESS_SPACE, stop: bool = False) -> Summary:
    """Every file of ``files`` read by ``reader`` (a name of ``fuzz_worker.READERS``) in workers;
    with ``stop``, only the files up to the first finding."""
    paths = [os.path.abspath(f) for f in files]
    summary = Summary(reader)
    with tempfile.TemporaryDirectory(prefix="fuzz-progress-") as scratch:
        progress = os.path.join(scratch, "current")
        while len(summary.outcomes) < len(paths):
            done = len(summary.outcomes)
            batch = _run_batch(reader, paths[done:], timeout, extra, progress, stop)
            if not batch:
                raise RuntimeError(f"fuzz worker for {reader} produced nothing")
            summary.outcomes.extend(batch)
            if stop and summary.findings:
                break
    return summary
