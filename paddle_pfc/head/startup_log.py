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

from paddle_pfc.head.dtypes import DTYPE_BYTES, momentum_bytes

__all__ = ["ANNOUNCE_BYTES", "center_initialisation", "describe_centers"]

log = logging.getLogger("paddle_pfc.head")

#: Shards whose centers and momentum together are smaller than this are initialised silently.
ANNOUNCE_BYTES = 256 * 2**20

_GIB = 2**30


def describe_centers(num_local: int, embedding_size: int, center_dtype: str, with_momentum: bool,
                     momentum_dtype: str | None = None) -> str:
    """``"5,000,000 class centers (D=512, bfloat16, 4.8 GiB on this rank, 9.5 GiB with their momentum)"``
    (momentum in ``momentum_dtype``, default ``center_dtype``)."""
    size = num_local * embedding_size * DTYPE_BYTES[center_dtype]
    with_state = size + momentum_bytes(num_local, embedding_size, momentum_dtype or center_dtype)
    state = f", {with_state / _GIB:.1f} GiB with their momentum" if with_momentum else ""
    return (f"{num_local:,} class centers (D={embedding_size}, {center_dtype}, {size / _GIB:.1f} GiB on this "
            f"rank{state})")


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
        what = describe_centers(head.num_local, head.embedding_size, head.center_dtype, bool(head.states()),
                                head.momentum_dtype)
        if head.init_centers:
            logger.info("initialising %s…", what)
        else:
            logger.info("allocating %s as zeros (no random draw: every center is written before the first "
                        "step)…", what)
    drawn = any(head.init_centers for head in heads)
    start = time.perf_counter()
    yield
    logger.info("… class centers %s in %.0f s", "initialised" if drawn else "allocated", time.perf_counter() - start)
