"""The native kernels' C++ sources compile for CPUs other than the one running the tests.

Their builds use ``-march=native``, so a machine compiles only the branches its own CPU selects
(``#ifdef __AVX512F__`` in the depthwise kernel, the vector widths everywhere): an AVX2 machine
never compiles the AVX-512 code and the other way round. This project's machines change CPU,
so every source is compiled syntax-only (templates instantiated, no code generated, ~3 s each),
with the include paths of the real builds, for the target on the other side of that line: an
AVX-512 + AVX512_BF16 + AMX one on a CPU without AVX-512F, an AVX2 one on a CPU with it (the
native build compiles this CPU's side). A branch that does not compile for it fails here.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from paddle.utils.cpp_extension.extension_utils import find_paddle_includes

from paddle_pfc.kernels import native_ops, onednn_ops
from paddle_pfc.utils.cpu import cpu_info

#: GCC's -march name -> what it enables that the sources' branches look at.
TARGETS = {
    "x86-64-v3": "AVX2 + FMA (no AVX-512)",
    "sapphirerapids": "AVX-512 F/CD/BW/DQ/VL, AVX512_BF16, AMX",
}
SOURCES = [*native_ops.SOURCES.values(), onednn_ops.SOURCE]
CSRC = onednn_ops.SOURCE.parent  # every source, and the headers they include
COMPILER = shutil.which("g++")


def syntax_check(source: Path, march: str) -> subprocess.CompletedProcess:
    """``g++ -fsyntax-only`` of ``source`` for ``-march=march``, with the real builds' options
    (``native_ops.CXX_FLAGS`` except the target and optimisation) and include paths (the headers
    beside the sources among them, so a copy of a source elsewhere finds them too)."""
    flags = [f for f in native_ops.CXX_FLAGS if not f.startswith(("-march", "-O", "-g"))]
    includes = [*find_paddle_includes(), sysconfig.get_paths()["include"], str(CSRC), str(onednn_ops.INCLUDE)]
    command = [COMPILER, "-std=c++17", "-fsyntax-only", f"-march={march}", *flags,
               *(f"-I{path}" for path in includes), str(source)]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def knows_target(march: str) -> bool:
    """True when this g++ knows ``-march=march`` (GCC 11 and later know both targets)."""
    return subprocess.run([COMPILER, f"-march={march}", "-x", "c++", "-E", "-o", os.devnull, os.devnull],
                          capture_output=True).returncode == 0


@pytest.mark.skipif(COMPILER is None, reason="no g++ (the native kernels cannot be built here either)")
@pytest.mark.parametrize("march", TARGETS)
def test_every_native_source_compiles_for_another_cpu(march):
    if (march == "sapphirerapids") == cpu_info().has("AVX-512F"):
        pytest.skip(f"this CPU's native build compiles the branches of -march={march} ({TARGETS[march]})")
    if not knows_target(march):
        pytest.skip(f"this g++ does not know -march={march}")
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        results = dict(zip(SOURCES, pool.map(lambda source: syntax_check(source, march), SOURCES)))
    failed = {source.name: result.stderr[-3000:] for source, result in results.items() if result.returncode != 0}
    assert not failed, f"-march={march} ({TARGETS[march]}): {failed}"


@pytest.mark.skipif(COMPILER is None, reason="no g++")
def test_the_check_sees_a_branch_this_cpu_does_not_compile(tmp_path):
    """The AVX-512 branch of the depthwise kernel's lane permutation, broken (a mask of half the
    vector's lanes), fails the AVX-512 check and passes the AVX2 one: the check compiles each
    target's own branch."""
    if not all(knows_target(march) for march in TARGETS):
        pytest.skip("this g++ does not know both targets")
    source = native_ops.SOURCES["depthwise_ops"]
    good = "LaneSources<kGroup, kQ, 0>(std::make_integer_sequence<int, kLanes>{})"
    text = source.read_text()
    assert text.count(good) == 1
    broken = tmp_path / source.name
    broken.write_text(text.replace(good, "LaneSources<kGroup, kQ, 0>(std::make_integer_sequence<int, kLanes / 2>{})"))
    assert syntax_check(broken, "x86-64-v3").returncode == 0
    result = syntax_check(broken, "sapphirerapids")
    assert result.returncode != 0 and "__builtin_shuffle" in result.stderr
