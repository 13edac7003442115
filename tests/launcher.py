"""Start a worker script on N local ranks with ``paddle.distributed.launch`` (gloo on CPU)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def launch(script: Path | str, nproc: int, args: list[str], log_dir: Path, timeout: float = 300,
           check: bool = True, env_vars: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``script`` on ``nproc`` ranks (with ``env_vars`` added to this environment); on failure
    (when ``check``) raise with the workers' logs."""
    env = dict(os.environ, **(env_vars or {}))
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env.setdefault("GLOG_minloglevel", "2")
    cmd = [sys.executable, "-m", "paddle.distributed.launch", "--nproc_per_node", str(nproc),
           "--log_dir", str(log_dir), str(script), *args]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"launch failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}\n"
                             + worker_logs(log_dir))
    return proc


def worker_logs(log_dir: Path) -> str:
    parts = []
    for path in sorted(Path(log_dir).glob("workerlog.*")):
        parts.append(f"--- {path.name}\n" + path.read_text(errors="replace")[-4000:])
    return "\n".join(parts)
