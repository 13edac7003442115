"""Process settings applied by ``import paddle_pfc``: the malloc modes (a fresh interpreter each)."""
from __future__ import annotations

import os
import subprocess
import sys

from launcher import REPO

PROBE = """
import ctypes, paddle_pfc
from paddle_pfc import _runtime_env
print(_runtime_env.tune_malloc())
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


def probe(mode: str | None) -> tuple[str, bool]:
    env = {k: v for k, v in os.environ.items() if k != "PADDLE_PFC_MALLOC"}
    if mode is not None:
        env["PADDLE_PFC_MALLOC"] = mode
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    applied, resident = proc.stdout.split()[-2:]
    return applied, resident == "True"


def test_speed_keeps_freed_blocks_and_memory_returns_them():
    assert probe("speed") == ("speed", True)
    assert probe("memory") == ("memory", False)
    assert probe(None)[0] == "default"


def test_unknown_mode_is_an_error_naming_the_variable():
    env = dict(os.environ, PADDLE_PFC_MALLOC="fast")
    proc = subprocess.run([sys.executable, "-c", "import paddle_pfc"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "PADDLE_PFC_MALLOC must be" in proc.stderr
