"""Facts about the running machine, read when asked (never at import): CPU model and features,
Paddle version, CUDA / cuDNN / NCCL versions of the Paddle build, visible GPUs.

Every capability decision and every reported figure names these rather than assuming them: the
CPUs of this project's machines change (AVX2-only parts, AVX-512 / AVX512-BF16 parts, AMX).
"""
from __future__ import annotations

import os
import platform
from dataclasses import dataclass, field

#: /proc/cpuinfo flag -> the name reported.
CPU_FEATURES = {"avx2": "AVX2", "avx512f": "AVX-512F", "avx512_bf16": "AVX512_BF16", "amx_tile": "AMX",
                "amx_bf16": "AMX-BF16"}
#: The AVX-512 subsets of Intel's Skylake-SP ("AVX-512 core": F, CD, BW, DQ, VL), which MKL's and
#: oneDNN's AVX-512 code paths use.
AVX512_CORE_FLAGS = frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"})


@dataclass(frozen=True)
class CpuInfo:
    """``model``: the CPU's model name; ``features``: the names of :data:`CPU_FEATURES` it reports;
    ``vendor``: ``vendor_id`` (e.g. ``AuthenticAMD``, ``GenuineIntel``; empty when unknown);
    ``family`` / ``model_number``: the x86 ``cpu family`` and ``model`` (None when unknown; a model
    name such as "AMD EPYC" covers Zen 4, family 25, and Zen 5, family 26, whose AVX-512 units
    differ in width); ``flags``: every flag ``/proc/cpuinfo`` lists."""

    model: str
    features: tuple[str, ...]
    vendor: str = ""
    family: int | None = None
    model_number: int | None = None
    flags: frozenset[str] = frozenset()

    def has(self, feature: str) -> bool:
        return feature in self.features

    @property
    def avx512_core(self) -> bool:
        """True when the CPU has every subset of :data:`AVX512_CORE_FLAGS`."""
        return AVX512_CORE_FLAGS <= self.flags

    @property
    def named(self) -> str:
        """``model (family F, model M)``, or the model name alone where the family is unknown."""
        return f"{self.model} (family {self.family}, model {self.model_number})" if self.family is not None \
            else self.model

    def summary(self) -> str:
        """``model (family F, model M) [features]``: how every published figure names its CPU."""
        return f"{self.named} [{' '.join(self.features) or 'no AVX2'}]"


def cpu_info(path: str = "/proc/cpuinfo") -> CpuInfo:
    """Read the first processor's model name and flags (``platform.processor()`` where there is no
    ``/proc/cpuinfo``; no features then)."""
    fields: dict[str, str] = {}
    try:
        with open(path, encoding="ascii", errors="ignore") as f:
            for line in f:
                if not line.strip():  # the end of the first processor's block
                    if fields:
                        break
                    continue
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    flags = frozenset((fields.get("flags") or fields.get("Features") or "").split())
    model = fields.get("model name") or platform.processor() or platform.machine() or "unknown"
    family, number = fields.get("cpu family", ""), fields.get("model", "")
    return CpuInfo(model, tuple(name for flag, name in CPU_FEATURES.items() if flag in flags),
                   fields.get("vendor_id", ""), int(family) if family.isdigit() else None,
                   int(number) if number.isdigit() else None, flags)


def cpu_summary() -> str:
    """The running CPU as ``model [features]`` (see :meth:`CpuInfo.summary`)."""
    return cpu_info().summary()


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
