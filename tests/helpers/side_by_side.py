"""Independent commands of one test run two at a time: a one-rank command uses one core of two."""
from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def side_by_side(*calls: Callable[[], Any]) -> list[Any]:
    """Each of ``calls`` (independent: none reads what another writes) called in a pool of two
    threads; their results in order (the first exception raised by one is raised here)."""
    with ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(call) for call in calls]
        return [future.result() for future in futures]
