"""Process-group set-up for collective training in Paddle 3 static (PIR) mode."""
from __future__ import annotations

import os

import paddle

from paddle_pfc.runtime import configure_process

_state: dict[str, int] = {}


def _env_int(*names: str, default: int) -> int:
    for name in names:
        value = os.environ.get(name)
        if value not in (None, ""):
            return int(value)
    return default


def init_distributed() -> tuple[int, int]:
    """Prepare this process for collective static training and return ``(rank, world_size)``.

    In a process started by ``python -m paddle.distributed.launch`` this creates the communicator
    (gloo on CPU, NCCL on GPU) while still in dynamic mode, then switches to static mode and calls
    ``fleet.init(is_collective=True)`` — the order Paddle 3.3 needs for static collectives. Started
    by plain ``python`` it is a single rank. The first call also applies
    :func:`paddle_pfc.runtime.configure_process` (MKL on AMD CPUs, the ``speed`` malloc mode
    unless ``$PADDLE_PFC_MALLOC`` says otherwise). Idempotent: later calls return the same pair.
    """
    if _state:
        paddle.enable_static()
        return _state["rank"], _state["world_size"]
    configure_process()
    world_size = _env_int("PADDLE_TRAINERS_NUM", "PADDLE_GLOBAL_SIZE", default=1)
    rank = _env_int("PADDLE_TRAINER_ID", "PADDLE_GLOBAL_RANK", default=0)
    if world_size > 1:
        if not paddle.in_dynamic_mode():
            paddle.disable_static()
        paddle.distributed.init_parallel_env()
        rank = paddle.distributed.get_rank()
        world_size = paddle.distributed.get_world_size()
    paddle.enable_static()
    if world_size > 1:
        from paddle.distributed import fleet

        fleet.init(is_collective=True)
    _state.update(rank=rank, world_size=world_size)
    return rank, world_size


def current_place() -> paddle.CPUPlace | paddle.CUDAPlace:
    """The device this process computes on: its GPU when Paddle is compiled with CUDA, else the CPU."""
    if paddle.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0:
        return paddle.CUDAPlace(_env_int("FLAGS_selected_gpus", "PADDLE_LOCAL_RANK", default=0))
    return paddle.CPUPlace()


def on_gpu() -> bool:
    """True when the current device is a CUDA GPU (selects the fused GPU kernels)."""
    return paddle.device.get_device().startswith("gpu")
