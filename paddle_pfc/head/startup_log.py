"""One start-up line for the initialisation of large class-center shards, and its duration.

The start-up program draws every center of a shard (Paddle's ``gaussian`` kernel, one value at a
time on one thread), which takes minutes at millions of classes: :func:`center_initialisation`
wraps the run of that program and logs what is being initialised and then how long it took, under
the ``paddle_pfc.head`` logger (the trainer's logging configuration prints it on rank 0). A head
built with ``init_centers=False`` is filled with zeros, and its lines say so (allocating, not
initialising).
"""
from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from paddle_pfc.head.spec import HeadSpec, centers_bytes, optimizer_state_bytes

__all__ = ["ANNOUNCE_BYTES", "center_initialisation", "describe_centers"]

log = logging.getLogger("paddle_pfc.head")

#: Shards whose centers and momentum together are smaller than this are initialised silently.
ANNOUNCE_BYTES = 256 * 2**20

_GIB = 2**30


def describe_centers(spec: HeadSpec, with_momentum: bool) -> str:
    """``"5,000,000 class centers (D=512, bfloat16, 4.8 GiB on this rank, 9.5 GiB with their momentum)"``
    of ``spec``'s shard (with ``with_momentum``: and its optimizer state)."""
    size = centers_bytes(spec)
    state = f", {(size + optimizer_state_bytes(spec)) / _GIB:.1f} GiB with their momentum" if with_momentum else ""
    return (f"{spec.num_local:,} class centers (D={spec.embedding_size}, {spec.center_dtype}, {size / _GIB:.1f} GiB "
            f"on this rank{state})")


@contextmanager
def center_initialisation(heads: Iterable, logger: logging.Logger = log,
                          announce_bytes: int = ANNOUNCE_BYTES) -> Iterator[None]:
    """Around the run of the start-up program that initialises ``heads`` (``LargeScaleClassifier`` s):
    when their centers and momentum reach ``announce_bytes``, log one line per head before
    ("initialising ... class centers ...", or for zero-filled centers "allocating ... as zeros") and
    one after ("... initialised in N s" / "... allocated in N s")."""
    heads = list(heads)
    state = [(h, h.state_bytes(with_momentum=bool(h.states()))) for h in heads]
    if sum(size for _, size in state) < announce_bytes:
        yield
        return
    for head, _ in state:
        what = describe_centers(head.spec, bool(head.states()))
        if head.init_centers:
            logger.info("initialising %s…", what)
        else:
            logger.info("allocating %s as zeros (no random draw: every center is written before the first "
                        "step)…", what)
    drawn = any(head.init_centers for head in heads)
    start = time.perf_counter()
    yield
    logger.info("… class centers %s in %.0f s", "initialised" if drawn else "allocated", time.perf_counter() - start)
