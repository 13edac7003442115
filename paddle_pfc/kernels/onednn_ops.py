"""oneDNN ops (``csrc/onednn_ops.cc``): convolutions (dense, grouped, depthwise; float32 or
bfloat16 products; NCHW or NHWC tensors) as a Paddle custom op with its grad op (:func:`conv2d`,
the backbones), NCHW ↔ NHWC reorders (:func:`to_channels_last`, :func:`to_channels_first`), and a
matrix product with bfloat16 operands (:func:`matmul`, the head's products with
``dtype=bfloat16``: Paddle 3.3.1's CPU build registers no bfloat16 ``matmul`` kernel).

Paddle 3.3's CPU ``conv2d`` / ``conv2d_grad`` (im2col + GEMM) take most of a backbone's training
step (docs/performance.md); oneDNN's direct convolutions (blocked layouts, JIT kernels; 1x1
stride-1 ones as GEMMs on the NCHW tensors, which spares the layout reorders) do the same float32
arithmetic faster. oneDNN is the copy Paddle's CPU
wheel already loads (``paddle/libs/libdnnl.so.3``, oneDNN 3.6.2); the wheel ships only forwarding
stubs of its headers, so the headers of that release are vendored in ``csrc/third_party/onednn``
(Apache-2.0). The build links ``libdnnl.so.3`` by soname with Paddle's ``libs`` directory as rpath,
so the process keeps one oneDNN.

Built by :mod:`paddle_pfc.kernels.native_build` like :mod:`paddle_pfc.kernels.native_ops` (same
``PADDLE_PFC_NATIVE`` switch: ``auto`` falls back to Paddle's ``conv2d``
with one warning if the build or the oneDNN check fails, ``on`` raises,
``off`` never builds), once per source, Paddle version and CPU under ``$PADDLE_PFC_BUILD_DIR`` or
``~/.cache/paddle_pfc``.

Threads: oneDNN runs on libgomp's OpenMP, while Paddle's CPU math runs on libiomp5, which Paddle
sets to one thread unless ``OMP_NUM_THREADS`` is set; libgomp alone would take every core. The
op uses ``OMP_NUM_THREADS`` when set, else as many threads as Paddle's math
(:func:`threads` tells), so ranks of one thread each do not oversubscribe the machine.
"""
from __future__ import annotations

import ctypes
import os
from pathlib import Path

import paddle

from paddle_pfc.kernels import native_build
from paddle_pfc.kernels.native_build import load_or_fall_back
from paddle_pfc.utils.cpu import CpuInfo, cpu_info

SOURCE = Path(__file__).with_name("csrc") / "onednn_ops.cc"
INCLUDE = Path(__file__).with_name("csrc") / "third_party" / "onednn"
HEADER_VERSION = (3, 6)  # the vendored headers' release; a library of the same major, minor >= this, works
_state: dict[str, object] = {}


def _paddle_libs() -> Path:
    return Path(paddle.__file__).parent / "libs"


def _onednn_library() -> ctypes.CDLL | None:
    """The oneDNN that Paddle ships (``paddle/libs/libdnnl.so.3``, the copy its process loads), or
    None if it has none."""
    library = library_path()
    return ctypes.CDLL(library) if library is not None else None


def library_path() -> str | None:
    """The path of Paddle's own oneDNN (``paddle/libs/libdnnl.so.3``), or None where the wheel ships none."""
    library = _paddle_libs() / "libdnnl.so.3"
    return str(library) if library.exists() else None


def feature_products_on_onednn(cpu: CpuInfo) -> bool:
    """True for the CPUs on which oneDNN's ``dnnl_sgemm`` computes the feature-gradient product of
    :func:`~paddle_pfc.kernels.native_ops.indexed_backward` ([N, 128] x [128, D] a tile, accumulated)
    faster than MKL: AMD family 25 (Zen 3 / Zen 4) with AVX-512, i.e. Zen 4 (docs/benchmarks.md).
    MKL everywhere else."""
    return cpu.vendor == "AuthenticAMD" and cpu.family == 25 and cpu.avx512_core


def feature_product_library() -> str:
    """What :func:`~paddle_pfc.kernels.native_ops.indexed_backward` computes its feature-gradient
    product with on this CPU: :func:`library_path` where :func:`feature_products_on_onednn`, else
    ``""`` (MKL)."""
    library = library_path()
    return library if library is not None and feature_products_on_onednn(cpu_info()) else ""


def onednn_version() -> tuple[int, int, int] | None:
    """The (major, minor, patch) of the oneDNN that Paddle ships, or None if it has none."""
    lib = _onednn_library()
    if lib is None:
        return None

    class _Version(ctypes.Structure):
        _fields_ = [("major", ctypes.c_int), ("minor", ctypes.c_int), ("patch", ctypes.c_int),
                    ("hash", ctypes.c_char_p), ("cpu_runtime", ctypes.c_uint), ("gpu_runtime", ctypes.c_uint)]

    lib.dnnl_version.restype = ctypes.POINTER(_Version)
    version = lib.dnnl_version().contents
    return version.major, version.minor, version.patch


#: oneDNN's ``dnnl_cpu_isa_avx512_core_bf16`` bits (dnnl_types.h): an effective ISA that holds them
#: multiplies bfloat16 natively (AVX512_BF16; AMX parts hold them too).
_ISA_AVX512_CORE_BF16 = 0xE7


def onednn_cpu_isa() -> int | None:
    """oneDNN's effective CPU ISA (``dnnl_get_effective_cpu_isa``: what this CPU supports, capped
    by ``ONEDNN_MAX_CPU_ISA``), or None when Paddle ships no oneDNN."""
    lib = _onednn_library()
    return None if lib is None else int(lib.dnnl_get_effective_cpu_isa())


def bfloat16_isa_missing() -> str | None:
    """None when oneDNN multiplies bfloat16 natively on this CPU (AVX512_BF16 or AMX, as its
    effective ISA says), otherwise why not; needs only the oneDNN Paddle ships, not this module's
    build. oneDNN would emulate bfloat16 on plain AVX-512 and refuses it on AVX2, so those CPUs
    count as without."""
    from paddle_pfc.utils.cpu import cpu_summary

    isa = onednn_cpu_isa()
    if isa is not None and isa & _ISA_AVX512_CORE_BF16 == _ISA_AVX512_CORE_BF16:
        return None
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA") or os.environ.get("DNNL_MAX_CPU_ISA")
    return (f"oneDNN has no native bfloat16 products on this CPU ({cpu_summary()}): they need AVX512_BF16 "
            f"or AMX; oneDNN's effective ISA is {'none' if isa is None else hex(isa)}"
            + (f", capped by ONEDNN_MAX_CPU_ISA={cap}" if cap else ""))


def bfloat16_unsupported() -> str | None:
    """None when :func:`conv2d` and :func:`matmul` can multiply in bfloat16 natively here; otherwise why not
    (:func:`bfloat16_isa_missing`, or the oneDNN op unavailable)."""
    missing = bfloat16_isa_missing()
    if missing is not None:
        return missing
    if kernels() is None:
        return ("the oneDNN ops (paddle_pfc.kernels.onednn_ops) are unavailable: PADDLE_PFC_NATIVE=off "
                "or their build failed (see the warning above)")
    return None


def _build_arguments() -> tuple[bytes, dict]:
    """``(extra_key, load options)`` of this extension's :func:`paddle_pfc.kernels.native_build.build`."""
    version = onednn_version()
    if version is None or version[0] != HEADER_VERSION[0] or version[1] < HEADER_VERSION[1]:
        raise RuntimeError(f"paddle ships oneDNN {version}; onednn_ops needs {HEADER_VERSION[0]}.x, "
                           f"x >= {HEADER_VERSION[1]} (paddle/libs/libdnnl.so.3)")
    libs = str(_paddle_libs())
    options = dict(extra_cxx_cflags=["-O3", "-march=native", "-g0"], extra_include_paths=[str(INCLUDE)],
                   extra_ldflags=[f"-L{libs}", "-l:libdnnl.so.3", "-l:libgomp.so.1", f"-Wl,-rpath,{libs}"])
    return repr(version).encode(), options


def built() -> bool:
    """True when the extension is built for this CPU, Paddle and oneDNN (False where it cannot be)."""
    try:
        key, options = _build_arguments()
    except RuntimeError:
        return False
    return native_build.is_built("onednn_ops", SOURCE, key, **options)


def _build():
    key, options = _build_arguments()
    module = native_build.build("onednn_ops", SOURCE, key, **options)
    # the same shared object Paddle loaded (dlopen returns its handle): its C entry points
    library = ctypes.CDLL(str(native_build.shared_object("onednn_ops", SOURCE, key, **options)))
    library.pfc_onednn_set_threads(_paddle_math_threads())
    _state["library"] = library
    return module


def _paddle_math_threads() -> int:
    """``OMP_NUM_THREADS`` if set, else the thread count of Paddle's CPU math (libiomp5's OpenMP,
    which Paddle sets to 1), else 1."""
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    try:
        return max(1, int(ctypes.CDLL(str(_paddle_libs() / "libiomp5.so")).omp_get_max_threads()))
    except OSError:
        return 1


def threads() -> int | None:
    """The number of threads oneDNN's convolutions use (None when they are unavailable)."""
    if kernels() is None:
        return None
    return int(_state["library"].pfc_onednn_threads())


def kernels():
    """The built extension, or None when ``PADDLE_PFC_NATIVE=off`` (or ``auto`` and the build
    failed: Paddle's ``conv2d`` is used, with one warning)."""
    return load_or_fall_back("onednn_ops", _build, "onednn_ops.cc (oneDNN convolutions and products)")


def conv2d(x, weight, stride: tuple[int, int], padding: tuple[int, int], bf16: bool = False, groups: int = 1,
           bf16_output: bool = False, channels_last: bool = False):
    """Convolution of float32 ``x`` [N, C, H, W] with ``weight`` [O, C / groups, kh, kw] (no
    dilation, no bias, zero padding ``padding`` = (ph, pw) on both sides; ``groups`` divides C and
    O, ``groups = C = O`` is a depthwise convolution):
    ``out[n, o, oh, ow] = sum_{c in o's group, i, j} weight[o, c mod C/groups, i, j] *
    x[n, c, oh*sh - ph + i, ow*sw - pw + j]``,
    differentiable in ``weight`` and, unless ``x.stop_gradient`` (images), in ``x``. oneDNN's
    direct algorithm (no Winograd); only the summation order differs from Paddle's ``conv2d``.

    ``bf16=False``: strict float32. ``bf16=True``: each product's operands are rounded to bfloat16
    (to nearest even) and the sums accumulated in float32 — the forward on (x, weight), d x on
    (d out, weight), d weight on (x, d out); the weight and its gradient are float32 tensors, ``x``
    and d x float32 or (a conversion saved) both bfloat16, the output and d out float32 or, with
    ``bf16_output``, both bfloat16 (the float32 sums rounded to nearest even). Needs a CPU with
    native bfloat16 products (:func:`bfloat16_unsupported` is None). ValueError for a bfloat16
    ``x`` or output without ``bf16``.

    ``channels_last``: ``x`` is [N, H, W, C] and the output [N, OH, OW, O] (the same values,
    NHWC), which oneDNN convolves as they are, with no layout reorder (see :func:`to_channels_last`)."""
    if (x.dtype == paddle.bfloat16 or bf16_output) and not bf16:
        raise ValueError("conv2d: a bfloat16 x or output needs bf16=True (bfloat16 products)")
    return kernels().pfc_conv2d(x, weight, int(stride[0]), int(stride[1]), int(padding[0]), int(padding[1]),
                                bool(bf16), int(groups), not x.stop_gradient, bool(bf16_output), bool(channels_last))


def to_channels_last(x):
    """NCHW ``x`` [N, C, H, W] (float32 or bfloat16) as NHWC [N, H, W, C], differentiable (its
    gradient the inverse reorder); oneDNN's reorder, at memory speed (Paddle 3.3's CPU transpose
    is ~7x slower on a backbone's maps)."""
    return kernels().pfc_to_nhwc(x)


def to_channels_first(x):
    """NHWC ``x`` [N, H, W, C] as NCHW [N, C, H, W]: the inverse of :func:`to_channels_last`."""
    return kernels().pfc_to_nchw(x)


def matmul(a, b, transpose_a: bool = False, transpose_b: bool = False, bf16: bool = True,
           bf16_output: bool = False):
    """``op(a) @ op(b)`` of ``a`` and ``b``, each read as a matrix of its leading axes' rows and its
    last axis' columns ([..., K] as [prod(...), K], no copy; ``op``: transposed when asked); the
    result [m, n], or without ``transpose_a`` [*a.shape[:-1], n]:
    with ``bf16`` each product's operands are bfloat16 (float32 ``a`` or ``b`` rounded to nearest
    even, bfloat16 ones read as they are) and the sums accumulated in float32 (what Paddle's matmul
    computes on operands already rounded to bfloat16, up to summation order), written as float32
    or, with ``bf16_output``, rounded to bfloat16 (nearest even, as Paddle's cast); strict float32
    of float32 operands without. No gradient: for values without one (the head's hand-written
    backward). ``bf16`` needs :func:`bfloat16_unsupported` None. ValueError for a bfloat16 operand
    or output without ``bf16``."""
    if (a.dtype == paddle.bfloat16 or b.dtype == paddle.bfloat16 or bf16_output) and not bf16:
        raise ValueError("matmul: a bfloat16 operand or output needs bf16=True (bfloat16 products)")
    return kernels().pfc_matmul(a, b, bool(transpose_a), bool(transpose_b), bool(bf16), bool(bf16_output))
