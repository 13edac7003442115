"""A benchmark configuration's step timed (:class:`TrainStep`, :func:`run_train`), its floors paired with
it round by round, and an e2e step's parts (:func:`time_parts`, :func:`step_parts`)."""
from __future__ import annotations

import gc
import resource
import statistics
import time
from collections.abc import Callable

import numpy as np
import paddle

from paddle_pfc.bench.communication import build_collectives_program, collectives_of
from paddle_pfc.bench.floor import (
    TimedProgram,
    build_floor_program,
    build_gemm_program,
    build_passes_program,
    gemm_libraries,
)
from paddle_pfc.bench.memory import allocated_mib, peak_rss_mib, reset_peak_allocated, reset_peak_rss
from paddle_pfc.bench.op_parts import profiled_parts
from paddle_pfc.bench.programs import LoaderInput, build_train_program, make_feeds, step_optimizer, training_config
from paddle_pfc.head.sparse_update import CenterUpdateRule


class TrainStep:
    """One configuration's program (``mode``: ``head``, ``e2e`` or ``backbone``, see
    :func:`build_train_program`) built and initialised in a scope of its own (``startup_s``: the
    initialisation's seconds). After :meth:`prepare_inputs`, each call runs the next step: the
    pre-generated batches cycled, or e2e ``--input loader``'s batches (:class:`LoaderInput`), and
    returns ``(seconds with the wait for input, loss, seconds of that wait)``."""

    def __init__(self, cfg: dict, args, rank: int, world_size: int, mode: str) -> None:
        self.cfg, self.args, self.rank, self.world_size, self.mode = cfg, args, rank, world_size, mode
        self.scope = paddle.static.Scope()
        with paddle.static.scope_guard(self.scope):
            self.main, startup, self.head, self.loss, self.inputs = build_train_program(cfg, args, rank, world_size,
                                                                                        mode)
            self.exe = paddle.static.Executor(paddle.CPUPlace())
            t0 = time.perf_counter()
            self.exe.run(startup)
            self.startup_s = time.perf_counter() - t0
        self.names = {op.attrs()["name"] for op in self.main.global_block().ops if op.name() == "pd_op.data"}
        self.feeds: list[dict] = []
        self.source: LoaderInput | None = None
        self.steps = 0

    def prepare_inputs(self) -> None:
        self.feeds = make_feeds(self.cfg, self.args, self.rank, self.inputs)
        if self.mode == "e2e" and self.args.input == "loader":
            self.source = LoaderInput(self.cfg, self.args, self.rank, self.world_size,
                                      train_cfg=training_config(self.args, self.cfg["batch_size"]))

    def __call__(self) -> tuple[float, float, float]:
        feed = {k: v for k, v in self.feeds[self.steps % len(self.feeds)].items() if k in self.names}
        self.steps += 1
        waited = 0.0
        if self.source is not None:
            feed["image"], labels, waited = self.source.next()
            if labels is not None:
                feed["label"] = labels
        with paddle.static.scope_guard(self.scope):
            t0 = time.perf_counter()
            out, = self.exe.run(self.main, feed=feed, fetch_list=[self.loss])
            return waited + time.perf_counter() - t0, float(np.asarray(out)), waited

    def close(self) -> None:
        if self.source is not None:
            self.source.close()


def run_train(cfg: dict, args, rank: int, world_size: int, mode: str | None = None,
              floors: bool = False, sync: Callable[[], object] | None = None) -> dict:
    """Build, initialise and time one configuration (``mode``, default ``args.mode``) in a fresh
    scope; return rank-local numbers. With ``floors`` (and a head), after the timed steps and the
    memory readings, ``args.steps`` more rounds of one step, one large square GEMM, one run of
    the head's three-product floor (and of its bfloat16 floor where the products round):
    ``rounds``, rows of (step, gemm, floor, bf16 floor or NaN, passes) seconds (the passes:
    :func:`build_passes_program`). ``sync()`` (a collective of
    every rank) runs before each round's step: the ranks' GEMMs and floors end at different
    times, and without it a step's first collective would wait out the slower rank's floor
    (on 2 ranks this made the paired step 1.16 s against 0.88 s for the same step timed in a
    row, 2026-11-26). In ``e2e`` mode, then ``parts``: :func:`time_parts`'s rounds; in ``head`` mode
    (unless ``args.no_op_parts``) ``op_parts``: ``args.steps`` more steps under the profiler
    (:func:`paddle_pfc.bench.op_parts.profiled_parts`)."""
    mode = mode or args.mode
    reset_peak_rss()
    reset_peak_allocated()
    base_alloc = allocated_mib(peak=False)
    step = TrainStep(cfg, args, rank, world_size, mode)
    startup_peak = peak_rss_mib()
    startup_alloc = allocated_mib() - base_alloc
    persistent_alloc = allocated_mib(peak=False) - base_alloc
    reset_peak_rss()
    reset_peak_allocated()
    step.prepare_inputs()
    times, waits, losses, usage0 = _timed_steps(step, args.warmup, args.steps)
    step_peak = peak_rss_mib()
    usage1 = resource.getrusage(resource.RUSAGE_SELF)
    if usage0 is None:
        usage0 = usage1
    step_alloc = allocated_mib() - base_alloc
    head = step.head
    num_local, num_sample, chunks, native = ((head.num_local, head.num_sample, head.layout.num_blocks, head.native)
                                             if head is not None else (0, 0, 0, False))
    products_round = head is not None and head.layout.products_round
    momentum_dtype = head.spec.momentum_dtype if head is not None else None
    # after the memory readings: the floors' buffers are not the step's
    timed_floors = floors and head is not None
    rounds = _floor_rounds(step, cfg, args, rank, world_size, sync, products_round) if timed_floors else []
    parts = time_parts(step, sync) if mode == "e2e" else None
    op_parts = _op_parts(step, args, sync) if mode == "head" and not getattr(args, "no_op_parts", False) else None
    step.close()
    result = dict(rounds=rounds, parts=parts, op_parts=op_parts, times=times, waits=waits,
                  input=(step.source.source, step.source.loader.num_workers) if step.source is not None else None,
                  losses=losses, startup_s=step.startup_s, num_local=num_local, chunks=chunks,
                  momentum_dtype=momentum_dtype, native=native, num_sample=num_sample, step_peak=step_peak,
                  products_round=products_round,
                  peak=max(startup_peak, step_peak), startup_alloc=startup_alloc,
                  persistent_alloc=persistent_alloc, step_alloc=step_alloc,
                  user_s=(usage1.ru_utime - usage0.ru_utime) / len(times) if args.warmup else float("nan"),
                  sys_s=(usage1.ru_stime - usage0.ru_stime) / len(times) if args.warmup else float("nan"),
                  minflt=(usage1.ru_minflt - usage0.ru_minflt) / len(times) if args.warmup else float("nan"))
    del step, head
    gc.collect()
    return result


def _timed_steps(step: TrainStep, warmup: int, steps: int) -> tuple[list[float], list[float], list[float], object]:
    """``warmup`` untimed steps then ``steps`` timed ones: ``(times, waits, losses, usage)``, the
    losses of every step and the resource usage at the warm-up's end (None without warm-up)."""
    times, waits, losses = [], [], []
    usage = None
    for k in range(warmup + steps):
        elapsed, value, waited = step()
        if k >= warmup:
            times.append(elapsed)
            waits.append(waited)
        if k + 1 == warmup:
            usage = resource.getrusage(resource.RUSAGE_SELF)
        losses.append(value)
    return times, waits, losses, usage


def _floor_rounds(step: TrainStep, cfg: dict, args, rank: int, world_size: int, sync: Callable[[], object] | None,
                  products_round: bool) -> list[list[float]]:
    """``args.steps`` rounds of (step, best GEMM, floor, bfloat16 floor or NaN, passes) seconds,
    after one that warms the programs up (see :func:`run_train`)."""
    head = step.head
    n, d = cfg["batch_size"] * world_size, cfg["embedding_size"]
    rows = head.layout.rows  # the head's block rows (block_layout)
    gemms = [TimedProgram(*build_gemm_program(library)) for library in gemm_libraries()]
    floor = TimedProgram(*build_floor_program(n, head.num_sample, d, block_rows=rows))
    bf16_floor = (TimedProgram(*build_floor_program(n, head.num_sample, d, bf16=True, block_rows=rows))
                  if products_round else None)
    rule = CenterUpdateRule.from_optimizer(step_optimizer(cfg, args, world_size))
    passes = TimedProgram(*build_passes_program(head, rule, seed=args.seed + rank), scope=step.scope)
    rounds = []
    for k in range(1 + args.steps):  # round 0 warms the programs up
        if sync is not None:
            sync()
        timed = [step()[0], min(gemm() for gemm in gemms), floor(),
                 bf16_floor() if bf16_floor is not None else float("nan"), passes()]
        if k:
            rounds.append(timed)
    return rounds


def _op_parts(step: TrainStep, args, sync: Callable[[], object] | None) -> dict:
    """``args.steps`` more steps under the profiler, once every rank is here."""
    if sync is not None:
        sync()
    return profiled_parts(step, args.steps)


PART_NAMES = ("step", "input", "backbone", "head", "head_collectives", "communication")


def time_parts(full: TrainStep, sync: Callable[[], object] | None) -> dict[str, float]:
    """The e2e step ``full`` and its parts, each timed alone on the same shapes, in ``args.steps``
    rounds interleaved with the step (after ``args.warmup`` untimed ones; ``sync()`` before each
    program, so that every rank runs the same one at once): the step with its input wait
    (``step``, ``input``), the backbone's program (``backbone``: forward, backward and update, no
    head, no collective), the head's (``head``, with its collectives and update), the head's
    collectives alone (``head_collectives``) and every collective of the full step alone
    (``communication``: :func:`build_collectives_program`). Returns this rank's medians, seconds."""
    cfg, args, rank, world_size = full.cfg, full.args, full.rank, full.world_size
    backbone = TrainStep(cfg, args, rank, world_size, "backbone")
    head = TrainStep(cfg, args, rank, world_size, "head")
    backbone.prepare_inputs()
    head.prepare_inputs()

    def collectives(step: TrainStep) -> Callable[[], float]:
        if world_size == 1:
            return lambda: 0.0
        return TimedProgram(*build_collectives_program(collectives_of(step.main), world_size))

    programs = {"full": full, "backbone": lambda: backbone()[0], "head": lambda: head()[0],
                "head_collectives": collectives(head), "communication": collectives(full)}
    timed: dict[str, list[float]] = {name: [] for name in PART_NAMES}
    for k in range(args.warmup + args.steps):
        for name, program in programs.items():
            if sync is not None:
                sync()
            if name == "full":
                seconds, _, waited = program()
                if k >= args.warmup:
                    timed["step"].append(seconds)
                    timed["input"].append(waited)
            else:
                seconds = program()
                if k >= args.warmup:
                    timed[name].append(seconds)
    backbone.close()
    head.close()
    return {name: statistics.median(values) for name, values in timed.items()}


def step_parts(train: dict, gather) -> dict:
    """e2e: the parts of the full step from :func:`time_parts`' rounds (each part the maximum over
    ranks of the ranks' medians), with their shares of ``parts_step_s``, the full step timed in
    the same rounds (its wait for input included):

    * ``input_s``: the full step's wait for its batch (``--input loader``; 0 with arrays);
    * ``backbone_s``: forward, backward and update of the backbone (no head, no collective);
    * ``head_s``: the head on features with its update, less its own collectives;
    * ``communication_s``: every collective of the full step (the head's all-gathers and
      all-reduces, the backbone gradients' all-reduce, the step's finite flags) replayed alone on
      zeros of the same shapes, in the same order (:func:`build_collectives_program`);
    * ``rest_s``: the step less all of these, never negative (gradient clipping, the gradients'
      bucketing, the coupling of the parts, the ranks' waits for each other)."""
    values = gather([train["parts"][name] for name in PART_NAMES] + [0.0] * (gather.length - len(PART_NAMES)))
    slowest = dict(zip(PART_NAMES, (float(v) for v in values[:, :len(PART_NAMES)].max(axis=0))))
    step_s = slowest["step"]
    parts = {"input": slowest["input"], "backbone": slowest["backbone"],
             "head": max(0.0, slowest["head"] - slowest["head_collectives"]),
             "communication": slowest["communication"]}
    parts["rest"] = max(0.0, step_s - sum(parts.values()))
    # microseconds: a share read back from the rounded seconds agrees with share_* (rounded to 0.001)
    record = {"parts_step_s": round(step_s, 6)}
    record.update({f"{name}_s": round(value, 6) for name, value in parts.items()})
    record.update({f"share_{name}": round(value / step_s, 3) for name, value in parts.items()})
    return record
