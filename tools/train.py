"""Train a face recognizer with Partial FC.

    python -m paddle.distributed.launch --nproc_per_node 2 tools/train.py -c configs/demo_cpu.yaml
    python tools/train.py -c configs/demo_cpu.yaml -o train.max_steps=20      # one rank
    ... --resume output/demo/checkpoints        # continue from the latest checkpoint there
    ... --pretrained output/ms1m/best -o data.num_classes=1000   # fine-tune (docs/finetuning.md)
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import _checkout  # noqa: E402,F401  (this checkout's paddle_pfc first on sys.path)
import paddle_pfc  # noqa: E402
from paddle_pfc.config import ConfigError, add_config_args, config_from_args  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_config_args(parser)
    parser.add_argument("--resume", default=None,
                        help="checkpoint folder, or a checkpoints root (its latest); same as -o train.resume=PATH")
    parser.add_argument("--pretrained", default=None,
                        help="fine-tune from this backbone (checkpoint, best/ folder, export folder or "
                             ".pdparams); same as -o model.pretrained=PATH")
    args = parser.parse_args(argv)
    if args.pretrained:
        args.overrides = list(args.overrides or []) + [f"model.pretrained={args.pretrained}"]
    if args.resume:
        args.overrides = list(args.overrides or []) + [f"train.resume={args.resume}"]
    from paddle_pfc.pretrained import PretrainedError
    from paddle_pfc.trainer import Trainer, check_supported, setup_logging

    try:
        cfg = config_from_args(args)
        check_supported(cfg)
    except ConfigError as exc:
        print(f"config error: {exc}", file=sys.stderr)
        return 2

    rank, world_size = paddle_pfc.init_distributed()
    setup_logging(Path(cfg.train.output_dir), rank)
    trainer = Trainer(cfg, rank, world_size)
    if cfg.train.resume:
        trainer.resume(cfg.train.resume)
    try:
        trainer.train()
    except PretrainedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
