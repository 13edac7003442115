"""Benchmark of the Partial FC head (or a whole training step) in a Paddle 3 static program.

``tools/benchmark.py`` runs :func:`main`. Launch on W ranks (gloo on CPU) or run with plain python for one rank::

    python -m paddle.distributed.launch --nproc_per_node 2 tools/benchmark.py \\
        --num-classes 100000,1000000 --embedding-size 512 --batch-size 128 \\
        --sample-ratio 0.1 --steps 20 --warmup 3 --json out.jsonl

``--num-classes``, ``--embedding-size``, ``--batch-size``, ``--sample-ratio``, ``--dtype`` and
``--center-dtype`` take comma lists; every combination is one *configuration*, run one after the other
in the same processes, each in a fresh scope. Per configuration rank 0 prints ONE JSON line (and appends it to
``--json``):

* ``mode`` ``head``: synthetic features fed as a ``paddle.static.data`` input [B, D] (no
  backbone), the real :class:`paddle_pfc.LargeScaleClassifier` and
  ``paddle_pfc.minimize(Momentum(0.1, momentum=0.9, weight_decay=5e-4), loss)``, with the
  head's ``dtype`` / ``center_dtype`` / ``momentum_dtype`` / ``chunk_rows`` from ``--dtype`` /
  ``--center-dtype`` / ``--momentum-dtype`` / ``--chunk-rows``. For the peak RSS of one
  configuration, run one configuration per process (freed memory may stay in the process from one
  configuration to the next).
  ``mode`` ``e2e``: the same head on a backbone from ``paddle_pfc.backbones.build_backbone``
  (``--backbone``, ``--input-size``) fed images [B, 3, H, W], trained as
  ``tools/train.py`` trains: Momentum with the training config's momentum, weight decay,
  learning-rate rule (``0.1 * global_batch / 512`` unless set) and backbone gradient clipping
  (``ClipGradByGlobalNorm(train.grad_clip)``, 5 by default, as arcface_torch), the backbone
  under its ``train.amp`` (e.g. ``bf16``: bfloat16 convolutions on a CPU with AVX512_BF16) and
  its loss scaling, read from ``--config`` (default: the schema's defaults). The images come
  from paddle_pfc's loader as training builds it (``--input loader``, the default:
  :class:`LoaderInput`; the config's data, else synthetic JPEGs) or are pre-generated arrays
  (``--input arrays``). Also reports images/s, ``amp``, ``input`` (what fed the step) and
  ``input_workers``, and the parts of the step with their shares (:func:`step_parts`: input,
  backbone, head, communication, rest).
* step time: ``time.perf_counter`` around ``exe.run(main, feed, fetch_list=[loss])`` (the loss
  fetch synchronises, and the collectives in the step keep the ranks in lock-step); median and
  min over ``--steps`` timed steps after ``--warmup`` untimed ones.
* ``floor_s``: the median time of a static program that does only the three products of the
  head on the same shapes, in the head's blocks of c kept centers: per block ``[N, D] x [D, c]``
  (forward logits), ``[N, c] x [c, D]`` (feature gradient) and ``[c, N] x [N, D]`` (center
  gradient), with N = B * W gathered rows and this rank's S kept centers (``num_sample``, or
  ``num_local`` without sampling) in ``chunks`` blocks. (In blocks the products run faster than
  as three whole products, whose [N, S] logits fall out of cache: 1M classes at ratio 0.1, 2
  ranks: 0.39 s against 0.44 s, so the blocks are the floor.) Inputs are persistable
  tensors initialised in a scope of their own; only one element of each result is fetched. It is
  timed *interleaved with the step*: after the ``--steps`` timed steps (and the memory readings),
  ``--steps`` more rounds of [one training step, one [2048, 2048] x [2048, 2048] float32
  product by Paddle's ``matmul`` (MKL) and one by oneDNN's float32 matmul (where the oneDNN ops
  build; the faster of the two in each round is the best GEMM rate this CPU gives, so a slow
  math-library setting shows as a low ``floor_over_gemm_peak``), one floor run], so that the step, its
  floor and the GEMM see the same machine (a shared VM's speed drifts by ±10 % within minutes;
  a floor timed minutes after the steps moved ``step_over_floor`` by as much). Every rank runs
  them at the same time (the same CPU sharing as the real step), the ranks meeting in a tiny
  all-gather before each round's step (so that no step waits out another rank's floor); the
  slowest rank's floor and GEMM are reported. ``step_over_floor``: the median over rounds of step / floor (
  ``paired_step_s``: the median step of those rounds). ``floor_gflops``: the floor's rate
  (6·N·S·D flops); ``gemm_peak_gflops``: the GEMM's median rate; ``floor_over_gemm_peak``: the
  median over rounds of the floor's rate over the GEMM's (how close the head's products run to
  the best rate this CPU gives Paddle). ``--no-floor`` skips the rounds (all null).
* ``bf16_floor_s`` (with ``--dtype bfloat16`` where the head's products are native bfloat16
  products, oneDNN's, rounding float32 operands themselves): the same three products through
  :func:`paddle_pfc.kernels.onednn_ops.matmul` with ``bf16=True``, run in the same rounds;
  ``step_over_bf16_floor``: the median over rounds of step / bf16 floor. Otherwise both are null.
* ``passes_s``: the head's passes over its kept rows that no product makes, timed alone in the
  same rounds (:func:`build_passes_program`: per block the gather of the kept rows and their
  sparse Momentum update with a [c, D] gradient of small random values, by the head's own kernels
  on its own shard and momentum, which the rounds thus change a little after the timed steps);
  the slowest rank's median. ``bound_over_floor``: the median over rounds of
  (floor + passes) / floor, the lowest ``step_over_floor`` the head's design can reach on the
  machine at hand (the slowest rank's); ``step_over_bound``: step / (floor + passes), what the
  rest of the step adds (softmax, logit gradient, sampling, collectives and the ranks' waits,
  small ops).
* ``op_parts_ms`` (head mode, unless ``--no-op-parts``): after everything else, ``--steps`` more
  steps under Paddle's profiler, each operator's time sorted into one part
  (:mod:`paddle_pfc.bench.op_parts`: products, softmax, sampling, gathers of kept rows, the sparse
  update, the finite check, collectives, the other ops, and ``outside_ops``: the executor and
  Python between operators), milliseconds a step, the slowest rank's each; ``op_parts_step_s``:
  the profiled step (a little slower than ``median_step_s``: the profiler's cost is in it).
* memory, per rank (MiB, from ``/proc/self/status``; gathered from every rank with a one-op
  all-gather program): ``peak_rss_mib`` = VmHWM over the whole configuration (program build,
  start-up initialisation and all steps; VmHWM is reset through ``/proc/self/clear_refs`` before
  each configuration), ``step_peak_rss_mib`` = VmHWM over the steps only (reset after start-up),
  and ``idle_rss_mib`` = VmRSS of the process after importing paddle, initialising the
  communicator and running a trivial program (measured once at start; the planner's
  ``process_overhead``). Lists are in rank order; ``*_max`` fields are the maxima. Also from
  Paddle's host allocator statistic "Allocated" (exact tensor bytes, no allocator slack):
  ``persistent_alloc_mib`` (after start-up), ``startup_peak_alloc_mib`` and
  ``step_peak_alloc_mib`` (peak during the steps, persistent tensors included).
* diagnostics per rank and timed step: ``cpu_user_s_per_step``, ``cpu_sys_s_per_step`` and
  ``minor_faults_per_step`` (getrusage). A sys time close to the user time means the step is
  paying for page faults of freshly mmapped temporaries.
* ``--malloc {default,speed,memory}`` (default: ``$PADDLE_PFC_MALLOC``) picks glibc's handling
  of freed buffers, see ``paddle_pfc.runtime.process``: ``speed`` keeps them (fewest page faults,
  more RSS), ``memory`` returns them (RSS = live tensors). ``malloc`` in the record says which.
* ``native_kernels``: whether the head ran its native CPU kernels (``PADDLE_PFC_NATIVE``, see
  ``paddle_pfc.kernels.native_ops``; ``off`` measures Paddle's own kernels).

Apart from e2e's loader, nothing large is made inside the timed loop: the features [B, D] (or
images) and labels [B] of each step are generated before the loop (a few distinct batches,
cycled). With the loader, a step's time includes its wait for the batch.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
from dataclasses import fields

from paddle_pfc.bench.communication import RankGather
from paddle_pfc.bench.floor import paired_floor
from paddle_pfc.bench.memory import idle_overhead, reset_peak_rss
from paddle_pfc.bench.op_parts import PARTS
from paddle_pfc.bench.programs import training_config
from paddle_pfc.bench.record import RankFigures, configuration_fields, memory_fields, run_fields, timing_fields
from paddle_pfc.bench.steps import run_train, step_parts
from paddle_pfc.head.dtypes import MOMENTUM_DTYPES
from paddle_pfc.runtime.distributed import init_distributed
from paddle_pfc.runtime.process import MALLOC_MODES, configure_process


def _comma_list(kind):
    def parse(text: str):
        try:
            values = [kind(v) for v in text.split(",") if v.strip()]
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"bad list {text!r}: {exc}") from None
        if not values:
            raise argparse.ArgumentTypeError(f"empty list {text!r}")
        return values
    return parse


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=("head", "e2e"), default="head")
    p.add_argument("--num-classes", type=_comma_list(int), default=[1_000_000])
    p.add_argument("--embedding-size", type=_comma_list(int), default=[512])
    p.add_argument("--batch-size", type=_comma_list(int), default=[128], help="per rank")
    p.add_argument("--sample-ratio", type=_comma_list(float), default=[0.1])
    p.add_argument("--dtype", type=_comma_list(str), default=["float32"],
                   help="operand dtype of the head's products (float32, bfloat16; float16 on GPU)")
    p.add_argument("--center-dtype", type=_comma_list(str), default=["float32"],
                   help="storage dtype of the centers and their momentum")
    p.add_argument("--momentum-dtype", default=None, choices=MOMENTUM_DTYPES,
                   help="storage dtype of the centers' momentum (default: the center dtype; int8: one byte an "
                        "element and a float32 scale a row)")
    p.add_argument("--chunk-rows", type=int, default=None,
                   help="rows per block of kept centers (default: the classifier's choice)")
    p.add_argument("--steps", type=int, default=20, help="timed steps per configuration")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps before timing")
    p.add_argument("--no-floor", action="store_true", help="skip the matmul floor")
    p.add_argument("--no-op-parts", action="store_true",
                   help="head mode: skip the profiled steps that split the step into its parts (op_parts_ms)")
    p.add_argument("--backbone", default="mobilefacenet", help="e2e mode: backbone name")
    p.add_argument("--input-size", type=int, default=112, help="e2e mode: image side (multiple of 16)")
    p.add_argument("--input", choices=("loader", "arrays"), default="loader",
                   help="e2e mode: each step's images from paddle_pfc's loader as tools/train.py builds it "
                        "(the config's data; synthetic JPEGs if it names none), or pre-generated arrays")
    p.add_argument("--config", default=None,
                   help="e2e mode: training config whose train.* optimizer settings are used "
                        "(default: the schema's defaults)")
    p.add_argument("--margins", type=_comma_list(float), default=[1.0, 0.5, 0.0],
                   help="m1,m2,m3 (ArcFace default 1,0.5,0)")
    p.add_argument("--scale", type=float, default=64.0)
    p.add_argument("--seed", type=int, default=0,
                   help="seeds the synthetic batches, the centers and Paddle's generator (the kept centers): "
                        "runs with one seed repeat their losses")
    p.add_argument("--malloc", choices=("default", *MALLOC_MODES), default=None,
                   help="glibc handling of freed buffers (default: $PADDLE_PFC_MALLOC, else speed)")
    p.add_argument("--json", default=None, help="append one JSON line per configuration (rank 0)")
    args = p.parse_args(argv)
    if args.steps < 1:
        p.error("--steps must be >= 1")
    if args.warmup < 0:
        p.error("--warmup must be >= 0")
    if len(args.margins) != 3:
        p.error("--margins needs three numbers m1,m2,m3")
    return args


def configurations(args) -> list[dict]:
    return [dict(num_classes=c, embedding_size=d, batch_size=b, sample_ratio=r, dtype=t, center_dtype=ct)
            for c, d, b, r, t, ct in itertools.product(args.num_classes, args.embedding_size,
                                                       args.batch_size, args.sample_ratio,
                                                       args.dtype, args.center_dtype)]


def slowest_op_parts(op_parts: dict[str, float], gather) -> dict:
    """``op_parts_step_s`` and ``op_parts_ms`` (milliseconds a step of each part of
    :data:`~paddle_pfc.bench.op_parts.PARTS`): the maximum over ranks of each rank's figure."""
    names = ["step", *PARTS]
    values = gather([op_parts[name] for name in names] + [0.0] * (gather.length - len(names)))
    slowest = values[:, :len(names)].max(axis=0)
    return {"op_parts_step_s": round(float(slowest[0]), 4),
            "op_parts_ms": {name: round(1e3 * float(v), 2) for name, v in zip(PARTS, slowest[1:])}}


def _write_record(record: dict, json_path: str | None) -> None:
    line = json.dumps(record)
    print(line, flush=True)
    if json_path:
        with open(json_path, "a") as f:
            f.write(line + "\n")


def main(argv=None) -> int:
    """Run every configuration of the command line; rank 0 prints (and appends to ``--json``) one
    JSON record per configuration (the module docstring lists its fields)."""
    args = parse_args(argv)
    if args.malloc is not None:  # init_distributed applies it with the other process settings
        os.environ["PADDLE_PFC_MALLOC"] = args.malloc
    rank, world_size = init_distributed()
    settings = configure_process()  # what init_distributed applied
    gather = RankGather(world_size, len(fields(RankFigures)))
    idle = idle_overhead()
    can_reset = reset_peak_rss()

    def sync() -> None:  # every rank meets here (a tiny all-gather)
        gather([0.0] * gather.length)

    for cfg in configurations(args):
        if cfg["num_classes"] < world_size:
            raise SystemExit(f"--num-classes {cfg['num_classes']} < world size {world_size}")
        train = run_train(cfg, args, rank, world_size, floors=not args.no_floor, sync=sync)
        n = cfg["batch_size"] * world_size
        floor = paired_floor(train["rounds"], 6.0 * n * train["num_sample"] * cfg["embedding_size"])
        median_step = statistics.median(train["times"])
        parts = step_parts(train, gather) if args.mode == "e2e" else {}
        if train["op_parts"] is not None:
            parts.update(slowest_op_parts(train["op_parts"], gather))
        ranks = RankFigures.of_rank(train, floor, idle, median_step).gather(gather)
        if rank != 0:
            continue
        record = {**configuration_fields(args, cfg, train, world_size),
                  **timing_fields(cfg, train, ranks, world_size), **memory_fields(ranks),
                  **run_fields(train, settings, can_reset)}
        if args.mode == "e2e":
            source, workers = train["input"] if train["input"] is not None else ("arrays", None)
            record.update(backbone=args.backbone, input_size=args.input_size,
                          amp=training_config(args, cfg["batch_size"]).train.amp, input=source,
                          input_workers=workers, images_per_s=record["samples_per_s"])
        record.update(parts)
        _write_record(record, args.json)
    sys.stdout.flush()
    return 0
