"""Process settings: nothing at import; configure_process applies the malloc mode, the MKL
setting decided from the running CPU and the serial executor on CPU (a fresh interpreter each)."""
from __future__ import annotations

import os
import subprocess
import sys
from functools import partial

import pytest

from helpers.side_by_side import side_by_side
from launcher import REPO

RSS_PROBE = """
# glibc's mallinfo2 cannot read thresholds back; allocate, free and see whether the RSS returns.
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
def rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS"))
before = rss()
blocks = [libc.malloc(4 << 20) for _ in range(64)]            # 256 MiB in 4 MiB blocks
for b in blocks:
    ctypes.memset(b, 1, 4 << 20)
for b in blocks:
    libc.free(b)
print(rss() - before > 128 * 1024)                             # still resident after free?
"""


def python(code: str, **env_vars: str | None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PADDLE_PFC_MALLOC", "MKL_DEBUG_CPU_TYPE",
                                                             "FLAGS_new_executor_serial_run", *env_vars)}
    env.update({k: v for k, v in env_vars.items() if v is not None})
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.split()


def probe(mode: str | None) -> tuple[str, bool]:
    out = python("import ctypes, paddle_pfc\nprint(paddle_pfc.configure_process()['malloc'])\n" + RSS_PROBE,
                 PADDLE_PFC_MALLOC=mode)
    return out[-2], out[-1] == "True"


def test_speed_by_default_keeps_freed_blocks_and_memory_returns_them():
    default, speed, memory, glibc = side_by_side(*(partial(probe, mode) for mode in (None, "speed", "memory",
                                                                                      "default")))
    assert default == ("speed", True)
    assert speed == ("speed", True)
    assert memory == ("memory", False)
    assert glibc[0] == "default"


def test_import_changes_nothing():
    out = python("import ctypes, os, paddle_pfc\nprint(os.environ.get('MKL_DEBUG_CPU_TYPE', '-'))\n" + RSS_PROBE)
    assert out[-2:] == ["-", "False"]  # no MKL variable, glibc still returns freed 4 MiB blocks


def _cpuinfo(tmp_path, vendor: str, family: int, flags: str) -> str:
    path = tmp_path / f"cpuinfo_{vendor}_{family}"
    block = (f"processor\t: {{}}\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: 2\n"
             f"model name\t: Some CPU\nflags\t\t: fpu sse2 {flags}\n\n")
    path.write_text(block.format(0) + block.format(1).replace(flags, ""))  # only the first block counts
    return str(path)


def test_mkl_kernels_follow_the_cpu_vendor_and_features(tmp_path):
    from paddle_pfc.runtime.process import mkl_kernels_for
    from paddle_pfc.utils.cpu import cpu_info

    avx512 = "avx2 avx512f avx512cd avx512bw avx512dq avx512vl"
    zen5 = cpu_info(_cpuinfo(tmp_path, "AuthenticAMD", 26, avx512 + " avx512_bf16"))
    assert (zen5.family, zen5.model_number, zen5.avx512_core) == (26, 2, True)
    assert zen5.summary() == "Some CPU (family 26, model 2) [AVX2 AVX-512F AVX512_BF16]"
    assert mkl_kernels_for(zen5) == "7"
    assert mkl_kernels_for(cpu_info(_cpuinfo(tmp_path, "AuthenticAMD", 25, avx512))) == "7"
    # AVX-512F without BW/DQ/VL is not enough for MKL's AVX-512 kernels
    assert mkl_kernels_for(cpu_info(_cpuinfo(tmp_path, "AuthenticAMD", 23, "avx2 avx512f"))) == "5"
    assert mkl_kernels_for(cpu_info(_cpuinfo(tmp_path, "AuthenticAMD", 23, "avx"))) is None
    assert mkl_kernels_for(cpu_info(_cpuinfo(tmp_path, "GenuineIntel", 6, avx512))) is None


def test_mkl_setting_follows_the_running_cpu():
    from paddle_pfc.runtime.process import mkl_kernels_for
    from paddle_pfc.utils.cpu import cpu_info

    out, kept = side_by_side(
        partial(python, "import paddle_pfc\nprint(paddle_pfc.configure_process()['mkl_debug_cpu_type'] or '-')"),
        partial(python, "import paddle_pfc\nprint(paddle_pfc.configure_process()['mkl_debug_cpu_type'])",
                MKL_DEBUG_CPU_TYPE="4"))
    assert out[-1] == (mkl_kernels_for(cpu_info()) or "-")
    assert kept[-1] == "4"  # the user's own value wins


def test_commands_choose_mkls_kernels_too():
    """A command (``cli.entry.run``) sets what configure_process sets for MKL before its main runs
    (the user's own value kept); importing the module changes nothing."""
    from paddle_pfc.runtime.process import mkl_kernels_for
    from paddle_pfc.utils.cpu import cpu_info

    command = ("import os\nfrom paddle_pfc.cli.entry import run\nprint(os.environ.get('MKL_DEBUG_CPU_TYPE', '-'))\n"
               "run(lambda: print(os.environ.get('MKL_DEBUG_CPU_TYPE', '-')) or 0)")
    ran, kept = side_by_side(partial(python, command), partial(python, command, MKL_DEBUG_CPU_TYPE="4"))
    assert ran[-2:] == ["-", mkl_kernels_for(cpu_info()) or "-"] and kept[-2:] == ["4", "4"]


def test_commands_that_embed_take_their_share_of_the_cores():
    """math_threads_for_this_rank, before Paddle is imported: OMP_NUM_THREADS = the CPUs this process
    may run on divided among the ranks on this machine, at most the limit; the user's value, or an
    already imported Paddle, leaves everything as it was."""
    code = ("import os, sys\n{before}from paddle_pfc.runtime.process import math_threads_for_this_rank\n"
            "print(math_threads_for_this_rank({limit}), os.environ.get('OMP_NUM_THREADS', '-'))")
    cores = len(os.sched_getaffinity(0))
    cases = [("", "", {}), ("", "limit=1", {}), ("", "", {"PADDLE_LOCAL_SIZE": str(cores + 1)}),
             ("", "", {"OMP_NUM_THREADS": "3"}), ("import paddle\n", "", {})]
    runs = side_by_side(*(partial(python, code.format(before=before, limit=limit), **{"OMP_NUM_THREADS": None, **env})
                          for before, limit, env in cases))
    share = str(min(8, cores))
    assert [r[-2:] for r in runs[:4]] == [[share, share], ["1", "1"], ["1", "1"], ["None", "3"]]
    assert runs[4][-2] == "None"  # Paddle imported: its own setting stands (it sets one thread at import)


def test_unknown_mode_is_an_error_naming_the_variable():
    env = dict(os.environ, PADDLE_PFC_MALLOC="fast")
    proc = subprocess.run([sys.executable, "-c", "import paddle_pfc; paddle_pfc.configure_process()"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "PADDLE_PFC_MALLOC must be" in proc.stderr


def test_serial_executor_on_cpu_unless_the_user_set_the_flag():
    code = ("import paddle, paddle_pfc\nprint(paddle_pfc.configure_process()['serial_executor'])\n"
            "print(paddle.get_flags(['FLAGS_new_executor_serial_run'])['FLAGS_new_executor_serial_run'])")
    import paddle
    gpu = paddle.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0
    default, set_by_user = side_by_side(partial(python, code), partial(python, code, FLAGS_new_executor_serial_run="0"))
    assert default[-2:] == (["no", "False"] if gpu else ["yes", "True"])
    assert set_by_user[-2:] == ["no", "False"]  # the user's value wins


@pytest.mark.parametrize("flag", ["FLAGS_use_onednn", "FLAGS_use_mkldnn"])
def test_global_onednn_mode_is_refused_on_cpu_naming_the_flag(flag, tmp_path):
    """Either flag makes Paddle 3.3.1 segfault in a CPU training step (its oneDNN batch norm);
    configure_process (so init_distributed and every tool) refuses it instead, and tools/train.py
    says so in one line with the usage-error status."""
    from paddle_pfc.runtime.device import gpu_visible

    if gpu_visible():
        pytest.skip("a GPU is visible: GPU programs do not use Paddle's oneDNN kernels")
    env = dict(os.environ, **{flag: "1"})
    out = tmp_path / "run"
    configured, proc = side_by_side(
        partial(subprocess.run, [sys.executable, "-c", "import paddle_pfc; paddle_pfc.configure_process()"],
                cwd=REPO, env=env, capture_output=True, text=True, timeout=120),
        partial(subprocess.run, [sys.executable, str(REPO / "tools" / "train.py"), "-c",
                                 str(REPO / "configs" / "demo_cpu.yaml"), "-o", f"train.output_dir={out}", "-o",
                                 "train.max_steps=1"],
                cwd=REPO, env=env, capture_output=True, text=True, timeout=300))
    assert configured.returncode != 0 and f"ProcessSettingError: {flag} is on" in configured.stderr, \
        configured.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert proc.returncode == 2 and lines == [f"error: [rank 0] {flag} is on: Paddle 3.3's global oneDNN mode "
                                              "crashes CPU training (a segmentation fault in its batch norm, "
                                              "dnnl::error in the head's ops). Unset it: paddle_pfc already runs "
                                              "the backbones' convolutions on oneDNN through its own ops "
                                              "(PADDLE_PFC_NATIVE)"], proc.stderr[-2000:]
    assert f"{flag} is on" in (out / "error_rank0.txt").read_text()
