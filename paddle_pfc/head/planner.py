"""Memory planner for the Partial FC head: bytes per rank of a training step, and its inverse.

:func:`plan_spec` plans a :class:`~paddle_pfc.head.spec.HeadSpec`; :func:`plan` and
:func:`max_classes` take its facts as arguments. The model (all sizes per rank, for the largest
shard, i.e. rank 0 of the balanced split)::

    C_l = ceil(C / W)                  class centers held by the rank (num_local)
    S   = C_l                          without sampling (sample_ratio == 1)
        = min(C_l, max(1, int(r*C_l))) with sampling (num_sample, as LargeScaleClassifier)
    N   = B * W                        rows of the all-gathered global batch
    R   = block_layout(spec).rows      rows per block of kept centers (paddle_pfc.head.layout)
    c   = bytes of center_dtype        (float32 4, float16 / bfloat16 2)
    m   = bytes of momentum_dtype      (as c by default; int8: 1, and a float32 scale a row)
    f   = bytes of compute_dtype       (the operand dtype of the head's products)

    centers            = C_l * D * c                      the shard (persistable)
    momentum           = C_l * D * m   (momentum), 0 (sgd) the optimizer state (persistable)
                       + C_l * 4       (int8 momentum)    with its row scales
                       = C_l * (2 D + 1) * 4  (adamw)     two float32 moments and a step count a row
    kept_working_set   = S * D * (f + h)                  the blocks' gradients (operand dtype),
                         + k_RD * R * D * 4             alive until the update, + the blocks
                                                          themselves (h = 4) when float32 blocks
                                                          are held to the backward and updated in
                                                          place (else h = 0: the blocks are
                                                          gathered again), + temporaries of blocks
                                                          in flight. Where the native products read
                                                          the kept rows by index (float32 or
                                                          bfloat16 centers and operands, sampled):
                                                          h = 0 and no [R, D] temporary (the
                                                          blocks' gradient handles are never
                                                          written, so never resident)
    logits_buffers     = N * S * 4 + k_NR * N * R * 4     float32 softmax blocks, held for the
                                                          backward, + per-block temporaries
    gathered_features  = k_ND * N * D * 4                 gathered features and their grads
    sampling           = C_l + S * 8  (native, sampled)   the native sampler's flags and the kept
                       = k_int * C_l * 8 (Paddle's ops)   indices; Paddle's ops: int64 masks /
                                                          permutation of the shard
    program_analysis   = k_exec * ceil(S / R)^2           Paddle's executor: its dependency
                                                          analysis grows with the square of the
                                                          number of ops (so of blocks)
    heap_retention     = k_heap * S * D * g / 4           freed block buffers glibc keeps in the
                                          (speed malloc)  heap, fragmented (see below); g = f
                       = 0                (memory malloc) where the rows are read by index in place (no
                                                          bfloat16 product gathering them), else 4
    process_overhead   = PROCESS_OVERHEAD                 an idle rank (paddle + communicator)
    total              = sum of the above

``native`` (default True) plans the CPU head on the native kernels (``PADDLE_PFC_NATIVE``, the
default where they build); False plans Paddle's own kernels.

The persistable terms are exact; so are the held buffers (see
``paddle_pfc.head.margin_softmax.margin_softmax_loss`` and ``paddle_pfc.head.sparse_update``). The counts
``k_RD`` / ``k_NR`` / ``k_ND`` / ``k_int`` / ``k_exec`` / ``k_heap`` were fitted to the allocator's
peak and the peak RSS measured with ``tools/benchmark.py`` (docs/benchmarks.md, *Head memory: plan
against measured peak RSS*). ``malloc="memory"`` (``PADDLE_PFC_MALLOC=memory``) returns freed
buffers, so the RSS follows the live tensors. ``malloc="speed"`` (the process default) keeps freed
buffers under 32 MiB in the heap, whose high-water mark stays resident: the block temporaries of a
step, interleaved with block gradients that outlive them, fragment it by ``k_heap`` bytes per kept
element (a rough fit: 5 to 8 bytes measured with blocks of 4096 to 6250 rows, more with longer
blocks), half that where bfloat16 rows are read by index in place (1.8 to 2.2 bytes: no float32 block
temporaries, only the blocks' bfloat16 gradients) but not where bfloat16 products gather each block
for themselves (CPUs with native bfloat16 products: 4.3 and 8.3 bytes measured at 1M and 4M classes);
glibc's own thresholds (``default``) lie in between.
"""
from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field

from paddle_pfc.head.dtypes import DTYPE_BYTES, MOMENTUM_DTYPES
from paddle_pfc.head.layout import INDEXED_DTYPES, block_layout
from paddle_pfc.head.spec import (
    MALLOC_MODES,
    OPTIMIZER_STATES,
    HeadSpec,
    accumulation_bytes,
    centers_bytes,
    optimizer_state_bytes,
    planned_malloc,
)
from paddle_pfc.utils.numbers import is_int

__all__ = ["MemoryPlan", "plan", "plan_spec", "head_spec", "max_classes", "max_classes_spec", "parse_bytes",
           "DTYPE_BYTES", "MOMENTUM_DTYPES", "OPTIMIZER_STATES", "INDEXED_DTYPES", "PROCESS_OVERHEAD", "MALLOC_MODES",
           "planned_malloc"]

#: Measured VmRSS (bytes) of an idle rank: paddle imported, communicator up, one tiny program run.
PROCESS_OVERHEAD = 320 * 2**20  # 318.9-320.2 MiB measured, 1 and 2 ranks

# Transient tensor counts at the peak of a step (see the module docstring).
K_RD = 6        # [R, D] float32 temporaries of the blocks in flight
K_NR = 2        # [N, R] float32 temporaries of the blocks in flight
K_ND = 6        # [N, D] buffers (gathered features, gradients)
K_INT = 6       # int64 [C_l] buffers of the sampler on Paddle's ops
K_EXEC = 0.14 * 2**20  # bytes x blocks^2: the executor's dependency analysis of the head's ops
K_HEAP = 6      # bytes per kept float32-gradient element that glibc's heap keeps beyond the live tensors (speed malloc)

_GIB = 2**30


@dataclass(frozen=True)
class MemoryPlan:
    """Planned memory of one rank, in bytes. ``total`` is the sum of the component fields."""

    num_classes: int
    embedding_size: int
    world_size: int
    sample_ratio: float
    batch_size: int
    center_dtype: str
    compute_dtype: str
    optimizer: str
    num_local: int
    num_sample: int
    global_batch: int
    centers: int
    momentum: int
    kept_working_set: int
    logits_buffers: int
    gathered_features: int
    sampling: int
    program_analysis: int
    heap_retention: int
    process_overhead: int
    malloc: str = "memory"
    momentum_dtype: str = ""  # "": center_dtype
    accumulation: int = 0  # the centers' gradient accumulation buffer (train.accumulate_steps > 1)
    total: int = field(init=False)

    COMPONENTS = ("centers", "momentum", "accumulation", "kept_working_set", "logits_buffers",
                  "gathered_features", "sampling", "program_analysis", "heap_retention", "process_overhead")

    def __post_init__(self) -> None:
        object.__setattr__(self, "total", sum(getattr(self, c) for c in self.COMPONENTS))
        if not self.momentum_dtype:
            object.__setattr__(self, "momentum_dtype", self.center_dtype)

    @property
    def sampled(self) -> bool:
        return self.num_sample < self.num_local

    def as_dict(self) -> dict:
        out = {k: getattr(self, k) for k in (
            "num_classes", "embedding_size", "world_size", "sample_ratio", "batch_size",
            "center_dtype", "momentum_dtype", "compute_dtype", "optimizer", "num_local", "num_sample",
            "global_batch", "malloc")}
        out.update({c: getattr(self, c) for c in self.COMPONENTS})
        out["total"] = self.total
        return out

    def table(self) -> str:
        """A readable table of the components in GiB."""
        head = (f"{self.num_classes:,} classes, D={self.embedding_size}, W={self.world_size}, "
                f"ratio={self.sample_ratio:g}, batch/rank={self.batch_size}, centers "
                f"{self.center_dtype}, compute {self.compute_dtype}, {self.optimizer}"
                f"{'' if self.momentum_dtype == self.center_dtype else f' ({self.momentum_dtype})'}, "
                f"{self.malloc} malloc\n"
                f"per rank: num_local={self.num_local:,} kept S={self.num_sample:,} "
                f"global batch N={self.global_batch}")
        rows = [(c, getattr(self, c)) for c in self.COMPONENTS] + [("total", self.total)]
        width = max(len(c) for c, _ in rows)
        lines = [head, "-" * (width + 16)]
        for name, value in rows:
            if name == "total":
                lines.append("-" * (width + 16))
            lines.append(f"{name:<{width}}  {value / _GIB:10.3f} GiB")
        lines.append(f"{'all ranks':<{width}}  {self.total * self.world_size / _GIB:10.3f} GiB")
        return "\n".join(lines)


def head_spec(num_classes: int, embedding_size: int, world_size: int, sample_ratio: float = 1.0,
              batch_size: int = 128, center_dtype: str = "float32", compute_dtype: str = "float32",
              optimizer: str = "momentum", native: bool = True, malloc: str = "memory",
              momentum_dtype: str | None = None, bfloat16_products: bool = False,
              accumulate_steps: int = 1) -> HeadSpec:
    """The :class:`HeadSpec` that :func:`plan`'s arguments describe (rank 0, the largest shard);
    ValueError naming a bad argument."""
    if batch_size is None:
        raise ValueError("batch_size must be an int >= 1 (per rank), got None")
    return HeadSpec(num_classes=num_classes, embedding_size=embedding_size, world_size=world_size,
                    sample_ratio=sample_ratio, batch_size=batch_size, center_dtype=center_dtype,
                    compute_dtype=compute_dtype, momentum_dtype=momentum_dtype, optimizer=optimizer,
                    native=native, bfloat16_products=bfloat16_products, malloc=malloc,
                    accumulate_steps=accumulate_steps)


def plan(num_classes: int, embedding_size: int, world_size: int, sample_ratio: float = 1.0,
         batch_size: int = 128, center_dtype: str = "float32", compute_dtype: str = "float32",
         optimizer: str = "momentum", native: bool = True, malloc: str = "memory",
         momentum_dtype: str | None = None, bfloat16_products: bool = False,
         accumulate_steps: int = 1) -> MemoryPlan:
    """Planned peak memory per rank of a head training step (see the module docstring):
    :func:`plan_spec` of the :class:`HeadSpec` of these arguments.

    ``batch_size`` is per rank. ``center_dtype`` is the storage dtype of the centers and their
    momentum, ``compute_dtype`` the operand dtype of the head's products (``LargeScaleClassifier``
    ``dtype``). ``native``: the CPU head on the native kernels (else Paddle's own kernels).
    ``malloc``: the process's malloc mode (``PADDLE_PFC_MALLOC``), ``memory`` or ``speed``.
    ``momentum_dtype``: the momentum's storage dtype (default ``center_dtype``; ``int8``: with a
    float32 scale a row). ``bfloat16_products``: the CPU multiplies bfloat16 natively (AVX512_BF16 /
    AMX): the tensors are the same, but each bfloat16 product gathers its block for itself, and
    with ``speed`` malloc those transient copies leave float32's heap retention.
    ``accumulate_steps``: micro-batches a step (the centers' gradient accumulation buffer,
    :func:`~paddle_pfc.head.spec.accumulation_bytes`). Raises ValueError naming a bad argument.
    """
    return plan_spec(head_spec(num_classes, embedding_size, world_size, sample_ratio, batch_size, center_dtype,
                               compute_dtype, optimizer, native, malloc, momentum_dtype, bfloat16_products,
                               accumulate_steps))


def plan_spec(spec: HeadSpec) -> MemoryPlan:
    """Planned peak memory of a training step of ``spec``'s largest shard (rank 0), in the blocks of
    :func:`~paddle_pfc.head.layout.block_layout`. ``spec.batch_size`` must be given."""
    if spec.batch_size is None:
        raise ValueError("batch_size must be an int >= 1 (per rank), got None")
    spec = dataclasses.replace(spec, rank=0) if spec.rank else spec
    layout = block_layout(spec)
    n, d, s = spec.global_batch, spec.embedding_size, layout.num_sample
    f = DTYPE_BYTES[spec.compute_dtype]
    rows = layout.rows
    if layout.reads_rows_by_index:  # rows read where they lie: no block copy is written
        kept_working_set = s * d * f
    else:
        kept_working_set = s * d * (f + (4 if layout.updates_in_place else 0)) + K_RD * rows * d * 4
    if not layout.sampled:
        sampling = 0
    else:
        sampling = layout.num_local + s * 8 if spec.native else K_INT * layout.num_local * 8
    heap_bytes = f if layout.reads_rows_by_index and not layout.products_round else 4
    return MemoryPlan(
        num_classes=spec.num_classes, embedding_size=d, world_size=spec.world_size,
        sample_ratio=spec.sample_ratio, batch_size=spec.batch_size, center_dtype=spec.center_dtype,
        compute_dtype=spec.compute_dtype, optimizer=spec.optimizer, num_local=layout.num_local,
        num_sample=s, global_batch=n, centers=centers_bytes(spec), momentum=optimizer_state_bytes(spec),
        kept_working_set=kept_working_set,
        logits_buffers=n * s * 4 + K_NR * n * rows * 4,
        gathered_features=K_ND * n * d * 4,
        sampling=sampling,
        program_analysis=int(K_EXEC * layout.num_blocks * layout.num_blocks),
        heap_retention=K_HEAP * s * d * heap_bytes // 4 if spec.malloc == "speed" else 0,
        process_overhead=PROCESS_OVERHEAD, malloc=spec.malloc, momentum_dtype=spec.momentum_dtype,
        accumulation=accumulation_bytes(spec, spec.accumulate_steps))


def max_classes(memory_per_rank_bytes: int, embedding_size: int, world_size: int,
                sample_ratio: float = 1.0, batch_size: int = 128, center_dtype: str = "float32",
                compute_dtype: str = "float32", optimizer: str = "momentum", native: bool = True,
                malloc: str = "memory", momentum_dtype: str | None = None, bfloat16_products: bool = False,
                accumulate_steps: int = 1) -> int:
    """The largest ``num_classes`` whose :func:`plan` total fits in ``memory_per_rank_bytes``
    (:func:`max_classes_spec` of these arguments). Raises ValueError naming a bad argument."""
    _check_memory(memory_per_rank_bytes)
    spec = head_spec(world_size if is_int(world_size) else 1, embedding_size, world_size, sample_ratio,
                     batch_size, center_dtype, compute_dtype, optimizer, native, malloc, momentum_dtype,
                     bfloat16_products, accumulate_steps)
    return max_classes_spec(memory_per_rank_bytes, spec)


def _check_memory(memory_per_rank_bytes) -> None:
    if isinstance(memory_per_rank_bytes, bool) or not isinstance(memory_per_rank_bytes, (int, float)) \
            or not math.isfinite(memory_per_rank_bytes) or memory_per_rank_bytes <= 0:
        raise ValueError(f"memory_per_rank_bytes must be a positive number, got {memory_per_rank_bytes!r}")


def max_classes_spec(memory_per_rank_bytes: int, spec: HeadSpec) -> int:
    """The largest ``num_classes`` whose :func:`plan_spec` total, ``spec`` otherwise, fits in
    ``memory_per_rank_bytes``.

    Inverse of :func:`plan_spec` (binary search; the total grows with num_classes): for the result
    ``m``, ``plan(m, ...).total <= memory < plan(m + 1, ...).total``. Returns 0 when not even
    ``world_size`` classes (one per rank) fit. Raises ValueError naming a bad argument.
    """
    _check_memory(memory_per_rank_bytes)

    def total(c: int) -> int:
        return plan_spec(dataclasses.replace(spec, num_classes=c)).total

    lo = spec.world_size
    if total(lo) > memory_per_rank_bytes:
        return 0
    hi = lo * 2
    while total(hi) <= memory_per_rank_bytes:
        lo, hi = hi, hi * 2
    while hi - lo > 1:  # total(lo) fits, total(hi) does not
        mid = (lo + hi) // 2
        if total(mid) <= memory_per_rank_bytes:
            lo = mid
        else:
            hi = mid
    return lo


_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9,
          "gb": 10**9, "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30,
          "tib": 2**40}


def parse_bytes(text: str | int | float) -> int:
    """``"11GiB"`` -> bytes. Units: B, KB/MB/GB/TB (powers of 10), KiB/MiB/GiB/TiB; K/M/G/T as
    the decimal ones. Raises ValueError for anything else."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        if not math.isfinite(text) or text <= 0:
            raise ValueError(f"memory must be positive, got {text!r}")
        return int(text)
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*", str(text))
    if not match or match.group(2).lower() not in _UNITS:
        raise ValueError(f"memory must look like '11GiB', '512MiB' or a byte count, got {text!r}")
    value = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if value <= 0:
        raise ValueError(f"memory must be positive, got {text!r}")
    return value
