"""Benchmark of the Partial FC head (or a whole training step) in a Paddle 3 static program.

Launch on W ranks (gloo on CPU) or run with plain python for one rank::

    python -m paddle.distributed.launch --nproc_per_node 2 tools/benchmark.py \\
        --num-classes 100000,1000000 --embedding-size 512 --batch-size 128 \\
        --sample-ratio 0.1 --steps 20 --warmup 3 --json out.jsonl

``--num-classes``, ``--embedding-size``, ``--batch-size``, ``--sample-ratio``, ``--dtype`` and
``--center-dtype`` take comma lists; every combination is one *configuration*, run one after the other in the same processes,
each in a fresh scope. Per configuration rank 0 prints ONE JSON line (and appends it to
``--json``):

* ``mode`` ``head``: synthetic features fed as a ``paddle.static.data`` input [B, D] (no
  backbone), the real :class:`paddle_pfc.LargeScaleClassifier` and
  ``paddle_pfc.minimize(Momentum(0.1, momentum=0.9, weight_decay=5e-4), loss)``, with the
  head's ``dtype`` / ``center_dtype`` / ``chunk_rows`` from ``--dtype`` / ``--center-dtype`` /
  ``--chunk-rows``. For the peak RSS of one configuration, run one configuration per process
  (freed memory may stay in the process from one configuration to the next).
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
import gc
import itertools
import json
import os
import platform
import resource
import shutil
import statistics
import sys
import tempfile
import time
import weakref
from collections.abc import Callable

import numpy as np

import paddle_pfc  # noqa: F401
from paddle_pfc.cli.entry import run  # noqa: E402
from paddle_pfc.utils.cpu import cpu_summary  # noqa: E402
from paddle_pfc.runtime.process import MALLOC_MODES  # noqa: E402
from paddle_pfc.head.sparse_update import CenterUpdateRule  # noqa: E402
from paddle_pfc.kernels import onednn_ops  # noqa: E402
import paddle
from paddle import _C_ops


_DISTINCT_BATCHES = 16  # distinct synthetic batches cycled through the steps
GEMM_SIZE = 2048  # side of the square product whose rate is the best GEMM rate (gemm_peak_gflops)


# ---------------------------------------------------------------------------------------------
# memory helpers
def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def rss_mib() -> float:
    """Current resident set size of this process in MiB."""
    return _status_kib("VmRSS") / 1024.0


def peak_rss_mib() -> float:
    """Peak resident set size (VmHWM) since the last :func:`reset_peak_rss`, in MiB."""
    return _status_kib("VmHWM") / 1024.0


def allocated_mib(peak: bool = True) -> float:
    """Paddle's host allocator statistic "Allocated" (peak or current) in MiB; -1 if unavailable."""
    core = paddle.base.core
    try:
        fn = core.host_memory_stat_peak_value if peak else core.host_memory_stat_current_value
        return fn("Allocated", 0) / 2**20
    except Exception:  # pragma: no cover - older/other builds
        return -1.0


def reset_peak_allocated() -> None:
    try:
        paddle.base.core.host_memory_stat_reset_peak_value("Allocated", 0)
    except Exception:  # pragma: no cover
        pass


def reset_peak_rss() -> bool:
    """Reset VmHWM to the current RSS (Linux ``clear_refs`` 5). False when not permitted."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


# ---------------------------------------------------------------------------------------------
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
    p.add_argument("--chunk-rows", type=int, default=None,
                   help="rows per block of kept centers (default: the classifier's choice)")
    p.add_argument("--steps", type=int, default=20, help="timed steps per configuration")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps before timing")
    p.add_argument("--no-floor", action="store_true", help="skip the matmul floor")
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


# ---------------------------------------------------------------------------------------------
class RankGather:
    """All-gathers a small float64 vector from every rank (one tiny static program)."""

    def __init__(self, world_size: int, length: int) -> None:
        self.world_size, self.length = world_size, length
        if world_size == 1:
            return
        self.main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(self.main, startup):
            v = paddle.static.data("rank_values", [1, length], "float64")
            self.out = _C_ops.all_gather(v, 0, world_size)
        self.exe = paddle.static.Executor(paddle.CPUPlace())
        self.scope = paddle.static.Scope()

    def __call__(self, values) -> np.ndarray:
        """[W, length] array: row r holds rank r's ``values``."""
        values = np.asarray(values, dtype=np.float64).reshape(1, self.length)
        if self.world_size == 1:
            return values
        with paddle.static.scope_guard(self.scope):
            out, = self.exe.run(self.main, feed={"rank_values": values}, fetch_list=[self.out])
        return np.asarray(out).reshape(self.world_size, self.length)


def idle_overhead() -> float:
    """RSS (MiB) after a trivial static program has run: the fixed cost of a rank."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [4], "float32")
        y = x * 2.0 + 1.0
    exe = paddle.static.Executor(paddle.CPUPlace())
    with paddle.static.scope_guard(paddle.static.Scope()):
        exe.run(startup)
        exe.run(main, feed={"x": np.ones(4, np.float32)}, fetch_list=[y])
    gc.collect()
    return rss_mib()


# ---------------------------------------------------------------------------------------------
def build_train_program(cfg: dict, args, rank: int, world_size: int, mode: str):
    """(main, startup, head, loss, input names) for one configuration, built by the engine's builder
    (:mod:`paddle_pfc.engine.builder`) from :func:`step_config`. ``mode``: ``head`` (the head on a
    feature input), ``e2e`` (backbone and head, as training builds them), or ``backbone`` (e2e's
    backbone alone: loss = mean(embedding * fixed weights), the same optimizer, no head and no
    collective; head None). Paddle's generator is seeded with ``--seed`` first (as ``tools/train.py``
    seeds it with ``train.seed``), so the kept centers, the backbone's initial weights and the
    losses repeat from one run to the next."""
    from paddle_pfc.engine.builder import append_head_training, build_embedding, make_optimizer as training_optimizer

    paddle.seed(args.seed)
    b, d = cfg["batch_size"], cfg["embedding_size"]
    step_cfg = step_config(cfg, args)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        if mode == "backbone":
            image = paddle.static.data("image", [b, 3, args.input_size, args.input_size], "float32")
            weights = paddle.static.data("weights", [b, d], "float32")
            loss = paddle.mean(build_embedding(step_cfg, image)[1] * weights)
            training_optimizer(step_cfg, learning_rate(step_cfg, world_size)).minimize(loss)
            return main, startup, None, loss, "image"
        label = paddle.static.data("label", [b], "int64")
        if mode == "head":
            feature = paddle.static.data("feature", [b, d], "float32")
            feature.stop_gradient = False
            inputs = "feature"
        else:
            image = paddle.static.data("image", [b, 3, args.input_size, args.input_size], "float32")
            feature = build_embedding(step_cfg, image)[1]
            inputs = "image"
        trained = append_head_training(step_cfg, feature, label, rank, world_size,
                                       learning_rate(step_cfg, world_size), chunk_rows=args.chunk_rows)
    return main, startup, trained.head, trained.loss, inputs


def training_config(args, batch_size: int):
    """e2e mode: the training config (``--config``, default: the schema's defaults) at ``batch_size``.
    A config that names no ``data.num_classes`` (e.g. only ``train: {amp: bf16}``) gets
    ``--num-classes``' largest: the head's class count is ``--num-classes`` here."""
    from paddle_pfc.engine.config import config_from_dict, read_config_file

    raw = read_config_file(args.config) if args.config is not None else {}
    overrides = [f"train.batch_size={batch_size}"]
    data = raw.get("data") if isinstance(raw, dict) else None
    if not isinstance(data, dict) or data.get("num_classes") is None:
        overrides.append(f"data.num_classes={max(args.num_classes)}")
    return config_from_dict(raw, overrides)


#: ``head`` mode's training settings: the head alone, Momentum(0.1, momentum 0.9, weight decay
#: 5e-4), no clip, no AMP.
HEAD_MODE_TRAIN = ("train.lr=0.1", "train.momentum=0.9", "train.weight_decay=0.0005", "train.grad_clip=null",
                   "train.amp=none")


def step_config(cfg: dict, args):
    """The config one configuration's step is built from: ``e2e`` / ``backbone``: the training
    config (:func:`training_config`), ``head``: the schema's defaults with :data:`HEAD_MODE_TRAIN`;
    with the configuration's head (classes, embedding size, sample ratio, dtypes), the command's
    backbone, input size, margins, scale and seed, and the kernels ``$PADDLE_PFC_KERNELS`` asks for."""
    from paddle_pfc.engine.config import config_from_dict
    from paddle_pfc.kernels import requested

    base = {} if args.mode == "head" else training_config(args, cfg["batch_size"]).to_dict()
    m1, m2, m3 = args.margins
    overrides = [*(HEAD_MODE_TRAIN if args.mode == "head" else ()),
                 f"train.batch_size={cfg['batch_size']}", f"train.seed={args.seed}",
                 f"data.num_classes={cfg['num_classes']}", f"data.image_size={args.input_size}",
                 f"model.backbone={args.backbone}", f"model.input_size={args.input_size}",
                 f"model.embedding_size={cfg['embedding_size']}", f"classifier.sample_ratio={cfg['sample_ratio']}",
                 f"classifier.dtype={cfg['dtype']}", f"classifier.center_dtype={cfg['center_dtype']}",
                 f"classifier.kernels={requested(None)[0]}",
                 f"loss.margin1={m1}", f"loss.margin2={m2}", f"loss.margin3={m3}", f"loss.scale={args.scale}"]
    return config_from_dict(base, overrides)


def learning_rate(step_cfg, world_size: int) -> float:
    """The base learning rate (``train.lr``, else ``0.1 * global_batch / 512``): constant, the
    schedule does not change a step's cost."""
    from paddle_pfc.engine.config import resolve_lr

    return resolve_lr(step_cfg, world_size)


def make_optimizer(cfg: dict, args, world_size: int) -> paddle.optimizer.Optimizer:
    """The optimizer of configuration ``cfg`` (the engine's
    :func:`~paddle_pfc.engine.builder.make_optimizer` of :func:`step_config`): ``head`` mode
    Momentum(0.1, 0.9, weight decay 5e-4), no clip; ``e2e`` the training config's."""
    from paddle_pfc.engine.builder import make_optimizer as training_optimizer

    step_cfg = step_config(cfg, args)
    return training_optimizer(step_cfg, learning_rate(step_cfg, world_size))


def make_feeds(cfg: dict, args, rank: int, inputs: str) -> list[dict]:
    rng = np.random.default_rng(args.seed * 7919 + rank)
    b, d = cfg["batch_size"], cfg["embedding_size"]
    feeds = []
    for _ in range(min(_DISTINCT_BATCHES, args.warmup + args.steps)):
        shape = [b, d] if inputs == "feature" else [b, 3, args.input_size, args.input_size]
        feeds.append({inputs: rng.standard_normal(shape, dtype=np.float32),
                      "label": rng.integers(0, cfg["num_classes"], b, dtype=np.int64),
                      "weights": rng.standard_normal([b, d], dtype=np.float32)})
    return feeds


class LoaderInput:
    """e2e ``--input loader``: each step's images from the loader ``tools/train.py`` builds
    (:mod:`paddle_pfc.engine.input`: the config's ``data.num_workers``, ``flip``, ``seed``,
    ``batch_timeout``): over the config's data where it names ``rec`` or ``folder`` data (its
    labels too, split over the ranks as training splits them), else over a temporary ``.rec`` of
    ``_DISTINCT_BATCHES`` batches of synthetic face JPEGs per rank (its labels replaced by the
    uniform ones of the pre-generated batches, so that the head's positives spread over the
    shards as in ``arrays`` mode). :meth:`next` returns ``(images, labels or None, seconds waited
    for the batch)``; the wait includes the consumer's share of the input (normalising the
    workers' uint8 batch)."""

    def __init__(self, cfg: dict, args, rank: int, world_size: int, train_cfg) -> None:
        from paddle_pfc.data import build_dataset, write_synthetic_rec
        from paddle_pfc.engine.input import DataSizeError, dataset_from_config, loader_from_config

        d, batch = train_cfg.data, cfg["batch_size"]
        self._folder = None
        if d.kind in ("rec", "folder"):
            dataset = dataset_from_config(d, args.input_size)
            if dataset.num_classes > cfg["num_classes"]:
                raise SystemExit(f"--input loader: the config's data has {dataset.num_classes} classes, more than "
                                 f"--num-classes {cfg['num_classes']}")
            self.source, self.own_labels = f"{d.kind}:{d.root}", True
        else:
            self._folder = tempfile.mkdtemp(prefix="pfc_benchmark_")
            write_synthetic_rec(self._folder, _DISTINCT_BATCHES * batch, args.input_size, seed=args.seed + rank)
            dataset = build_dataset("rec", self._folder, None, args.input_size)
            rank, world_size = 0, 1  # every rank reads its own synthetic set
            self.source, self.own_labels = "synthetic jpeg", False
        try:
            self.loader = loader_from_config(d, dataset, batch, rank, world_size, args.input_size)
        except DataSizeError as exc:
            raise SystemExit(f"--input loader: {exc}") from None
        self._epoch, self._batches = 0, iter(())
        self._cleanup = weakref.finalize(self, LoaderInput._release, self.loader, self._folder)

    def next(self) -> tuple[np.ndarray, np.ndarray | None, float]:
        t0 = time.perf_counter()
        try:
            images, labels = next(self._batches)
        except StopIteration:
            self._batches = self.loader.epoch(self._epoch)
            self._epoch += 1
            images, labels = next(self._batches)
        return images, labels if self.own_labels else None, time.perf_counter() - t0

    def close(self) -> None:
        """Stop the workers and delete the synthetic set (also at garbage collection or exit)."""
        self._cleanup()

    @staticmethod
    def _release(loader, folder: str | None) -> None:
        loader.close()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


_COLLECTIVE_OPS = ("pd_op.all_gather", "pd_op.all_reduce", "pd_op.all_reduce_")


def collectives_of(program) -> list[tuple[str, tuple[int, ...], str, int]]:
    """The collectives ``program`` issues, in program order (nested blocks included: the head's
    all-gather with gradient and its backward are regions of ``pylayer`` ops), as ``(op, input
    shape, dtype, reduce type or ranks)``. Program order is their order on every rank (the head's
    :class:`~paddle_pfc.kernels.collectives.CollectiveChain` and ``minimize`` chain them)."""
    found = []

    def walk(block) -> None:
        for op in block.ops:
            if op.name() in _COLLECTIVE_OPS:
                value = op.operand_source(0)
                attrs = op.attrs()
                found.append((op.name().rstrip("_"), tuple(value.shape), str(value.dtype).replace("paddle.", ""),
                              int(attrs["nranks"] if op.name() == "pd_op.all_gather" else attrs["reduce_type"])))
            for inner in op.blocks():
                walk(inner)

    walk(program.global_block())
    return found


def build_collectives_program(collectives: list, world_size: int):
    """``(main, startup, probe)``: ``collectives`` (:func:`collectives_of`) alone, in their order, on
    zero tensors of their shapes and dtypes (the communication of a step without its compute)."""
    from paddle_pfc.kernels.collectives import CollectiveChain, zero_depending_on

    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        chain = CollectiveChain(world_size)
        out = paddle.zeros([1], "float32")
        for name, shape, dtype, kind in collectives:
            if any(d < 0 for d in shape):
                raise ValueError(f"{name} of a dynamic shape {list(shape)}: cannot replay it")
            x = paddle.zeros(list(shape), dtype)
            if name == "pd_op.all_gather" and kind == world_size:
                out = chain.all_gather(x)
            elif name == "pd_op.all_reduce" and kind in (0, 1):  # Paddle's reduce types: 0 sum, 1 max
                out = chain.all_reduce_sum(x) if kind == 0 else chain.all_reduce_max(x)
            else:
                raise ValueError(f"{name} ({kind}) in a {world_size}-rank program: not replayed")
        probe = zero_depending_on(out)  # the last collective, which follows every other one
    return main, startup, probe


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
    row, 2026-11-26). In ``e2e`` mode, then ``parts``: :func:`time_parts`'s rounds."""
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
    times, waits, losses = [], [], []
    usage0 = None
    for k in range(args.warmup + args.steps):
        elapsed, value, waited = step()
        if k >= args.warmup:
            times.append(elapsed)
            waits.append(waited)
        if k + 1 == args.warmup:
            usage0 = resource.getrusage(resource.RUSAGE_SELF)
        losses.append(value)
    step_peak = peak_rss_mib()
    usage1 = resource.getrusage(resource.RUSAGE_SELF)
    if usage0 is None:
        usage0 = usage1
    step_alloc = allocated_mib() - base_alloc
    head = step.head
    num_local, num_sample, chunks, native = ((head.num_local, head.num_sample, len(head.chunks), head.native)
                                             if head is not None else (0, 0, 0, False))
    products_round = head is not None and head.backend.blocks.products_round(cfg["dtype"])
    rounds = []
    if floors and head is not None:  # after the memory readings: the floors' buffers are not the step's
        n, d = cfg["batch_size"] * world_size, cfg["embedding_size"]
        rows = head.chunks[0].stop  # the head's block rows (None: one block)
        gemms = [TimedProgram(*build_gemm_program(library)) for library in gemm_libraries()]
        floor = TimedProgram(*build_floor_program(n, num_sample, d, block_rows=rows))
        bf16_floor = (TimedProgram(*build_floor_program(n, num_sample, d, bf16=True, block_rows=rows))
                      if products_round else None)
        rule = CenterUpdateRule.from_optimizer(make_optimizer(cfg, args, world_size))
        passes = TimedProgram(*build_passes_program(head, rule, seed=args.seed + rank), scope=step.scope)
        for k in range(1 + args.steps):  # round 0 warms the programs up
            if sync is not None:
                sync()
            timed = [step()[0], min(gemm() for gemm in gemms), floor(),
                     bf16_floor() if bf16_floor is not None else float("nan"), passes()]
            if k:
                rounds.append(timed)
        del floor, bf16_floor, passes, gemms
    parts = time_parts(step, sync) if mode == "e2e" else None
    step.close()
    result = dict(rounds=rounds, parts=parts, times=times, waits=waits,
                  input=(step.source.source, step.source.loader.num_workers) if step.source is not None else None,
                  losses=losses, startup_s=step.startup_s, num_local=num_local, chunks=chunks,
                  native=native, num_sample=num_sample, step_peak=step_peak, products_round=products_round,
                  peak=max(startup_peak, step_peak), startup_alloc=startup_alloc,
                  persistent_alloc=persistent_alloc, step_alloc=step_alloc,
                  user_s=(usage1.ru_utime - usage0.ru_utime) / len(times) if args.warmup else float("nan"),
                  sys_s=(usage1.ru_stime - usage0.ru_stime) / len(times) if args.warmup else float("nan"),
                  minflt=(usage1.ru_minflt - usage0.ru_minflt) / len(times) if args.warmup else float("nan"))
    del step, head
    gc.collect()
    return result


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


# ---------------------------------------------------------------------------------------------
def build_passes_program(head, rule: CenterUpdateRule, seed: int = 0):
    """``(main, startup, probe, feed)``: the passes over the kept centers' rows that ``head`` (a
    classifier whose program is alive) makes besides its products, alone, with the head's own block
    operations (``head.backend.blocks``: the native kernels or Paddle's ops) on the head's own shard
    and momentum (``main`` names them: run it in the head's scope; ``startup`` creates only the
    gradients) in the head's blocks: per block, the read of its rows (with sampling a gather of
    ``c`` scattered rows of the shard, as the head gathers its kept centers, unless its products
    read them where they lie; without, a view of consecutive rows) and the sparse update of those
    rows by ``rule`` (Momentum or SGD with weight decay, the native update's tangent projection
    included) with a float32 [c, D] gradient of small random values and a learning rate of 1e-3:
    it changes the head's kept rows a little. The kept
    rows are a uniform sorted subset of the shard (``seed``), fed as ``passes_index_<k>`` per block.
    ``probe``: the sum of each gathered block's first element (0 without a gather).

    Every step of the head pays these passes at least once (its momentum, rows and gradient are read
    and written where they lie in memory), so (floor + passes) / floor is the lowest step / floor
    that the head's design reaches on the machine that runs it. Memory: the gradients, as large as
    the step's own center gradients."""
    ops = head.backend.blocks
    num_kept = head.num_sample if head.sampled else head.num_local
    shape, dtype = [head.num_local, head.embedding_size], head.center_dtype
    rng = np.random.default_rng(seed)
    kept = (np.sort(rng.choice(head.num_local, num_kept, replace=False)) if head.sampled
            else np.arange(num_kept)).astype(np.int64)
    main, startup = paddle.static.Program(), paddle.static.Program()
    feed, probe = {}, None
    # the head's tables by name (its startup initialised them: these initialisers are never run)
    with paddle.static.program_guard(main, paddle.static.Program()):
        weight = paddle.static.create_parameter(shape, dtype, name=head.weight.name)
        velocity = (paddle.static.create_parameter(shape, dtype, name=head.velocity.name)
                    if rule.momentum is not None else None)
    for table in (weight, velocity):
        if table is not None:
            table.stop_gradient = True
    with paddle.static.program_guard(main, startup):
        lr = paddle.full([1], 1e-3, "float32")
        for k, block in enumerate(head.chunks):
            stop = num_kept if block.stop is None else block.stop
            index = paddle.static.data(f"passes_index_{k}", [stop - block.start], "int64")
            feed[index.name] = kept[block.start:stop]
            grad = paddle.static.create_parameter([stop - block.start, head.embedding_size], "float32",
                                                  name=f"passes_grad_{k}",
                                                  default_initializer=paddle.nn.initializer.Normal(0.0, 1e-3))
            grad.stop_gradient = True
            if block.table is not None:  # the head reads the rows where they lie: the update alone
                centers = None
            elif head.sampled:
                centers = ops.gather_rows(weight, index)
                first = paddle.cast(centers[0, 0], "float32")
                probe = first if probe is None else probe + first
            else:  # a view: read by the update itself (and a probe of it could run after the update)
                centers = ops.row_range(weight, block.start, stop)
            ops.update_rows_(weight, velocity, index, centers, grad, lr, rule)
        if probe is None:
            probe = paddle.full([], 0.0, "float32")
    return main, startup, probe, feed


# ---------------------------------------------------------------------------------------------
def build_floor_program(n: int, s: int, d: int, bf16: bool = False, block_rows: int | None = None):
    """The three products of the head alone, on persistable inputs (nothing is fed), in the head's
    blocks of ``block_rows`` kept centers (all ``s`` in one block by default): per block
    ``[N, D] x [D, c]`` (logits), ``[N, c] x [c, D]`` (the feature gradient, summed over blocks)
    and ``[c, N] x [N, D]`` (the block's center gradient). Paddle's float32 ``matmul``, or with
    ``bf16`` the head's native bfloat16 products."""
    def product(a, b, transpose_a=False, transpose_b=False):
        if bf16:
            return onednn_ops.matmul(a, b, transpose_a, transpose_b, bf16=True)
        return paddle.matmul(a, b, transpose_x=transpose_a, transpose_y=transpose_b)

    main, startup = paddle.static.Program(), paddle.static.Program()
    init = paddle.nn.initializer.Normal(0.0, 0.01)
    rows = block_rows or s
    with paddle.static.program_guard(main, startup):
        x = paddle.static.create_parameter([n, d], "float32", name="floor_x", default_initializer=init)
        w = paddle.static.create_parameter([s, d], "float32", name="floor_w", default_initializer=init)
        x.stop_gradient = w.stop_gradient = True
        grad_x, probe = None, None
        for start in range(0, s, rows):
            block = w if rows >= s else paddle.slice(w, [0], [start], [min(s, start + rows)])
            logits = product(x, block, transpose_b=True)                     # [N,D]x[D,c]
            grad = product(logits, block)                                    # [N,c]x[c,D]
            grad_x = grad if grad_x is None else grad_x + grad
            grad_w = product(logits, x, transpose_a=True)                    # [c,N]x[N,D]
            probe = grad_w[0, 0] if probe is None else probe + grad_w[0, 0]
        probe = probe + grad_x[0, 0]
    return main, startup, probe


def gemm_libraries() -> list[str]:
    """The float32 GEMMs this process can time: Paddle's ``matmul`` (MKL) and, where the oneDNN
    ops build, oneDNN's."""
    return ["paddle"] + (["onednn"] if onednn_ops.kernels() is not None else [])


def build_gemm_program(library: str = "paddle", size: int = GEMM_SIZE):
    """A large square float32 product [size, size] x [size, size] on persistable inputs, by
    Paddle's ``matmul`` (``library`` "paddle") or oneDNN's (``"onednn"``)."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    init = paddle.nn.initializer.Normal(0.0, 0.01)
    with paddle.static.program_guard(main, startup):
        a = paddle.static.create_parameter([size, size], "float32", name="gemm_a", default_initializer=init)
        b = paddle.static.create_parameter([size, size], "float32", name="gemm_b", default_initializer=init)
        product = onednn_ops.matmul(a, b, bf16=False) if library == "onednn" else paddle.matmul(a, b)
        probe = product[0, 0]
    return main, startup, probe


class TimedProgram:
    """A static program ``(main, startup, probe[, feed])`` initialised in ``scope`` (default: one
    of its own); each call runs ``main`` once (fed ``feed``, fetching only ``probe``) and returns
    the seconds."""

    def __init__(self, main, startup, probe, feed: dict | None = None, scope: paddle.static.Scope | None = None) -> None:
        self.main, self.probe, self.feed = main, probe, feed or {}
        self.scope = scope if scope is not None else paddle.static.Scope()
        self.exe = paddle.static.Executor(paddle.CPUPlace())
        with paddle.static.scope_guard(self.scope):
            self.exe.run(startup)

    def __call__(self) -> float:
        with paddle.static.scope_guard(self.scope):
            t0 = time.perf_counter()
            self.exe.run(self.main, feed=self.feed, fetch_list=[self.probe])
            return time.perf_counter() - t0


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
    record = {"parts_step_s": round(step_s, 4)}
    record.update({f"{name}_s": round(value, 4) for name, value in parts.items()})
    record.update({f"share_{name}": round(value / step_s, 3) for name, value in parts.items()})
    return record


# ---------------------------------------------------------------------------------------------
def paired_floor(rounds: list, floor_flop: float, gemm_size: int = GEMM_SIZE) -> dict:
    """This rank's floor figures from ``run_train``'s rounds (step, gemm, floor[, bf16 floor[,
    passes]]; NaN or a missing column: not measured), each ratio taken within a round, then the
    median over rounds (NaN where not measured)."""
    nan = float("nan")
    if not rounds:
        return dict(floor_s=nan, bf16_floor_s=nan, step_over_floor=nan, step_over_bf16_floor=nan,
                    gemm_gflops=nan, floor_over_gemm=nan, paired_step_s=nan, passes_s=nan,
                    bound_over_floor=nan, step_over_bound=nan)
    seconds = np.full((len(rounds), 5), nan)
    for row, timed in zip(seconds, rounds):
        row[:len(timed)] = timed
    step, gemm, floor, bf16, passes = seconds.T
    gemm_flop = 2.0 * gemm_size ** 3

    def median(values: np.ndarray) -> float:
        return nan if np.isnan(values).all() else float(np.median(values))

    return dict(floor_s=median(floor), bf16_floor_s=median(bf16),
                step_over_floor=median(step / floor), step_over_bf16_floor=median(step / bf16),
                gemm_gflops=median(gemm_flop / gemm) / 1e9,
                floor_over_gemm=median((floor_flop / floor) / (gemm_flop / gemm)),
                paired_step_s=median(step), passes_s=median(passes),
                bound_over_floor=median((floor + passes) / floor),
                step_over_bound=median(step / (floor + passes)))


def _rounded(value: float, digits: int) -> float | None:
    return None if np.isnan(value) else round(value, digits)


def configurations(args) -> list[dict]:
    return [dict(num_classes=c, embedding_size=d, batch_size=b, sample_ratio=r, dtype=t, center_dtype=ct)
            for c, d, b, r, t, ct in itertools.product(args.num_classes, args.embedding_size,
                                                       args.batch_size, args.sample_ratio,
                                                       args.dtype, args.center_dtype)]


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.malloc is not None:  # init_distributed applies it with the other process settings
        os.environ["PADDLE_PFC_MALLOC"] = args.malloc
    rank, world_size = paddle_pfc.init_distributed()
    settings = paddle_pfc.configure_process()  # what init_distributed applied
    gather = RankGather(world_size, 21)
    idle = idle_overhead()
    can_reset = reset_peak_rss()

    def sync() -> None:  # every rank meets here (a tiny all-gather)
        gather([0.0] * gather.length)

    for cfg in configurations(args):
        if cfg["num_classes"] < world_size:
            raise SystemExit(f"--num-classes {cfg['num_classes']} < world size {world_size}")
        train = run_train(cfg, args, rank, world_size, floors=not args.no_floor, sync=sync)
        n = cfg["batch_size"] * world_size
        kept = train["num_sample"]
        floor = paired_floor(train["rounds"], 6.0 * n * kept * cfg["embedding_size"])
        median_step = statistics.median(train["times"])
        parts = step_parts(train, gather) if args.mode == "e2e" else {}
        per_rank = gather([train["peak"], train["step_peak"], idle, floor["floor_s"],
                           median_step, train["startup_s"], train["persistent_alloc"],
                           train["startup_alloc"], train["step_alloc"], train["user_s"],
                           train["sys_s"], train["minflt"], floor["bf16_floor_s"], floor["step_over_floor"],
                           floor["gemm_gflops"], floor["floor_over_gemm"], floor["step_over_bf16_floor"],
                           floor["paired_step_s"], floor["passes_s"], floor["bound_over_floor"],
                           floor["step_over_bound"]])
        if rank != 0:
            continue
        # the slowest rank's floor and GEMM (the floors run on every rank at once)
        floor_s, bf16_floor_s = float(np.max(per_rank[:, 3])), float(np.max(per_rank[:, 12]))
        step_over_floor, gemm_gflops = float(np.min(per_rank[:, 13])), float(np.min(per_rank[:, 14]))
        floor_over_gemm, step_over_bf16 = float(np.min(per_rank[:, 15])), float(np.min(per_rank[:, 16]))
        # the passes: the slowest rank's, and its bound (the ranks' steps end together)
        passes_s, bound_over_floor = float(np.max(per_rank[:, 18])), float(np.max(per_rank[:, 19]))
        step_over_bound = float(np.min(per_rank[:, 20]))
        global_batch = cfg["batch_size"] * world_size
        record = {
            "mode": args.mode,
            "num_classes": cfg["num_classes"],
            "embedding_size": cfg["embedding_size"],
            "batch_per_rank": cfg["batch_size"],
            "world_size": world_size,
            "sample_ratio": cfg["sample_ratio"],
            "dtype": cfg["dtype"],
            "center_dtype": cfg["center_dtype"],
            "num_local": train["num_local"],
            "num_sample": kept,
            "chunks": train["chunks"],
            "steps": args.steps,
            "warmup": args.warmup,
            "median_step_s": round(median_step, 6),
            "min_step_s": round(min(train["times"]), 6),
            "samples_per_s": round(global_batch / median_step, 2),
            "paired_step_s": _rounded(float(per_rank[0, 17]), 6),
            "floor_s": _rounded(floor_s, 6),
            "step_over_floor": _rounded(step_over_floor, 3),
            "floor_gflops": _rounded(6.0 * n * kept * cfg["embedding_size"] / floor_s / 1e9, 1),
            "bf16_floor_s": _rounded(bf16_floor_s, 6),
            "step_over_bf16_floor": _rounded(step_over_bf16, 3),
            "gemm_peak_gflops": _rounded(gemm_gflops, 1),
            "floor_over_gemm_peak": _rounded(floor_over_gemm, 3),
            "passes_s": _rounded(passes_s, 6),
            "bound_over_floor": _rounded(bound_over_floor, 3),
            "step_over_bound": _rounded(step_over_bound, 3),
            "peak_rss_mib": [round(v, 1) for v in per_rank[:, 0]],
            "peak_rss_mib_max": round(float(per_rank[:, 0].max()), 1),
            "step_peak_rss_mib": [round(v, 1) for v in per_rank[:, 1]],
            "step_peak_rss_mib_max": round(float(per_rank[:, 1].max()), 1),
            "idle_rss_mib": [round(v, 1) for v in per_rank[:, 2]],
            "persistent_alloc_mib": [round(v, 1) for v in per_rank[:, 6]],
            "startup_peak_alloc_mib": [round(v, 1) for v in per_rank[:, 7]],
            "step_peak_alloc_mib": [round(v, 1) for v in per_rank[:, 8]],
            "cpu_user_s_per_step": [round(v, 4) for v in per_rank[:, 9]],
            "cpu_sys_s_per_step": [round(v, 4) for v in per_rank[:, 10]],
            "minor_faults_per_step": [round(v) if np.isfinite(v) else None for v in per_rank[:, 11]],
            "rank_median_step_s": [round(v, 6) for v in per_rank[:, 4]],
            "startup_s": round(float(per_rank[:, 5].max()), 3),
            "first_loss": train["losses"][0],
            "last_loss": train["losses"][-1],
            "peak_reset_ok": can_reset,
            "malloc": settings["malloc"],
            "mkl_debug_cpu_type": settings["mkl_debug_cpu_type"] or None,
            "native_kernels": train["native"],
            "sequential_executor": bool(paddle.get_flags(["FLAGS_new_executor_sequential_run"])
                                        ["FLAGS_new_executor_sequential_run"]),
            "serial_executor": bool(paddle.get_flags(["FLAGS_new_executor_serial_run"])
                                    ["FLAGS_new_executor_serial_run"]),  # configure_process: on CPU
            "host": platform.node(),
            "cpu": cpu_summary(),
            "cpus": os.cpu_count(),
        }
        if args.mode == "e2e":
            source, workers = train["input"] if train["input"] is not None else ("arrays", None)
            record.update(backbone=args.backbone, input_size=args.input_size,
                          amp=training_config(args, cfg["batch_size"]).train.amp, input=source,
                          input_workers=workers, images_per_s=record["samples_per_s"], **parts)
        line = json.dumps(record)
        print(line, flush=True)
        if args.json:
            with open(args.json, "a") as f:
                f.write(line + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    run(main)
