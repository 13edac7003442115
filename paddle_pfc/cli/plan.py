"""Plan the per-rank memory of a Partial FC head (paddle_pfc.head.planner), or invert it.

    python tools/plan.py --num-classes 1000000 --world-size 2 --sample-ratio 0.1
    python tools/plan.py --num-classes 1000000,4000000 --world-size 2 --sample-ratio 0.1,1.0
    python tools/plan.py --max-classes --memory 11GiB --world-size 8 --sample-ratio 0.1

Imports only the planner (no paddle: the package loads nothing at import), so it runs anywhere
in a fraction of a second.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import sys

from paddle_pfc.cli.failures import USER_ERRORS, usage_failure
from paddle_pfc.head import planner
from paddle_pfc.utils import cpu


def _list(kind):
    """argparse type: comma-separated values of ``kind``."""
    def parse(text):
        try:
            return [kind(v) for v in str(text).split(",") if v.strip()]
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return parse


#: Each option's value when neither the option nor a config gives it.
DEFAULTS = {"num_classes": [1_000_000], "embedding_size": [512], "world_size": [1], "sample_ratio": [1.0],
            "batch_size": [128], "center_dtype": "float32", "compute_dtype": "float32", "momentum_dtype": None,
            "optimizer": "momentum", "accumulate_steps": 1}

SCOPE = ("the head only: class centers, their momentum, the kept rows, logits and softmax of one rank, plus "
         "a fixed process overhead; not the backbone's parameters and activations nor the data loader")


def _from_config(path: str, overrides: list[str]) -> dict:
    """The planner's options a training config (``-c``, ``-o``) sets."""
    from paddle_pfc.engine.config import load_config

    cfg = load_config(path, overrides)
    return {"num_classes": [cfg.data.num_classes], "embedding_size": [cfg.model.embedding_size],
            "sample_ratio": [cfg.classifier.sample_ratio], "batch_size": [cfg.train.batch_size],
            "center_dtype": cfg.classifier.center_dtype, "compute_dtype": cfg.classifier.dtype,
            "momentum_dtype": cfg.classifier.momentum_dtype, "optimizer": cfg.train.optimizer,
            "accumulate_steps": cfg.train.accumulate_steps}


def _parser() -> argparse.ArgumentParser:
    """The command's options."""
    from paddle_pfc.cli.help import HelpFormatter

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] + f" It covers {SCOPE}.",
                                formatter_class=HelpFormatter)
    p.add_argument("-c", "--config", default=None, metavar="PATH",
                   help="a training config: its data.num_classes, model.embedding_size, classifier.sample_ratio "
                        "/ dtype / center_dtype and train.batch_size / optimizer, unless an option below gives them")
    p.add_argument("-o", "--override", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a value of the config (repeatable)")
    p.add_argument("--num-classes", type=_list(int), default=None,
                   help=f"identities, comma-separated for several plans (default: the config's, else "
                        f"{DEFAULTS['num_classes'][0]:,})")
    p.add_argument("--embedding-size", type=_list(int), default=None,
                   help="embedding size (default: the config's, else 512)")
    p.add_argument("--world-size", type=_list(int), default=None,
                   help="ranks (default: 1; a training config states no world size, so give the ranks a run "
                        "is launched on, e.g. 8 for the 8-GPU recipes of configs/)")
    p.add_argument("--sample-ratio", type=_list(float), default=None,
                   help="Partial FC sampling ratio (default: the config's, else 1.0)")
    p.add_argument("--batch-size", type=_list(int), default=None,
                   help="batch per rank (default: the config's, else 128)")
    p.add_argument("--center-dtype", default=None, choices=sorted(planner.DTYPE_BYTES),
                   help="class-center storage dtype (default: the config's, else float32)")
    p.add_argument("--momentum-dtype", default=None, choices=sorted(planner.MOMENTUM_DTYPES),
                   help="storage dtype of the centers' momentum (default: the config's, else the center dtype; "
                        "int8: one byte an element and a float32 scale a row)")
    p.add_argument("--compute-dtype", default=None, choices=sorted(planner.DTYPE_BYTES),
                   help="classifier product dtype (default: the config's classifier.dtype, else float32)")
    p.add_argument("--optimizer", default=None, choices=sorted(planner.OPTIMIZER_STATES),
                   help="optimizer of the centers (its state a center: momentum one row, adamw two float32 rows "
                        "and a step count, sgd none; default: the config's train.optimizer, else momentum)")
    p.add_argument("--accumulate-steps", type=int, default=None,
                   help="micro-batches an optimizer step (the centers' gradient accumulation buffer; default: the "
                        "config's train.accumulate_steps, else 1)")
    p.add_argument("--kernels", default="native", choices=("native", "paddle"),
                   help="the CPU head's kernels: the native ones (PADDLE_PFC_NATIVE, the default where they "
                        "build) or Paddle's own")
    p.add_argument("--bf16-products", default="auto", choices=("auto", "yes", "no"),
                   help="whether the CPU multiplies bfloat16 natively (AVX512_BF16 / AMX: each bfloat16 product "
                        "gathers its block, more heap kept with speed malloc); auto: what this CPU reports")
    p.add_argument("--malloc", default=planner.planned_malloc(os.environ.get("PADDLE_PFC_MALLOC")),
                   choices=planner.MALLOC_MODES,
                   help="the run's malloc mode (PADDLE_PFC_MALLOC): speed keeps freed buffers in the process "
                        "(more RSS), memory returns them (default: $PADDLE_PFC_MALLOC, else speed, the "
                        "process default)")
    p.add_argument("--max-classes", action="store_true",
                   help="print the largest num_classes that fits in --memory per rank")
    p.add_argument("--memory", default=None, help="memory per rank, e.g. 11GiB, 16GB, 8e9 (without "
                   "--max-classes: says whether each plan fits)")
    p.add_argument("--json", action="store_true", help="print JSON lines instead of tables")
    return p


def _with_defaults(args: argparse.Namespace, given: dict) -> None:
    """Fill each option not given on the command line from ``given`` (a config's), else DEFAULTS."""
    for key, default in DEFAULTS.items():
        if getattr(args, key) is None:
            setattr(args, key, given.get(key, default))


def _world_size_line(world_sizes: list[int], given: bool, from_config: bool) -> str:
    """Which world size the plans use, and where it comes from."""
    sizes = ", ".join(str(w) for w in world_sizes)
    if given:
        return f"world size {sizes} (--world-size)"
    why = "a training config states none" if from_config else "--world-size not given"
    return (f"world size {sizes} (the default: {why}; give --world-size, the ranks the run is launched on, "
            "e.g. 8 for an 8-GPU recipe)")


def _bfloat16_products(args: argparse.Namespace) -> bool:
    """``--bf16-products``: yes / no, or (auto) whether this CPU reports AVX512_BF16 or AMX-BF16."""
    if args.bf16_products == "auto":
        info = cpu.cpu_info()
        return info.has("AVX512_BF16") or info.has("AMX-BF16")
    return args.bf16_products == "yes"


def _print_max_classes(args: argparse.Namespace, combos) -> None:
    """For each (D, W, ratio, batch) of ``combos``: the largest num_classes within ``--memory``, and its plan.
    ``ValueError`` on an impossible plan or memory."""
    memory = planner.parse_bytes(args.memory)
    for d, w, r, b in combos:
        m = planner.max_classes(memory, d, w, r, b, args.center_dtype,
                                args.compute_dtype, args.optimizer, args.kernels == "native", args.malloc,
                                args.momentum_dtype, _bfloat16_products(args), args.accumulate_steps)
        if args.json:
            print(json.dumps(dict(memory_per_rank=memory, embedding_size=d, world_size=w,
                                  sample_ratio=r, batch_size=b, max_classes=m)))
            continue
        print(f"memory/rank {memory / 2**30:.2f} GiB, D={d}, W={w}, ratio={r:g}, "
              f"batch/rank={b}: max_classes = {m:,}"
              + ("" if m else " (the costs that do not grow with the classes alone exceed --memory)"))
        if m:
            print(planner.plan(m, d, w, r, b, args.center_dtype, args.compute_dtype,
                               args.optimizer, args.kernels == "native", args.malloc,
                               args.momentum_dtype, _bfloat16_products(args), args.accumulate_steps).table())
        print()


def _print_plans(args: argparse.Namespace, combos) -> None:
    """The plan of each num_classes and (D, W, ratio, batch) of ``combos``, with whether it fits ``--memory``
    when given. ``ValueError`` on an impossible plan or memory."""
    memory = planner.parse_bytes(args.memory) if args.memory is not None else None
    for c, (d, w, r, b) in itertools.product(args.num_classes, list(combos)):
        result = planner.plan(c, d, w, r, b, args.center_dtype, args.compute_dtype, args.optimizer,
                              args.kernels == "native", args.malloc, args.momentum_dtype, _bfloat16_products(args),
                              args.accumulate_steps)
        fits = None if memory is None else result.total <= memory
        if args.json:
            print(json.dumps(result.as_dict() if fits is None else dict(result.as_dict(), fits=fits)))
        else:
            print(result.table())
            if fits is not None:
                print(f"{'fits' if fits else 'DOES NOT FIT'} in --memory {memory / 2**30:.2f} GiB per rank")
            print()


def main(argv: list[str] | None = None) -> int:
    """Exit status: 0 printed, 2 an impossible plan or a bad config (``error: ...``) or a bad option."""
    p = _parser()
    args = p.parse_args(argv)
    try:
        given = _from_config(args.config, args.overrides) if args.config or args.overrides else {}
    except USER_ERRORS as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    world_size_given = args.world_size is not None
    _with_defaults(args, given)
    if not args.json:
        print(f"head memory per rank ({SCOPE})")
        print(_world_size_line(args.world_size, world_size_given, bool(given)) + "\n")
    try:
        combos = itertools.product(args.embedding_size, args.world_size, args.sample_ratio,
                                   args.batch_size)
        if args.max_classes:
            if args.memory is None:
                p.error("--max-classes needs --memory")
            _print_max_classes(args, combos)
        else:
            _print_plans(args, combos)
    except USER_ERRORS as exc:
        return usage_failure(exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
