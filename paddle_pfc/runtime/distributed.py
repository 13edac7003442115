"""Process-group set-up for collective training in Paddle 3 static (PIR) mode."""
from __future__ import annotations

import ctypes
import os
import signal
import sys

import paddle

from paddle_pfc.kernels.collectives import CollectiveChain
from paddle_pfc.runtime.process import configure_process
from paddle_pfc.utils.launch_env import env_int, verbose
from paddle_pfc.utils.store_socket import master_endpoint, set_no_delay, wait_until_listening

_state: dict[str, int] = {}

#: Default of ``train.collective_timeout``: how long a rank may wait for the others (seconds).
DEFAULT_COLLECTIVE_TIMEOUT = 1800.0
_PR_SET_PDEATHSIG = 1


def exit_with_parent() -> bool:
    """Ask Linux to send this process SIGKILL when its parent (the launcher) dies; True if set.

    ``paddle.distributed.launch`` does not stop its workers when it is killed itself (kill -9,
    the scheduler's OOM killer): they would run on as orphans and keep writing the output folder.
    SIGKILL, not SIGTERM: Paddle catches SIGTERM in a C++ handler that prints a stack trace, and
    a worker so signalled in the middle of a step can run on long after its launcher
    (docs/paddle-notes.md). Checkpoints are written to a temporary folder and renamed, so a
    killed worker leaves none half-written.
    A no-op (False) on other systems or when the parent is already gone (then we exit at once).
    """
    if not sys.platform.startswith("linux"):
        return False
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if os.getppid() != parent or parent == 1:  # the launcher died before prctl took effect
        os.kill(os.getpid(), signal.SIGKILL)
    return True


def init_distributed(collective_timeout: float | None = None) -> tuple[int, int]:
    """Prepare this process for collective static training and return ``(rank, world_size)``.

    In a process started by ``python -m paddle.distributed.launch`` this creates the communicator
    (gloo on CPU, NCCL on GPU) while still in dynamic mode, then switches to static mode and calls
    ``fleet.init(is_collective=True)`` — the order Paddle 3.3 needs for static collectives. Started
    by plain ``python`` it is a single rank. The first call also applies
    :func:`paddle_pfc.runtime.process.configure_process` (MKL on AMD CPUs, the ``speed`` malloc mode
    unless ``$PADDLE_PFC_MALLOC`` says otherwise). Idempotent: later calls return the same pair.

    ``collective_timeout`` (seconds, default :data:`DEFAULT_COLLECTIVE_TIMEOUT`): the NCCL
    communicator's timeout (``PADDLE_PG_TIMEOUT``, unless already set in the environment). gloo
    (CPU) keeps its fixed 30 s per collective — Paddle 3.3 cannot change it — so the trainer meets
    at a :class:`~paddle_pfc.runtime.barrier.StoreBarrier` before a collective whenever one rank
    may have worked alone. A worker of a multi-rank job also exits when its launcher dies
    (:func:`exit_with_parent`).
    """
    timeout = DEFAULT_COLLECTIVE_TIMEOUT if collective_timeout is None else float(collective_timeout)
    if timeout <= 0:
        raise ValueError(f"collective_timeout must be > 0 seconds, got {collective_timeout!r}")
    if _state:
        paddle.enable_static()
        return _state["rank"], _state["world_size"]
    configure_process()
    world_size = env_int("PADDLE_TRAINERS_NUM", "PADDLE_GLOBAL_SIZE", default=1)
    rank = env_int("PADDLE_TRAINER_ID", "PADDLE_GLOBAL_RANK", default=0)
    if world_size > 1:
        exit_with_parent()
        os.environ.setdefault("PADDLE_PG_TIMEOUT", str(int(timeout * 1000)))  # NCCL, milliseconds
        if not paddle.in_dynamic_mode():
            paddle.disable_static()
        _init_parallel_env(rank, timeout)
        rank = paddle.distributed.get_rank()
        world_size = paddle.distributed.get_world_size()
    paddle.enable_static()
    if world_size > 1:
        from paddle.distributed import fleet

        fleet.init(is_collective=True)
    _state.update(rank=rank, world_size=world_size)
    return rank, world_size


def _init_parallel_env(rank: int, timeout: float) -> None:
    """``paddle.distributed.init_parallel_env()`` without the store's fixed delays
    (:mod:`paddle_pfc.utils.store_socket`): a rank other than 0 connects once rank 0's store
    listens (waiting up to ``timeout`` seconds, then as Paddle does), and the store's client socket
    sends each request at once."""
    endpoint = master_endpoint()
    if endpoint is not None and rank != 0:
        wait_until_listening(*endpoint, timeout)
    _without_flags_banner(paddle.distributed.init_parallel_env)
    if endpoint is not None:
        set_no_delay(endpoint[1])


def current_place() -> paddle.CPUPlace | paddle.CUDAPlace:
    """The device this process computes on: its GPU when Paddle is compiled with CUDA, else the CPU."""
    if paddle.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0:
        return paddle.CUDAPlace(env_int("FLAGS_selected_gpus", "PADDLE_LOCAL_RANK", default=0))
    return paddle.CPUPlace()


_gather_programs: dict[tuple, tuple] = {}


def all_gather_rows(x, executor: paddle.static.Executor, world_size: int):
    """Every rank's ``x`` ``[rows, cols]`` (float32, or int64 when ``x`` is an integer array; the
    same shape and kind on every rank), concatenated in rank order: ``[world_size * rows, cols]``
    on every rank (a one-op static program per shape and dtype, cached). Meet at a
    :class:`~paddle_pfc.runtime.barrier.StoreBarrier` first when ranks may arrive far apart
    (gloo's 30 s)."""
    import numpy as np

    dtype = "int64" if np.issubdtype(np.asarray(x).dtype, np.integer) else "float32"
    x = np.ascontiguousarray(x, dtype=dtype)
    if x.ndim != 2:
        raise ValueError(f"all_gather_rows: expected a 2-D array, got shape {x.shape}")
    if world_size == 1:
        return x
    key = (x.shape, dtype, world_size)
    if key not in _gather_programs:
        program = paddle.static.Program()
        with paddle.utils.unique_name.guard(), \
                paddle.static.program_guard(program, paddle.static.Program()):
            value = paddle.static.data("pfc_gather_rows", list(x.shape), dtype)
            out = CollectiveChain(world_size).all_gather(value)
        _gather_programs[key] = (program, out)
    program, out = _gather_programs[key]
    return executor.run(program, feed={"pfc_gather_rows": x}, fetch_list=[out])[0]


def _without_flags_banner(call) -> None:
    """``call()`` without Paddle's "Modified FLAGS detected" banner on stderr (every rank prints
    it; the flags are ours), unless ``PADDLE_PFC_VERBOSE`` asks for Paddle's full output."""
    from paddle.distributed import parallel

    banner = getattr(parallel, "_print_modified_flags", None)
    if banner is None or verbose():
        call()
        return
    parallel._print_modified_flags = lambda flags: None
    try:
        call()
    finally:
        parallel._print_modified_flags = banner
