"""Start a worker script on N local ranks with ``paddle.distributed.launch`` (gloo on CPU); one rank with
plain python."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def launch(script: Path | str, nproc: int, args: list[str], log_dir: Path, timeout: float = 300,
           check: bool = True, env_vars: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``script`` on ``nproc`` ranks (with ``env_vars`` added to this environment); on failure
    (when ``check``) raise with the workers' logs. One rank runs as a user runs one: plain
    ``python script`` (the same single-rank path of ``init_distributed`` as under the launcher,
    without the launcher's ~3.5 s), its output in ``log_dir/workerlog.0`` as the launcher writes it."""
    env = launch_env(env_vars)
    if nproc == 1:
        Path(log_dir).mkdir(parents=True, exist_ok=True)
        proc = subprocess.run([sys.executable, str(script), *args], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=timeout)
        (Path(log_dir) / "workerlog.0").write_text(proc.stdout + proc.stderr)
    else:
        proc = subprocess.run(launch_cmd(script, nproc, args, log_dir), cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"launch failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}\n"
                             + worker_logs(log_dir))
    return proc


def worker_logs(log_dir: Path) -> str:
    parts = []
    for path in sorted(Path(log_dir).glob("workerlog.*")):
        parts.append(f"--- {path.name}\n" + path.read_text(errors="replace")[-4000:])
    return "\n".join(parts)


# ``python -m paddle.distributed.launch``, run as paddle_pfc's commands run (paddle_pfc.cli.entry.run:
# a quick exit): the launcher's own exit otherwise takes ~0.7 s of every launch, after its workers are done.
# Its pod looks at its workers' status every 0.05 s instead of every 1 s (Pod.watch's ``interval``, which
# no option sets): the launcher sees its workers end at once, not up to a second later.
LAUNCHER = ("import runpy\n"
            "from paddle.distributed.launch.job.pod import Pod\n"
            "from paddle_pfc.cli.entry import run\n"
            "_watch = Pod.watch\n"
            "Pod.watch = lambda self, *args, interval=0.05, **kw: _watch(self, *args, interval=interval, **kw)\n"
            "def main():\n"
            "    runpy.run_module('paddle.distributed.launch', run_name='__main__', alter_sys=True)\n"
            "run(main)\n")


def launch_cmd(script: Path | str, nproc: int, args: list[str], log_dir: Path,
               extra: list[str] = ()) -> list[str]:
    """The ``paddle.distributed.launch`` command line of :func:`launch` (``extra``: more launcher
    options, e.g. ``--master`` / ``--nnodes`` / ``--rank``)."""
    return [sys.executable, "-c", LAUNCHER, "--nproc_per_node", str(nproc), *extra,
            "--log_dir", str(log_dir), str(script), *args]


def launch_env(env_vars: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ, **(env_vars or {}))
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env.setdefault("GLOG_minloglevel", "2")
    return env


def start_launch(script: Path | str, nproc: int, args: list[str], log_dir: Path,
                 extra: list[str] = (), env_vars: dict[str, str] | None = None) -> subprocess.Popen:
    """Start :func:`launch_cmd` in the background (stdout/stderr to ``log_dir/launcher.out``)."""
    Path(log_dir).mkdir(parents=True, exist_ok=True)
    out = open(Path(log_dir) / "launcher.out", "w")
    return subprocess.Popen(launch_cmd(script, nproc, args, log_dir, extra), cwd=REPO, env=launch_env(env_vars),
                            stdout=out, stderr=subprocess.STDOUT)


def children(pid: int) -> list[int]:
    """Direct child processes of ``pid`` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def metrics_losses(output_dir: Path) -> dict[int, float]:
    """{step: loss} from a training run's ``output_dir/metrics.jsonl``, where each step's loss
    must appear once (a resumed run drops the lines it repeats)."""
    import json

    out = {}
    for line in (Path(output_dir) / "metrics.jsonl").read_text().splitlines():
        record = json.loads(line)
        if "loss" in record:
            assert record["step"] not in out, f"step {record['step']} twice in {output_dir}/metrics.jsonl"
            out[record["step"]] = record["loss"]
    return out


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
