"""Facts about the running machine, read when asked (never at import): CPU model and features,
Paddle version, CUDA / cuDNN / NCCL versions of the Paddle build, visible GPUs.

Every capability decision and every reported figure names these rather than assuming them: the
CPUs of this project's machines change (AVX2-only parts, AVX-512 / AVX512-BF16 parts, AMX).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from paddle_pfc.utils.cpu import CPU_FEATURES, CpuInfo, cpu_info


@dataclass(frozen=True)
class DeviceInfo:
    """What a report names: Paddle version and build, CPU, GPUs."""

    paddle_version: str
    compiled_with_cuda: bool
    cuda_version: str | None
    cudnn_version: str | None
    nccl_version: str | None
    gpus: tuple[str, ...]
    cpu: CpuInfo
    cpu_count: int = field(default=0)

    @property
    def gpu_visible(self) -> bool:
        return bool(self.gpus)

    def lines(self) -> list[str]:
        """Human-readable lines (one fact each)."""
        cuda = (f"CUDA {self.cuda_version}, cuDNN {self.cudnn_version}, NCCL {self.nccl_version}"
                if self.compiled_with_cuda else "not compiled with CUDA")
        return [f"paddle {self.paddle_version} ({cuda})",
                f"device: {', '.join(self.gpus) if self.gpus else 'CPU (no GPU visible)'}",
                f"cpu: {self.cpu.named}, {self.cpu_count} logical cores; features: "
                f"{' '.join(self.cpu.features) or 'none of ' + ' '.join(CPU_FEATURES.values())}"]


def _nccl_version() -> str | None:
    import paddle

    try:
        code = int(paddle.version.nccl())
    except Exception:  # builds without NCCL, or without the accessor
        return None
    if code <= 0:
        return None
    # NCCL encodes major*10000 + minor*100 + patch (2.9+), major*1000 + minor*100 + patch before.
    major, rest = (code // 10000, code % 10000) if code >= 20900 else (code // 1000, code % 1000)
    return f"{major}.{rest // 100}.{rest % 100}"


def device_info() -> DeviceInfo:
    """Query Paddle and the OS now."""
    import paddle

    cuda = paddle.is_compiled_with_cuda()
    gpus: tuple[str, ...] = ()
    if cuda:
        try:
            gpus = tuple(f"gpu:{i} {paddle.device.cuda.get_device_name(i)}"
                         for i in range(paddle.device.cuda.device_count()))
        except Exception:
            gpus = ()
    version = paddle.version
    return DeviceInfo(
        paddle_version=paddle.__version__, compiled_with_cuda=cuda,
        cuda_version=(version.cuda() if cuda else None), cudnn_version=(version.cudnn() if cuda else None),
        nccl_version=_nccl_version() if cuda else None, gpus=gpus, cpu=cpu_info(), cpu_count=os.cpu_count() or 0)


def gpu_visible() -> bool:
    """True when Paddle is compiled with CUDA and sees at least one GPU."""
    import paddle

    return paddle.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0
