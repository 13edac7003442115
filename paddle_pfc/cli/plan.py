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
import sys

from paddle_pfc.head import planner


def _list(kind):
    """argparse type: comma-separated values of ``kind``."""
    def parse(text):
        try:
            return [kind(v) for v in str(text).split(",") if v.strip()]
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return parse


def main(argv: list[str] | None = None) -> int:
    """Exit status: 0 printed, 2 an impossible plan (``error: ...``) or a bad option."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--num-classes", type=_list(int), default=[1_000_000])
    p.add_argument("--embedding-size", type=_list(int), default=[512])
    p.add_argument("--world-size", type=_list(int), default=[1])
    p.add_argument("--sample-ratio", type=_list(float), default=[1.0])
    p.add_argument("--batch-size", type=_list(int), default=[128], help="per rank")
    p.add_argument("--center-dtype", default="float32", choices=sorted(planner.DTYPE_BYTES))
    p.add_argument("--compute-dtype", default="float32", choices=sorted(planner.DTYPE_BYTES))
    p.add_argument("--optimizer", default="momentum", choices=sorted(planner.OPTIMIZER_STATES))
    p.add_argument("--max-classes", action="store_true",
                   help="print the largest num_classes that fits in --memory per rank")
    p.add_argument("--memory", default=None, help="memory per rank, e.g. 11GiB, 16GB, 8e9 (without "
                   "--max-classes: says whether each plan fits)")
    p.add_argument("--json", action="store_true", help="print JSON lines instead of tables")
    args = p.parse_args(argv)
    try:
        combos = itertools.product(args.embedding_size, args.world_size, args.sample_ratio,
                                   args.batch_size)
        if args.max_classes:
            if args.memory is None:
                p.error("--max-classes needs --memory")
            memory = planner.parse_bytes(args.memory)
            for d, w, r, b in combos:
                m = planner.max_classes(memory, d, w, r, b, args.center_dtype,
                                        args.compute_dtype, args.optimizer)
                if args.json:
                    print(json.dumps(dict(memory_per_rank=memory, embedding_size=d, world_size=w,
                                          sample_ratio=r, batch_size=b, max_classes=m)))
                    continue
                print(f"memory/rank {memory / 2**30:.2f} GiB, D={d}, W={w}, ratio={r:g}, "
                      f"batch/rank={b}: max_classes = {m:,}"
                      + ("" if m else " (the costs that do not grow with the classes alone exceed --memory)"))
                if m:
                    print(planner.plan(m, d, w, r, b, args.center_dtype, args.compute_dtype,
                                       args.optimizer).table())
                print()
            return 0
        memory = planner.parse_bytes(args.memory) if args.memory is not None else None
        for c, (d, w, r, b) in itertools.product(args.num_classes, list(combos)):
            result = planner.plan(c, d, w, r, b, args.center_dtype, args.compute_dtype, args.optimizer)
            fits = None if memory is None else result.total <= memory
            if args.json:
                print(json.dumps(result.as_dict() if fits is None else dict(result.as_dict(), fits=fits)))
            else:
                print(result.table())
                if fits is not None:
                    print(f"{'fits' if fits else 'DOES NOT FIT'} in --memory {memory / 2**30:.2f} GiB per rank")
                print()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
