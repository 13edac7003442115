"""The running CPU, read when asked: model, family and the features every capability decision and
every reported figure names (``/proc/cpuinfo``)."""
from __future__ import annotations

import platform
from dataclasses import dataclass

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
