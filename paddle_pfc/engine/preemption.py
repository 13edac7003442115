"""Preemption: SIGTERM stops every rank at one common step, which is checkpointed, within a grace time.

Schedulers send SIGTERM before they kill a job (Kubernetes, Slurm: 30 s later by default), and
``paddle.distributed.launch``, when it gets SIGTERM or SIGINT itself, sends SIGTERM to every
worker's process group (three times within 0.6 s), waits up to 30 s for each worker, then
SIGKILLs the workers and exits with status 15.

:class:`PreemptionWatch` replaces Paddle's C++ SIGTERM handler (which prints a stack trace and
can hang) in a training process with a handler that only records the request; nothing is
interrupted. The ranks then agree on the step to stop at on the job's TCP store, without a
collective per step: a rank that has a request, before it starts step ``n``, proposes ``n``;
the first proposal wins. No rank can finish step ``n`` before the proposer has started it (a
step's collectives need every rank), and the proposer wrote its proposal before starting it, so
every rank, polling the store after each step (one small request to the store), learns the
stop step by the end of that step at the latest. Every rank therefore stops after the same step,
at most the step under way and one more after the signal. A request that arrives before the
first step is proposed before the start-of-training barrier, so the job stops before training.

A watchdog thread started by the first SIGTERM ends the process with :data:`UNSAVED_EXIT` after
the grace time (``train.preempt_grace``) if it is still running (a long validation, a peer that
never arrives), printing what was lost; an orderly stop exits with :data:`PREEMPTED_EXIT`. With
``train.preempt_grace: null`` the grace follows the run's size (:func:`auto_grace`): the rank's
checkpoint bytes and the duration of its latest step, as the trainer records them.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable

from paddle_pfc.utils.errors import PfcError

#: Exit status of a rank stopped by SIGTERM after its checkpoint (or with nothing new to save):
#: 128 + SIGTERM, what a shell reports for a process ended by SIGTERM.
PREEMPTED_EXIT = 128 + int(signal.SIGTERM)
#: Exit status when the grace time ran out before the checkpoint was written.
UNSAVED_EXIT = 1

#: ``train.preempt_grace: null``: seconds allowed on top of the two steps and the checkpoint write.
AUTO_GRACE_FLOOR = 20.0
#: ``train.preempt_grace: null``: the rate (bytes/s) a rank's checkpoint is assumed to be written at;
#: below what a disk whose page cache is flushed by fsync takes (docs/reliability.md).
AUTO_GRACE_DISK_RATE = 50e6

_COUNT_KEY = "paddle_pfc/preempt/proposals"
_STOP_KEY = "paddle_pfc/preempt/stop_step"


class Preempted(PfcError):
    """Training stopped on SIGTERM at ``step``; ``checkpoint``: the folder that holds that step
    (None when this rank did not write it, or nothing was written: see ``saved``)."""

    def __init__(self, step: int, checkpoint: str | None, saved: bool, seconds: float) -> None:
        self.step, self.checkpoint, self.saved, self.seconds = step, checkpoint, saved, seconds
        where = f"checkpoint saved to {checkpoint}" if saved else \
            f"no step since {checkpoint or 'the start'}, nothing new to save"
        super().__init__(f"preempted at step {step}: {where}; resume with --resume auto "
                         f"({seconds:.1f} s after SIGTERM)")


def auto_grace(checkpoint_bytes: int, step_seconds: float) -> float:
    """The grace of ``train.preempt_grace: null``: :data:`AUTO_GRACE_FLOOR`, plus the two steps a stop
    may have to finish (the one under way and the next), plus a checkpoint of ``checkpoint_bytes``
    written at :data:`AUTO_GRACE_DISK_RATE`."""
    return AUTO_GRACE_FLOOR + 2 * step_seconds + checkpoint_bytes / AUTO_GRACE_DISK_RATE


class PreemptionWatch:
    """SIGTERM handling of one rank (see the module doc). :meth:`install` before training,
    :meth:`uninstall` after; ``store``: the job's TCP store (default the global one; unused on
    one rank); ``describe``: what the watchdog prints about the current state when the grace
    runs out. ``grace`` None: :func:`auto_grace` of ``checkpoint_bytes`` and ``step_seconds``
    (set by the trainer) when SIGTERM comes."""

    def __init__(self, rank: int, world_size: int, grace: float | None, store=None,
                 describe: Callable[[], str] = lambda: "") -> None:
        self.rank, self.world_size = rank, world_size
        self.grace = None if grace is None else float(grace)
        self.checkpoint_bytes, self.step_seconds = 0, 0.0
        self._store, self.describe = store, describe
        self.requested_at: float | None = None
        self._pid = os.getpid()
        self._proposed = False
        self._stop: int | None = None
        self._done = threading.Event()
        self._previous = None
        self._installed = False

    # ----------------------------------------------------------------------------- the signal
    def install(self) -> None:
        """Handle SIGTERM in this process; system calls interrupted by it are restarted, so a
        collective or a store request under way is not broken by it. Called from another thread
        than the main one (where Python runs signal handlers) it does nothing."""
        if self._installed or threading.current_thread() is not threading.main_thread():
            return
        self._previous = signal.signal(signal.SIGTERM, self._on_signal)
        signal.siginterrupt(signal.SIGTERM, False)
        self._installed = True

    def uninstall(self) -> None:
        """Restore the handler found by :meth:`install` (the default one if it was not Python's)
        and stop the watchdog."""
        self._done.set()
        if self._installed:
            previous = self._previous if self._previous is not None else signal.SIG_DFL
            signal.signal(signal.SIGTERM, previous)
            self._installed = False

    def finished(self) -> None:
        """The rank stopped in order: the watchdog stands down."""
        self._done.set()

    def grace_seconds(self) -> float:
        """The grace in effect: ``train.preempt_grace``, or :func:`auto_grace` of the run so far."""
        return self.grace if self.grace is not None else auto_grace(self.checkpoint_bytes, self.step_seconds)

    def _on_signal(self, signum, frame) -> None:
        if os.getpid() != self._pid:  # a forked data-loader worker: its rank decides, the worker goes on
            return
        if self.requested_at is None:
            self.requested_at = time.monotonic()
            threading.Thread(target=self._watchdog, args=(self.grace_seconds(),), name="paddle_pfc-preempt-watchdog",
                             daemon=True).start()

    def _watchdog(self, grace: float) -> None:
        if self._done.wait(grace):
            return
        state = self.describe()
        setting = f"{grace:g} s" if self.grace is not None else f"auto ({grace:.0f} s)"
        print(f"[rank {self.rank}] preempted: no checkpoint within train.preempt_grace={setting} of "
              f"SIGTERM{f' ({state})' if state else ''}; the work since the newest complete checkpoint is lost; "
              "resume with --resume auto", file=sys.stderr, flush=True)
        try:
            sys.stdout.flush()
        finally:
            os._exit(UNSAVED_EXIT)

    @property
    def requested(self) -> bool:
        """True once this process got SIGTERM."""
        return self.requested_at is not None

    def seconds_since_request(self) -> float:
        return 0.0 if self.requested_at is None else time.monotonic() - self.requested_at

    # ----------------------------------------------------------------------------- the agreement
    def _get_store(self):
        if self._store is None:
            from paddle_pfc.utils.paddle_compat import global_tcp_store

            self._store = global_tcp_store()
        return self._store

    def propose(self, step: int) -> None:
        """On several ranks, before starting step ``step`` (or, with the current step, before the
        start-of-training barrier): if this rank has a request and made no proposal yet, propose
        to stop after ``step`` (the first proposal of the job wins)."""
        if self.world_size == 1 or not self.requested or self._proposed or self._stop is not None:
            return
        self._proposed = True
        store = self._get_store()
        if store.add(_COUNT_KEY, 1) == 1:
            store.set(_STOP_KEY, str(step).encode())

    def stop_step(self, current: int) -> int | None:
        """The step every rank stops after, once known (on several ranks one store request a
        call; on one rank ``current`` as soon as there is a request)."""
        if self.world_size == 1:
            return current if self.requested else None
        if self._stop is None and self._get_store().add(_COUNT_KEY, 0) > 0:
            self._stop = int(self._get_store().get(_STOP_KEY).decode())
        return self._stop

    def stops_before(self, step: int, barrier: Callable[[], object]) -> bool:
        """At the start of training (``step``: the global step reached): propose ``step`` if this
        rank has a request, meet at ``barrier`` (every rank's proposal made before it is seen
        after it), then True when every rank stops before its first step."""
        self.propose(step)
        barrier()
        stop = self.stop_step(step)  # a later proposal (the next step's) may be seen here too
        return stop is not None and stop <= step
