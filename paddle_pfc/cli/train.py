"""Train a face recognizer with Partial FC.

    python -m paddle.distributed.launch --nproc_per_node 2 tools/train.py -c configs/demo_cpu.yaml
    python tools/train.py -c configs/demo_cpu.yaml -o train.max_steps=20      # one rank
    ... --resume auto          # continue from the newest checkpoint of train.output_dir, or start
                               # fresh if it has none (the command for a job that may be restarted)
    ... --resume output/demo/checkpoints        # continue from a given checkpoint (or root)
    ... --overwrite            # a fresh run into a folder with checkpoints: delete them first
    ... --pretrained output/ms1m/best -o data.num_classes=1000   # fine-tune (docs/finetuning.md)

Errors: each rank prints ``[rank R] Error: cause`` and writes it to ``output_dir/error_rank{R}.txt``.
One job per ``train.output_dir``: a second one is refused, naming the first. SIGTERM (a scheduler's
preemption) stops every rank at one step, checkpointed within ``train.preempt_grace`` seconds:
status 143 (docs/reliability.md).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from paddle_pfc.cli._outputs import check_output_dir
from paddle_pfc.cli.help import HelpFormatter
from paddle_pfc.engine.config import ConfigError, add_config_args, config_from_args
from paddle_pfc.runtime.process import math_threads_for_this_rank


def _parser() -> argparse.ArgumentParser:
    """The config options and the command's own flags."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    add_config_args(parser)
    parser.add_argument("--resume", default=None,
                        help="'auto' (newest checkpoint of train.output_dir, else fresh), a checkpoint folder, "
                             "or a checkpoints root (its newest); same as -o train.resume=...")
    parser.add_argument("--overwrite", action="store_true",
                        help="fresh run into an output_dir with checkpoints: delete them and its best/ first "
                             "(train.overwrite=true); refused, deleting nothing, when --pretrained lies there")
    parser.add_argument("--pretrained", default=None,
                        help="fine-tune from this backbone (checkpoint, best/ folder, export folder, "
                             ".pdparams / .npz state, arcface_torch .pt / .pth, or .onnx); same as "
                             "-o model.pretrained=PATH")
    return parser


def _flag_overrides(args: argparse.Namespace) -> list[str]:
    """``--resume`` / ``--overwrite`` / ``--pretrained`` as the ``-o`` overrides they stand for."""
    return ([f"train.resume={args.resume}"] if args.resume is not None else []) + \
        (["train.overwrite=true"] if args.overwrite else []) + \
        ([f"model.pretrained={args.pretrained}"] if args.pretrained is not None else [])  # "" is an error


class _Job:
    """Where this process stands: its rank and world size once known, the start time."""

    def __init__(self) -> None:
        self.rank, self.world_size, self.started = 0, 1, time.time()


def _start_and_train(cfg, job: _Job) -> None:
    """Join the job, take the output folder, set up logging and train to the end."""
    from paddle_pfc.engine.output_lock import lock_for_job
    from paddle_pfc.engine.preemption import PreemptionWatch
    from paddle_pfc.engine.trainer import Trainer, setup_logging
    from paddle_pfc.runtime.distributed import init_distributed

    job.rank, job.world_size = init_distributed(cfg.train.collective_timeout)
    preemption = PreemptionWatch(job.rank, job.world_size, cfg.train.preempt_grace)
    preemption.install()  # SIGTERM from now on: an orderly stop (before the first step, if it comes that early)
    lock_for_job(cfg.train.output_dir, job.rank, job.world_size)  # before anything is written into the folder
    (Path(cfg.train.output_dir) / f"error_rank{job.rank}.txt").unlink(missing_ok=True)  # a stale one
    setup_logging(Path(cfg.train.output_dir), job.rank)
    Trainer(cfg, job.rank, job.world_size, preemption).train()


def _train(cfg) -> int:
    """Train under ``cfg``; the exit status of :func:`main`, each failure reported as it documents."""
    from paddle_pfc.cli.quiet import VERBOSE_ENV, verbose
    from paddle_pfc.engine.checkpoint import CheckpointError
    from paddle_pfc.engine.errors import first_cause_line, report_error
    from paddle_pfc.engine.output_lock import OutputDirLockedError
    from paddle_pfc.engine.preemption import PREEMPTED_EXIT, Preempted
    from paddle_pfc.utils.errors import InputDataError, RunDataError, UsageError

    job = _Job()
    try:
        _start_and_train(cfg, job)
    except OutputDirLockedError as exc:  # the folder is another job's: nothing written into it, not even an error file
        print(f"error: [rank {job.rank}] {exc}", file=sys.stderr)
        return 2
    except Preempted as stop:
        if job.rank == 0:  # one line, to stdout and train.log
            import logging

            logging.getLogger("paddle_pfc.train").info("%s", stop)
        return PREEMPTED_EXIT
    except CheckpointError as exc:
        named = cfg.train.resume not in (None, "auto")  # the checkpoint the user named: a usage error
        report_error(exc, job.rank, cfg.train.output_dir, echo=not named)
        if named:
            print(f"error: [rank {job.rank}] {exc}", file=sys.stderr)
            return 2
        raise
    except RunDataError as exc:  # bad data met in a step or a validation: one line, the chained Paddle
        # error in the file (and here with PADDLE_PFC_VERBOSE=1)
        summary = report_error(exc, job.rank, cfg.train.output_dir, echo=False)
        if verbose():
            raise
        print(f"error: {summary}\n(the full traceback: {Path(cfg.train.output_dir) / f'error_rank{job.rank}.txt'}"
              f"; or run with {VERBOSE_ENV}=1)", file=sys.stderr)
        return 1
    except (UsageError, InputDataError) as exc:  # --pretrained, an occupied output_dir, a batch larger than the
        # data, a head larger than the machine's memory, Paddle's global oneDNN mode, a file not what it says
        report_error(exc, job.rank, cfg.train.output_dir, echo=False)
        if verbose():
            raise
        print(f"error: [rank {job.rank}] {exc}", file=sys.stderr)  # like a bad config (the traceback: in the file)
        return 2
    except Exception as exc:
        report_error(exc, job.rank, cfg.train.output_dir)
        if job.world_size > 1:  # the launcher may blame another rank than the one that failed first
            print(first_cause_line(exc, job.rank, cfg.train.output_dir, job.started), file=sys.stderr, flush=True)
        raise
    return 0


def main(argv: list[str] | None = None) -> int:
    """Exit status: 0 done, 1 bad data (a label out of range, a batch that does not match its labels, a
    verification set that cannot be read: one line, the traceback in ``output_dir/error_rank{R}.txt``)
    or ``train.preempt_grace`` ran out before a SIGTERM's checkpoint was written, 2 a usage error —
    the config, ``--pretrained``, ``--resume PATH``, an output folder that holds an earlier run or is
    in use by another job, a global batch larger than the data, class centers larger than the
    machine's memory, Paddle's global oneDNN mode on a CPU, a file that is not what its format says
    (``config error: ...`` / ``error: ...`` on stderr);
    143 stopped by SIGTERM with the current step checkpointed (rank 0 prints ``preempted at
    step N: ...``); any other error is reported per rank and raised."""
    parser = _parser()
    args = parser.parse_args(argv)
    args.overrides = list(args.overrides or []) + _flag_overrides(args)
    try:
        cfg = config_from_args(args)  # a config's own errors are named before Paddle is imported (slow)
        math_threads_for_this_rank()  # this rank's share of the cores, set as Paddle loads
        from paddle_pfc.engine.builder import check_supported

        check_supported(cfg)
    except ConfigError as exc:
        print(f"config error: {exc}", file=sys.stderr)
        return 2
    check_output_dir(parser, "train.output_dir", cfg.train.output_dir)
    from paddle_pfc.data.formats import data_format
    from paddle_pfc.engine.preflight import check_run_inputs
    from paddle_pfc.engine.protect import check_data_spared
    from paddle_pfc.utils.errors import UsageError

    try:
        if data_format(cfg.data.kind).under_root:  # nothing of a run is written into the data, not even a lock or a log
            check_data_spared(cfg.train.output_dir, cfg.data.root)
        check_run_inputs(cfg)  # before the output folder is made: a refused run leaves nothing behind
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return _train(cfg)


if __name__ == "__main__":
    sys.exit(main())
