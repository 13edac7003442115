#!/usr/bin/env python
"""Where a training step's CPU time goes, op by op: paddle_pfc and, with ``--insightface``,
arcface_torch on the same shapes, one rank each.

    python tools/profile_backbone.py --backbone mobilefacenet --batch-size 32 [--bf16] \\
        [--classes 100000 --sample-ratio 0.1] [--insightface ~/src/insightface] [--top 15]

The step is tools/bench_backbone.py's (the backbone with Momentum and clipping, or with
``--classes`` the whole step with the Partial FC head). paddle_pfc's static program runs under
``paddle.profiler`` and is timed by its operators (each op's whole time: a native op counts its
oneDNN work, Paddle's grad ops their kernels), the peer under ``torch.profiler`` by its ops' self
CPU time (an ``aten::`` op's time without the ops it calls), both after ``--warmup`` steps and
averaged over ``--steps``. Each side runs in its own process with ``--threads`` threads. Prints
the CPU's model and features, then per side the step time, the ``--top`` ops by time a step with
their calls a step and share of the step, and what the listed ops leave out (the rest of the ops,
and time outside any op: the executor, Python). ``--json FILE`` writes the same figures.
"""
from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from paddle_pfc.cli.entry import run


@functools.cache
def _bench_backbone():
    """tools/bench_backbone.py as a module: the step is built in one place."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("pfc_bench_backbone", Path(__file__).with_name("bench_backbone.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _profile_paddle(args) -> dict:
    import paddle.profiler as profiler

    bench = _bench_backbone()
    _, step = bench.paddle_step(args.backbone, args.batch_size, args.classes, args.sample_ratio, args.bf16,
                                bench.vit_options(args), bench.optimizer_of(args.optimizer, args.backbone))
    for _ in range(args.warmup):
        step()
    prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU])
    prof.start()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    seconds = (time.perf_counter() - start) / args.steps
    prof.stop()
    ops: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0])
    for root in prof.profiler_result.get_data().values():
        stack = [root]
        while stack:  # operators are taken whole: their children (kernels, inner events) are not added again
            node = stack.pop()
            if node.type == profiler.TracerEventType.Operator:
                ops[node.name][0] += (node.end_ns - node.start_ns) / 1e9
                ops[node.name][1] += 1
            else:
                stack.extend(node.children_node)
    return {"step_s": seconds, "ops": {name: [t / args.steps, calls / args.steps] for name, (t, calls) in ops.items()}}


def _profile_torch(args) -> dict:
    import torch
    from torch.profiler import ProfilerActivity, profile

    bench = _bench_backbone()
    step = bench.torch_step(args.backbone, args.batch_size, args.insightface, args.threads, args.classes,
                            args.sample_ratio, options=bench.vit_options(args),
                            optimizer_name=bench.optimizer_of(args.optimizer, args.backbone))
    for _ in range(args.warmup):
        step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        start = time.perf_counter()
        for _ in range(args.steps):
            step()
        seconds = (time.perf_counter() - start) / args.steps
    ops = {event.key: [event.self_cpu_time_total / 1e6 / args.steps, event.count / args.steps]
           for event in prof.key_averages() if event.self_cpu_time_total > 0}
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
    return {"step_s": seconds, "ops": ops}


def _run_side(side: str, args) -> dict:
    """The side's figures, measured in a process of its own."""
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))
    with tempfile.TemporaryDirectory() as folder:
        result = Path(folder, "result.json")
        python = args.torch_python if side == "torch" else sys.executable
        command = [python, __file__, "--side", side, "--result", str(result), "--backbone", args.backbone,
                   "--batch-size", str(args.batch_size), "--steps", str(args.steps), "--warmup", str(args.warmup),
                   "--threads", str(args.threads), "--classes", str(args.classes), "--sample-ratio",
                   str(args.sample_ratio), "--optimizer", args.optimizer] + (["--bf16"] if args.bf16 else []) + \
            (["--insightface", args.insightface] if args.insightface else []) + \
            [f"--{key.replace('_', '-')}={value}" for key, value in _bench_backbone().vit_options(args).items()]
        proc = subprocess.run(command, env=env, capture_output=True, text=True)
        if proc.returncode or not result.exists():
            raise SystemExit(f"{side} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
        return json.loads(result.read_text())


def report(label: str, figures: dict, top: int) -> list[str]:
    """Lines: the step, the ``top`` ops by time a step (ms, calls, share of the step), the rest."""
    step = figures["step_s"]
    ranked = sorted(figures["ops"].items(), key=lambda item: -item[1][0])
    lines = [f"{label}: {step * 1e3:.1f} ms a step"]
    for name, (seconds, calls) in ranked[:top]:
        lines.append(f"  {seconds * 1e3:9.1f} ms {calls:7.1f}x {100 * seconds / step:5.1f} %  {name}")
    rest = sum(seconds for _, (seconds, _) in ranked[top:])
    outside = step - sum(seconds for _, (seconds, _) in ranked)
    lines.append(f"  {rest * 1e3:9.1f} ms          {100 * rest / step:5.1f} %  "
                 f"the other {max(len(ranked) - top, 0)} ops")
    lines.append(f"  {outside * 1e3:9.1f} ms          {100 * outside / step:5.1f} %  outside any op")
    return lines


def report_parts(label: str, figures: dict) -> list[str]:
    """Lines: the step's ops summed by part (paddle_pfc.bench.vit_parts), ms and share of the step."""
    from paddle_pfc.bench.vit_parts import parts_of

    step = figures["step_s"]
    parts = parts_of({name: seconds for name, (seconds, _) in figures["ops"].items()})
    parts["outside_ops"] = step - sum(parts.values())
    figures["parts"] = parts
    return [f"{label} by part:"] + [f"  {seconds * 1e3:9.1f} ms {100 * seconds / step:5.1f} %  {part}"
                                    for part, seconds in parts.items()]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backbone", default="mobilefacenet", choices=sorted(_bench_backbone().PEER_NAMES))
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--classes", type=int, default=0, help="whole step with the head (this many classes); 0 = backbone")
    p.add_argument("--sample-ratio", type=float, default=0.1)
    p.add_argument("--bf16", action="store_true", help="paddle_pfc's convolutions in bfloat16 (train.amp=bf16)")
    p.add_argument("--insightface", default=None,
                   help="local checkout of deepinsight/insightface: also profile the peer")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--json", default=None, help="also write the figures to this file")
    p.add_argument("--optimizer", choices=("auto", "momentum", "adamw"), default="auto",
                   help="as tools/bench_backbone.py: AdamW for a ViT, Momentum otherwise")
    p.add_argument("--drop-path-rate", type=float, default=None, help="a ViT's drop path rate (both sides)")
    p.add_argument("--mask-ratio", type=float, default=None, help="a ViT's mask ratio (both sides)")
    p.add_argument("--parts", action="store_true",
                   help="also each side's ops summed into the parts of paddle_pfc.bench.vit_parts (a ViT's step)")
    p.add_argument("--torch-python", default=sys.executable, help="the interpreter the peer runs in")
    p.add_argument("--side", choices=("paddle", "torch"), help=argparse.SUPPRESS)
    p.add_argument("--result", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.batch_size < 1 or args.steps < 1 or args.warmup < 0 or args.top < 1:
        p.error("--batch-size, --steps and --top must be >= 1, --warmup >= 0")
    if args.insightface and not args.side:
        problem = _bench_backbone().peer_problem(args.insightface, args.classes > 0, args.torch_python)
        if problem:
            p.error(problem)
    if args.side:
        figures = _profile_paddle(args) if args.side == "paddle" else _profile_torch(args)
        Path(args.result).write_text(json.dumps(figures))
        return 0
    from paddle_pfc.utils.cpu import cpu_summary

    what = f"whole step, {args.classes} classes at ratio {args.sample_ratio}" if args.classes else "backbone step"
    print(f"CPU: {cpu_summary()}; {args.backbone} {what}, batch {args.batch_size}, one rank, "
          f"{args.threads} thread(s), {args.steps} profiled steps after {args.warmup}")
    results = {"paddle_pfc" + ("/bf16" if args.bf16 else ""): _run_side("paddle", args)}
    if args.insightface:
        results["arcface_torch"] = _run_side("torch", args)
    for label, figures in results.items():
        print("\n".join(report(label, figures, args.top)))
        if args.parts:
            print("\n".join(report_parts(label, figures)))
    if args.json:
        Path(args.json).write_text(json.dumps({"cpu": cpu_summary(), **results}, indent=1))
    return 0


if __name__ == "__main__":
    run(main)
