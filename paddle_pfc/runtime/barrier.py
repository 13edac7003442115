"""A rank barrier that does not run inside a gloo collective, with a timeout you choose.

gloo (Paddle's CPU backend) gives every collective its own default timeout of 30 s, and Paddle
3.3 offers no way to change it from Python. A rank that reaches a collective while another rank
is still busy alone (writing a checkpoint, indexing data, validating) therefore fails after 30 s.
:class:`StoreBarrier` makes the ranks meet *before* such a collective on Paddle's TCP store (the
key-value server ``paddle.distributed.launch`` / ``init_parallel_env`` already run on the master
node): each rank adds its key and polls for the others' keys, for up to ``timeout`` seconds. After
it every rank enters the next collective within moments of the others. Rank 0 hosts the store,
so it leaves a barrier last, once every rank has seen it met: a job's last barrier never leaves
another rank polling a store that rank 0's exit took away.
"""
from __future__ import annotations

import time

from paddle_pfc.utils.errors import PfcError


class BarrierTimeout(PfcError, TimeoutError):
    """Some ranks did not reach a barrier in time (names the barrier and the missing ranks)."""


class StoreBarrier:
    """Barriers of one job on a key-value store with ``add(key, n) -> int`` (Paddle's TCPStore).

    Every rank must call :meth:`wait` with the same sequence of names (barriers are numbered per
    ``prefix`` and process, so several objects with one prefix share the numbering). ``world_size
    == 1``: every call returns at once. ``store=None`` takes the global TCP store created by
    ``paddle.distributed.init_parallel_env``.
    """

    _counts: dict[str, int] = {}

    def __init__(self, rank: int, world_size: int, timeout: float = 1800.0, store=None,
                 prefix: str = "paddle_pfc/barrier") -> None:
        if timeout <= 0:
            raise ValueError(f"barrier timeout must be > 0 seconds, got {timeout!r}")
        self.rank, self.world_size, self.timeout, self.prefix = rank, world_size, timeout, prefix
        self._store = store

    def _get_store(self):
        if self._store is None:
            from paddle_pfc.utils.paddle_compat import global_tcp_store

            self._store = global_tcp_store()
        return self._store

    def wait(self, name: str, timeout: float | None = None) -> float:
        """Return once every rank called ``wait(name)`` (the n-th barrier of this object on every
        rank); the seconds spent waiting. :class:`BarrierTimeout` after ``timeout`` seconds."""
        if self.world_size == 1:
            return 0.0
        count = StoreBarrier._counts[self.prefix] = StoreBarrier._counts.get(self.prefix, 0) + 1
        timeout = self.timeout if timeout is None else timeout
        store = self._get_store()
        key = f"{self.prefix}/{count}/{name}"
        store.add(f"{key}/rank{self.rank}", 1)
        started = time.monotonic()
        pending = [r for r in range(self.world_size) if r != self.rank]
        pause = 0.002
        while pending:
            pending = [r for r in pending if store.add(f"{key}/rank{r}", 0) < 1]
            if not pending:
                break
            waited = time.monotonic() - started
            if waited > timeout:
                raise BarrierTimeout(
                    f"rank {self.rank}: ranks {pending} did not reach barrier {name!r} within "
                    f"{timeout:.0f} s (train.collective_timeout); see their logs")
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
        waited = time.monotonic() - started
        store.add(f"{key}/left", 1)
        if self.rank == 0:  # it hosts the store: it stays until every rank has seen the barrier met
            wait_for_count(store, f"{key}/left", self.world_size, self.timeout)
        return waited

    def exchange(self, name: str, value: str, timeout: float | None = None) -> list[str]:
        """Every rank's ``value``, in rank order, once every rank called ``exchange(name, ...)``: a
        barrier (:meth:`wait`, counted with the others) that carries one string from each rank."""
        if self.world_size == 1:
            return [value]
        count = StoreBarrier._counts.get(self.prefix, 0) + 1  # the number the barrier below takes
        store = self._get_store()
        key = f"{self.prefix}/{count}/{name}/value"
        store.set(f"{key}{self.rank}", value)
        self.wait(name, timeout)
        return [value if r == self.rank else store.get(f"{key}{r}").decode() for r in range(self.world_size)]


def wait_for_count(store, key: str, count: int, timeout: float) -> bool:
    """Until the counter ``key`` of ``store`` (``add(key, 1)`` by each rank) reaches ``count``, or
    ``timeout`` seconds pass; whether it did. Rank 0, which hosts the store, calls it before it
    goes on to where it may exit, so that no rank still needing the store finds it gone (a rank
    that died meanwhile holds it no longer than ``timeout``)."""
    deadline = time.monotonic() + timeout
    while store.add(key, 0) < count:
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.002)
    return True
