"""Every native extension at once: whether each is built, loading one by name, and building the
missing ones side by side (:func:`build_all`, a first run's compile)."""
from __future__ import annotations

import os

from paddle_pfc.kernels import native_ops, onednn_ops
from paddle_pfc.kernels.native_build import _loaded, build_directory, mode, say

#: every native extension (:func:`load`), slowest compile first
EXTENSIONS = ("depthwise_ops", "batch_norm_ops", "onednn_ops", "center_ops", "backbone_ops", "transformer_ops")


def built(name: str) -> bool:
    """True when extension ``name`` (one of :data:`EXTENSIONS`) is built for this CPU and Paddle."""
    return onednn_ops.built() if name == "onednn_ops" else native_ops.built(name)


def load(name: str):
    """Extension ``name`` (one of :data:`EXTENSIONS`) as its module's ``kernels`` loads it (built
    first when needed; None as there)."""
    return onednn_ops.kernels() if name == "onednn_ops" else native_ops.kernels(name)


def build_jobs(node_ranks: int, cpus: int | None = None) -> int:
    """Build subprocesses per rank when all ``node_ranks`` ranks of a node call :func:`build_all` at
    once (each build is made once; the others wait for it and load it): at least 2, about one per
    extension over the node in all, at most the CPUs (``os.cpu_count()``)."""
    per_rank = max(2, -(-len(EXTENSIONS) // max(1, node_ranks)))
    return max(1, min(cpus or os.cpu_count() or 1, per_rank))


def build_all(node_ranks: int = 1) -> None:
    """Build every extension of :data:`EXTENSIONS` that is not :func:`built` yet, each in its own
    ``python`` subprocess, :func:`build_jobs` at a time, so that a first run waits for the longest
    compiles side by side instead of their sum (docs/performance.md); the ``node_ranks`` ranks of a node that call
    it together share each build (one process compiles, the others wait for it and load it). Nothing with
    ``PADDLE_PFC_NATIVE=off``, or when all are built. A build that fails in its subprocess is
    reported as :func:`load` reports it when this process loads it (``on``: RuntimeError,
    ``auto``: a warning)."""
    if mode() == "off":
        return
    import subprocess
    import sys
    from concurrent.futures import ThreadPoolExecutor

    def build_one(name: str) -> None:
        subprocess.run([sys.executable, "-c", f"from paddle_pfc.kernels import extensions; extensions.load({name!r})"],
                       capture_output=True, check=False)

    pending = [name for name in EXTENSIONS if name not in _loaded and not built(name)]
    if not pending:
        return
    import time

    started = time.perf_counter()
    say(f"compiling native CPU kernels ({', '.join(pending)}): once per machine and Paddle version, about a "
        f"minute; cached in {build_directory('x', native_ops.SOURCES['center_ops']).parent}")
    with ThreadPoolExecutor(max_workers=build_jobs(node_ranks)) as pool:
        list(pool.map(build_one, pending))
    say(f"native CPU kernels compiled in {time.perf_counter() - started:.0f} s")
