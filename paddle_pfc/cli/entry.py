"""How a command's process runs its ``main`` (``tools/*.py`` and the ``paddle-pfc-*`` commands).

Two costs of Paddle 3.3 under Python 3.11 that a command pays for nothing (figures:
docs/paddle-notes.md):

- **Building a program**: Paddle records every op's Python call stack with
  ``traceback.extract_stack``, which in 3.11 also works out each frame's column positions and
  stats each frame's source file; Paddle reads only a frame's file, line number, function and
  source line. :func:`quick_call_stacks` gives it exactly those, the same frames and text, in
  less time.
- **Leaving**: the interpreter's last garbage collections walk every object Paddle made.
  :func:`run` collects once itself, then freezes what is left (``gc.freeze``), so the exit is
  shorter. Every object is still released by reference counting; only a cycle
  made after that collection would be left to the operating system.

A rank of a multi-rank job also leaves without the libraries' C++ teardown (:func:`_leave_now`):
rank 0 hosts Paddle's rendezvous store, whose thread keeps serving the other ranks while the
process exits; when a rank disconnects during rank 0's teardown, that thread aborts and the
exit dies with SIGSEGV (~1 run in 25 of a 2-rank training, docs/paddle-notes.md).
"""
from __future__ import annotations

import atexit
import contextlib
import gc
import linecache
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from importlib import import_module
from typing import NoReturn

COMMANDS = ("train", "export", "infer", "validate", "eval_ijb", "im2rec", "plan", "selfcheck", "convert",
            "align", "launch", "pairs")
_EXTRACT_STACK = traceback.extract_stack


def _extract_stack(f=None, limit: int | None = None) -> traceback.StackSummary:
    """``traceback.extract_stack()``'s frames, oldest first, each with its file, line number,
    function and (read when asked) source line, without column positions (with a ``limit`` or
    ``sys.tracebacklimit``: the original function)."""
    frame = sys._getframe(1) if f is None else f
    if limit is not None or hasattr(sys, "tracebacklimit"):
        return _EXTRACT_STACK(frame, limit)
    frames = []
    while frame is not None:
        code = frame.f_code
        linecache.lazycache(code.co_filename, frame.f_globals)
        frames.append(traceback.FrameSummary(code.co_filename, frame.f_lineno, code.co_name, lookup_line=False))
        frame = frame.f_back
    frames.reverse()
    return traceback.StackSummary.from_list(frames)


@contextlib.contextmanager
def quick_call_stacks() -> Iterator[None]:
    """Inside: ``traceback.extract_stack`` is :func:`_extract_stack` (what Paddle calls per op
    built); restored on leaving."""
    traceback.extract_stack = _extract_stack
    try:
        yield
    finally:
        traceback.extract_stack = _EXTRACT_STACK


def run(main: Callable[[], int | None]) -> NoReturn:
    """``sys.exit(main())``, Paddle's start-up noise kept out (:func:`paddle_pfc.cli.quiet.quiet_paddle`),
    MKL's kernels chosen for the CPU (:func:`paddle_pfc.runtime.process.choose_mkl_kernels`), with
    ops recorded by :func:`quick_call_stacks` and a quick exit; in a
    rank of a multi-rank job (``PADDLE_TRAINERS_NUM`` > 1) through :func:`_leave_now`, an exception
    printed as the interpreter prints it and status 1 (a ``KeyboardInterrupt``: death by SIGINT,
    as the interpreter's)."""
    from paddle_pfc.cli.quiet import quiet_paddle
    from paddle_pfc.runtime.process import choose_mkl_kernels

    quiet_paddle()
    choose_mkl_kernels()  # before the first product: MKL's fast kernels on AMD CPUs
    multi_rank = _in_multi_rank_job()
    try:
        with quick_call_stacks():
            code = main()
    except SystemExit as exc:
        if not multi_rank:
            raise
        code = exc.code
    except BaseException as exc:  # reported as the interpreter would, then the same exit
        if not multi_rank:
            raise
        traceback.print_exc()
        code = _INTERRUPTED if isinstance(exc, KeyboardInterrupt) else 1
    finally:
        gc.collect()
        gc.freeze()
    if multi_rank:
        _leave_now(code)
    sys.exit(code)


def _in_multi_rank_job() -> bool:
    """True in a worker that ``paddle.distributed.launch`` started for a job of several ranks."""
    value = os.environ.get("PADDLE_TRAINERS_NUM", "").strip()
    return value.isdigit() and int(value) > 1


_INTERRUPTED = object()  # run's code for an uncaught KeyboardInterrupt


def _leave_now(code: object) -> NoReturn:
    """``sys.exit(code)`` without the interpreter's and the shared libraries' teardown: as at a
    normal exit, thread pools are stopped, threads that are not daemons are joined and the
    ``atexit`` handlers run (logging's, Paddle's, multiprocessing's); the standard streams are
    flushed; then ``os._exit`` (no C++ static destructors, no library finalizers), or, for
    ``_INTERRUPTED``, SIGINT with its default action (the interpreter's exit after an uncaught
    ``KeyboardInterrupt``: a shell sees 130, a parent process -2)."""
    if code is None:
        status = 0
    elif code is _INTERRUPTED:
        status = 128 + signal.SIGINT  # only if SIGINT below does not end the process
    elif isinstance(code, int):
        status = code
    else:  # as sys.exit: the message to stderr, status 1
        print(code, file=sys.stderr)
        status = 1
    # As the interpreter's exit: threading's exit callbacks (which stop concurrent.futures' pools),
    # then a join of every thread that is not a daemon; then the atexit handlers.
    threading._shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed or broken: nothing more to write
            pass
    if code is _INTERRUPTED:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(status)


def _command(name: str) -> Callable[[], NoReturn]:
    def command() -> NoReturn:
        run(import_module(f"paddle_pfc.cli.{name}").main)

    command.__name__ = command.__qualname__ = name
    command.__doc__ = f"The ``paddle-pfc-{name.replace('_', '-')}`` command: :func:`run` of paddle_pfc.cli.{name}.main."
    return command


train, export, infer, validate, eval_ijb, im2rec, plan, selfcheck, convert, align, launch, pairs = (
    _command(name) for name in COMMANDS)

if __name__ == "__main__":  # a rank of paddle-pfc-launch: python .../paddle_pfc/cli/entry.py COMMAND ARGS...
    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]  # this folder's modules are imported as paddle_pfc.cli.*, never by their bare names
    _command(sys.argv.pop(1))()
