"""Run a command on several ranks of this machine with paddle.distributed.launch, quietly.

Usage::

    paddle-pfc-launch --nproc-per-node 2 train -c configs/demo_cpu.yaml
    python tools/launch.py --nproc-per-node 2 tools/train.py -c configs/demo_cpu.yaml

COMMAND is one of the paddle-pfc commands (``train``, ``selfcheck``, ...) or a script. The
launcher runs with ``--log_level WARNING`` (its own start-up lines are not shown; its errors
are), rank 0's output is shown, and every rank's full log is written under ``--log-dir``
(default: a new folder in the temporary directory, named in the one line this command prints
first), never into the working directory. Paddle's start-up noise is kept out as in every
command (paddle_pfc.cli.quiet; ``PADDLE_PFC_VERBOSE=1`` shows everything). The exit status is
the launcher's.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

from paddle_pfc.cli.help import HelpFormatter


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from paddle_pfc.cli.entry import COMMANDS

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=HelpFormatter)
    p.add_argument("--nproc-per-node", type=int, default=2, help="ranks on this machine")
    p.add_argument("--log-dir", help="folder of the ranks' logs (default: a new folder in the temporary directory)")
    p.add_argument("--launcher-arg", action="append", default=[], metavar="ARG",
                   help="an option passed to paddle.distributed.launch as it is (repeat it; e.g. --ips=...)")
    p.add_argument("command", metavar="COMMAND", help=f"one of {', '.join(COMMANDS)}, or a script")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the command's options")
    args = p.parse_args(argv)
    if args.nproc_per_node < 1:
        p.error("--nproc-per-node must be >= 1")
    if args.command not in COMMANDS and not os.path.isfile(args.command):
        p.error(f"{args.command}: neither a command ({', '.join(COMMANDS)}) nor a script file")
    return args


def launcher_command(args: argparse.Namespace, log_dir: str) -> list[str]:
    """The ``python -m paddle.distributed.launch ...`` command line of ``args``."""
    from paddle_pfc.cli.quiet import verbose

    if os.path.isfile(args.command):
        target = [args.command]
    else:
        from paddle_pfc.cli import entry

        target = [entry.__file__, args.command]
    level = [] if verbose() else ["--log_level", "WARNING"]
    return [sys.executable, "-m", "paddle.distributed.launch", *level, "--log_dir", log_dir,
            "--nproc_per_node", str(args.nproc_per_node), *args.launcher_arg, *target, *args.args]


def main(argv: list[str] | None = None) -> int:
    """Exit status: the launcher's (2 for a bad option of this command)."""
    from paddle_pfc.cli.quiet import PADDLE_WARNINGS, verbose

    args = parse_args(argv)
    log_dir = args.log_dir or tempfile.mkdtemp(prefix="paddle_pfc_launch_")
    os.makedirs(log_dir, exist_ok=True)
    env = dict(os.environ)
    if not verbose():
        env["PYTHONWARNINGS"] = ",".join(filter(None, [env.get("PYTHONWARNINGS"), PADDLE_WARNINGS]))
    print(f"launch: {args.nproc_per_node} rank(s) of {args.command}; each rank's log in {log_dir}", flush=True)
    return subprocess.call(launcher_command(args, log_dir), env=env)


if __name__ == "__main__":
    sys.exit(main())
