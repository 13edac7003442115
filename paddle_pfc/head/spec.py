"""``HeadSpec``: the facts of one Partial FC head, validated once, without Paddle.

The classifier (:class:`~paddle_pfc.head.classifier.LargeScaleClassifier`), the memory planner
(:mod:`paddle_pfc.head.planner`), the training pre-flight (:mod:`paddle_pfc.engine.memory`) and
the benchmarks describe a head by one ``HeadSpec``; :func:`paddle_pfc.head.layout.block_layout`
derives its blocks of kept centers from it, and :func:`optimizer_states` its per-row optimizer
state.
"""
from __future__ import annotations

from dataclasses import dataclass

from paddle_pfc.head import geometry
from paddle_pfc.head.dtypes import CPU_REFUSALS, DTYPE_BYTES, MOMENTUM_DTYPES, momentum_bytes
from paddle_pfc.utils.numbers import is_int

__all__ = ["HeadSpec", "OPTIMIZER_STATES", "MALLOC_MODES", "KERNELS", "optimizer_states", "centers_bytes",
           "optimizer_state_bytes", "optimizer_state_row_bytes", "planned_malloc", "accumulation_rows",
           "accumulation_bytes"]

#: Per-row optimizer states of the centers, by optimizer kind: how many [rows, D] tables it keeps
#: (AdamW: two float32 moments, and a float32 step count a row beside them).
OPTIMIZER_STATES = {"momentum": 1, "sgd": 0, "adamw": 2}

#: Bytes of AdamW's step count of a row (:mod:`paddle_pfc.head.sparse_adamw`).
ADAMW_STEP_BYTES = 4

#: The malloc modes planned (``paddle_pfc.engine.runtime``): ``memory`` returns freed buffers,
#: ``speed`` keeps those under 32 MiB in the heap.
MALLOC_MODES = ("memory", "speed")

#: The backends a head runs on (:func:`paddle_pfc.kernels.choose_backend`, once resolved).
KERNELS = ("composite", "fused")

#: The dtypes of centers and products, in the order error messages list them.
DTYPES = tuple(DTYPE_BYTES)


def planned_malloc(setting: str | None) -> str:
    """The mode to plan for a ``PADDLE_PFC_MALLOC`` setting (None or empty: unset): ``memory`` for
    ``memory``, else ``speed`` (the process default; glibc's own thresholds keep less than it)."""
    return "memory" if setting == "memory" else "speed"


@dataclass(frozen=True)
class HeadSpec:
    """One head: its classes, shards, batch, dtypes, optimizer and the kernels it runs on.

    ``rank``: the shard described (the planner plans rank 0, the largest). ``batch_size``: rows a
    rank feeds a step, None when dynamic (the blocks are then sized by ``embedding_size`` alone).
    ``center_dtype``: storage dtype of the centers; ``compute_dtype``: operand dtype of the head's
    products (``LargeScaleClassifier``'s ``dtype``); ``momentum_dtype``: storage dtype of the
    optimizer state, None resolving to ``center_dtype`` (int8: codes and a float32 scale a row).
    ``optimizer``: a key of :data:`OPTIMIZER_STATES`. ``kernels``: ``composite`` or ``fused``;
    ``native``: the composite CPU head on the native kernels; ``bfloat16_products``: this CPU
    multiplies bfloat16 natively (oneDNN, AVX512_BF16 / AMX; read only for a bfloat16
    ``compute_dtype``); ``indexed_products``: the native float32 products read kept rows where they
    lie (Paddle's MKL found). ``malloc``: the process's malloc mode (:data:`MALLOC_MODES`).
    ``chunk_rows``: rows per block (None: the head's rule).
    ``gpu``: the program runs on a GPU (None: unknown, as when planning: no device check).
    ``accumulate_steps``: micro-batches a step (gradient accumulation; the planner counts its
    buffer, :func:`accumulation_bytes`).

    Raises ValueError naming the first bad field (the messages ``LargeScaleClassifier`` and
    ``plan`` give).
    """

    num_classes: int
    embedding_size: int = 512
    world_size: int = 1
    rank: int = 0
    sample_ratio: float = 1.0
    batch_size: int | None = None
    center_dtype: str = "float32"
    compute_dtype: str = "float32"
    momentum_dtype: str | None = None
    optimizer: str = "momentum"
    kernels: str = "composite"
    native: bool = True
    bfloat16_products: bool = False
    indexed_products: bool = True
    malloc: str = "memory"
    chunk_rows: int | None = None
    seed: int = 0
    gpu: bool | None = None
    accumulate_steps: int = 1

    def __post_init__(self) -> None:
        _check_sizes(self)
        _check_dtypes(self)
        _check_choices(self)
        resolved = dict(num_classes=int(self.num_classes), embedding_size=int(self.embedding_size),
                        world_size=int(self.world_size), rank=int(self.rank), seed=int(self.seed),
                        sample_ratio=float(self.sample_ratio),
                        momentum_dtype=self.momentum_dtype or self.center_dtype,
                        batch_size=None if self.batch_size is None else int(self.batch_size))
        for name, value in resolved.items():
            object.__setattr__(self, name, value)

    @property
    def global_batch(self) -> int | None:
        """Rows of the all-gathered batch (``batch_size * world_size``), None when dynamic."""
        return None if self.batch_size is None else self.batch_size * self.world_size

    @property
    def class_start(self) -> int:
        """First class of this rank's shard."""
        return geometry.class_split(self.num_classes, self.world_size, self.rank)[0]

    @property
    def num_local(self) -> int:
        """Classes of this rank's shard."""
        return geometry.class_split(self.num_classes, self.world_size, self.rank)[1]

    @property
    def num_sample(self) -> int:
        """Centers this rank's shard keeps a step (:func:`paddle_pfc.head.geometry.num_sample`)."""
        return geometry.num_sample(self.num_local, self.sample_ratio)


def optimizer_states(spec: HeadSpec) -> tuple[str, ...]:
    """The storage dtypes of the optimizer's per-row state tables of the centers (one a table;
    AdamW's moments are float32 whatever the momentum dtype)."""
    dtype = "float32" if spec.optimizer == "adamw" else spec.momentum_dtype
    return (dtype,) * OPTIMIZER_STATES[spec.optimizer]


def optimizer_state_row_bytes(optimizer: str, width: int, momentum_dtype: str) -> int:
    """Bytes of the optimizer state of one center row of ``width`` values: ``momentum`` one row in
    ``momentum_dtype`` (int8: with its float32 scale), ``sgd`` none, ``adamw`` two float32 moments
    and a float32 step count."""
    if optimizer == "adamw":
        return OPTIMIZER_STATES["adamw"] * width * 4 + ADAMW_STEP_BYTES
    return OPTIMIZER_STATES[optimizer] * momentum_bytes(1, width, momentum_dtype)


def accumulation_rows(spec: HeadSpec, accumulate_steps: int) -> int:
    """Rows of the shard's gradient accumulation buffer under ``accumulate_steps`` micro-batches a
    step (:mod:`paddle_pfc.head.accumulation`): the most centers a step keeps — every row without
    sampling, else ``num_sample`` or the step's positives when more (at most ``accumulate_steps *
    batch_size * world_size`` labels; every row when the batch is dynamic)."""
    num_local, num_sample = spec.num_local, spec.num_sample
    if num_sample >= num_local or spec.global_batch is None:
        return num_local
    return min(num_local, max(num_sample, accumulate_steps * spec.global_batch))


def accumulation_bytes(spec: HeadSpec, accumulate_steps: int) -> int:
    """Bytes of the shard's float32 gradient accumulation buffer (:func:`accumulation_rows` rows;
    none for one micro-batch a step)."""
    return 0 if accumulate_steps == 1 else accumulation_rows(spec, accumulate_steps) * spec.embedding_size * 4


def centers_bytes(spec: HeadSpec) -> int:
    """Bytes of this rank's shard of centers."""
    return spec.num_local * spec.embedding_size * DTYPE_BYTES[spec.center_dtype]


def optimizer_state_bytes(spec: HeadSpec) -> int:
    """Bytes of the optimizer state of this rank's shard (:func:`optimizer_state_row_bytes` a row)."""
    return spec.num_local * optimizer_state_row_bytes(spec.optimizer, spec.embedding_size, spec.momentum_dtype)


def _check_sizes(spec: HeadSpec) -> None:
    """Raise ValueError naming the first bad number."""
    if not is_int(spec.world_size) or spec.world_size < 1:
        raise ValueError(f"world_size must be an int >= 1, got {spec.world_size!r}")
    if not is_int(spec.rank) or not 0 <= spec.rank < spec.world_size:
        raise ValueError(f"rank must be an int in [0, world_size={spec.world_size}), got {spec.rank!r}")
    if not is_int(spec.num_classes) or spec.num_classes < 1:
        raise ValueError(f"num_classes must be an int >= 1, got {spec.num_classes!r}")
    if spec.num_classes < spec.world_size:
        raise ValueError(f"num_classes ({spec.num_classes}) must be >= world_size ({spec.world_size}): "
                         "every rank needs at least one class")
    geometry.check_sample_ratio(spec.sample_ratio)
    if not is_int(spec.embedding_size) or spec.embedding_size < 1:
        raise ValueError(f"embedding_size must be an int >= 1, got {spec.embedding_size!r}")
    if not is_int(spec.seed) or spec.seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {spec.seed!r}")
    if spec.batch_size is not None and (not is_int(spec.batch_size) or spec.batch_size < 1):
        raise ValueError(f"batch_size must be an int >= 1 (per rank), got {spec.batch_size!r}")
    if not is_int(spec.accumulate_steps) or spec.accumulate_steps < 1:
        raise ValueError(f"accumulate_steps must be an int >= 1, got {spec.accumulate_steps!r}")
    if spec.chunk_rows is not None and (not is_int(spec.chunk_rows) or spec.chunk_rows < 1):
        raise ValueError(f"chunk_rows must be an int >= 1 or None, got {spec.chunk_rows!r}")


def _check_dtypes(spec: HeadSpec) -> None:
    """Raise ValueError naming a dtype that is unknown, or refused on the spec's device."""
    for name, value, allowed in (("compute_dtype", spec.compute_dtype, DTYPES),
                                 ("center_dtype", spec.center_dtype, DTYPES),
                                 ("momentum_dtype", spec.momentum_dtype or spec.center_dtype, MOMENTUM_DTYPES)):
        if value not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
        if value in CPU_REFUSALS and spec.gpu is False:
            raise ValueError(f"{name}={value!r}: {CPU_REFUSALS[value]}")
    if spec.momentum_dtype == "int8" and spec.gpu:
        raise ValueError("momentum_dtype='int8': the int8 momentum of class centers is implemented for CPU "
                         "programs only; use a float momentum_dtype on GPU")


def _check_choices(spec: HeadSpec) -> None:
    """Raise ValueError naming an unknown optimizer, malloc mode or backend."""
    for name, value, allowed in (("optimizer", spec.optimizer, tuple(OPTIMIZER_STATES)),
                                 ("malloc", spec.malloc, MALLOC_MODES), ("kernels", spec.kernels, KERNELS)):
        if value not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
