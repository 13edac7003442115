"""``LargeScaleClassifier``: the Partial FC head builder for a Paddle 3 static (PIR) program."""
from __future__ import annotations

import dataclasses
from collections import OrderedDict

import paddle

from paddle_pfc.head import checks, registry, sampling
from paddle_pfc.head.arguments import check_static_mode, check_tensors, static_batch
from paddle_pfc.head.blocks import Block
from paddle_pfc.head.dtypes import DTYPE_BYTES
from paddle_pfc.head.layout import block_layout
from paddle_pfc.head.margin import Margin, margin_of
from paddle_pfc.head.margin_softmax import margin_softmax_loss
from paddle_pfc.head.margin_softmax_fused import margin_softmax_loss_fused
from paddle_pfc.head.sparse_update import create_adamw_states, create_velocity, create_velocity_scale
from paddle_pfc.head.spec import HeadSpec, centers_bytes, optimizer_state_bytes
from paddle_pfc.kernels import choose_backend
from paddle_pfc.kernels.collectives import CollectiveChain
from paddle_pfc.utils import paddle_compat

__all__ = ["LargeScaleClassifier", "CENTER_INIT_STD", "DTYPES"]

CENTER_INIT_STD = 0.01  # arcface_torch's normal(0, 0.01) initialisation of class centers
DTYPES = tuple(DTYPE_BYTES)  # float32, bfloat16, float16 (GPU only)


def _feed_name(value) -> str | None:
    """Name of ``value`` if it is a ``paddle.static.data`` input (used to name bad labels)."""
    op = value.get_defining_op()
    return op.attrs().get("name") if op is not None and op.name() == "pd_op.data" else None


def _batch_feed_names(value) -> list[str]:
    """Names of the ``paddle.static.data`` inputs with a dynamic first dimension that ``value`` is
    computed from (its batch's sources, e.g. the images a backbone embeds): what names a feature
    batch that does not match its labels."""
    names, seen, stack = [], set(), [value]
    while stack:
        op = stack.pop().get_defining_op()
        if op is None or op in seen:  # PIR operations hash and compare by the operation, not the wrapper
            continue
        seen.add(op)
        if op.name() == "pd_op.data":
            shape = op.result(0).shape
            if shape and shape[0] in (None, -1):
                names.append(op.attrs()["name"])
            continue
        stack.extend(op.operand_source(i) for i in range(op.num_operands()))
    return sorted(names)


def _dtype_name(value):
    """``"float32"`` etc. for a dtype given as a string or as a Paddle dtype (others unchanged)."""
    return {paddle.float32: "float32", paddle.bfloat16: "bfloat16", paddle.float16: "float16"}.get(value, value) \
        if isinstance(value, paddle.dtype) else value


class LargeScaleClassifier:
    """Partial FC: margin softmax over class centers sharded across ranks, with sampling.

    Builds, in the current default main program (static/PIR mode):

    * ``weight``: this rank's shard of class centers, a ``center_dtype`` parameter ``[num_local,
      embedding_size]`` flagged ``is_distributed``, classes ``[class_start, class_start+num_local)``
      of the balanced split (:func:`class_split`). Found in the scope by ``weight.name``.
    * the all-gather of ``feature`` [B, D] (with gradient) and ``label`` [B] / [B, 1] (int) of every
      rank, a run-time check that every gathered label lies in ``[0, num_classes)``,
    * with ``sample_ratio < 1``: the kept centers of this shard (all positives + random negatives up
      to ``num_sample = max(1, int(sample_ratio * num_local))``),
    * the margin softmax loss of the global batch (``paddle_pfc.head.margin_softmax``), in blocks
      of kept centers (``blocks``: :class:`~paddle_pfc.head.blocks.Block` s).

    ``dtype``: operand dtype of the head's products (float32, bfloat16, or float16 on GPU); the
    logits, softmax, margin and loss are float32. ``center_dtype``: storage dtype of ``weight`` and
    (by default) its momentum (float32, bfloat16, or float16 on GPU); the update of the kept rows is
    float32 arithmetic on widened copies, rounded once when written back. ``momentum_dtype``: storage
    dtype of the momentum (default ``center_dtype``), or ``int8`` (CPU): int8 codes with one float32
    scale a row (``velocity_scale``, [num_local, 1]; :mod:`paddle_pfc.head.sparse_update`).
    ``chunk_rows``: rows per block of kept centers on the composite backend (default:
    :func:`paddle_pfc.head.geometry.block_rows`); the fused backend uses one block. ``spec``: the
    head's :class:`~paddle_pfc.head.spec.HeadSpec` (``dtype`` is its ``compute_dtype``; its backend
    fields those of the backend taken), ``layout``: its
    :func:`~paddle_pfc.head.layout.block_layout`, which ``blocks`` follow.
    ``kernels``: the backend (:mod:`paddle_pfc.kernels`): ``"auto"`` (fused on GPU, composite on CPU),
    ``"fused"`` (Paddle's fused ``class_center_sample`` / ``margin_cross_entropy``; emulated on a
    machine without a GPU), ``"composite"`` (the block-wise head); ``None``: ``$PADDLE_PFC_KERNELS``,
    default auto. Attributes: ``backend`` (:class:`paddle_pfc.kernels.Backend`, chosen once),
    ``kernels`` (``"fused"`` or ``"composite"``, the backend taken), ``emulated`` (True when the fused
    kernels are the CPU emulations), ``native`` (True when the composite CPU head runs its
    per-block work in the native kernels of :mod:`paddle_pfc.kernels.native_ops`,
    ``PADDLE_PFC_NATIVE``; False for Paddle's own kernels, on the fused backend and on GPU),
    ``margin`` (:class:`~paddle_pfc.head.margin.Margin`: ``margin=``, or the
    :class:`~paddle_pfc.head.margin.CombinedMargin` of ``margin1``..``margin3`` / ``scale``, default
    ArcFace 1, 0.5, 0, 64; not both), ``margin_states`` (its persistable state, saved with the
    program's other non-sharded persistables). ``init_centers``: the startup program
    draws the centers from normal(0, :data:`CENTER_INIT_STD`) (default); False fills them with
    zeros instead (no random draw), for a program whose every center is written before its first
    step (a checkpoint loaded into it); the attribute of that name says which. ``sample_label``
    (int [M]): the labels the kept centers are drawn from instead of ``label``
    (every rank's, gathered), each label of ``label`` among them: gradient accumulation's step
    labels (:mod:`paddle_pfc.head.accumulation`).

    ``output_dict['loss']``: float32 scalar, the mean loss over the global batch, equal on every
    rank. ``output_dict['sampled_class_index']`` (``sample_ratio < 1``): int64 [S], this rank's kept
    centers as indices local to its shard — ascending on the composite backend; on the fused backend in
    the kernel's order (this shard's positives ascending, then the random negatives). Train with
    :func:`paddle_pfc.minimize`, which updates the kept rows of ``weight`` sparsely; Paddle's own
    ``optimizer.minimize`` does not.
    """

    def __init__(self, feature, label, rank: int, world_size: int, num_classes: int,
                 margin1: float | None = None, margin2: float | None = None, margin3: float | None = None,
                 scale: float | None = None, sample_ratio: float = 1.0, embedding_size: int = 512,
                 name: str | None = None, seed: int = 0, dtype: str = "float32",
                 center_dtype: str = "float32", chunk_rows: int | None = None,
                 kernels: str | None = None, momentum_dtype: str | None = None,
                 init_centers: bool = True, margin: Margin | None = None, sample_label=None) -> None:
        check_static_mode()
        gpu = paddle_compat.on_gpu()
        spec = HeadSpec(num_classes=num_classes, embedding_size=embedding_size, world_size=world_size, rank=rank,
                        sample_ratio=sample_ratio, batch_size=static_batch(feature, label),
                        center_dtype=_dtype_name(center_dtype), compute_dtype=_dtype_name(dtype),
                        momentum_dtype=_dtype_name(momentum_dtype), chunk_rows=chunk_rows, seed=seed, gpu=gpu)
        self.margin = margin_of(margin, margin1, margin2, margin3, scale)
        check_tensors(feature, label, spec.embedding_size)
        self.backend = choose_backend(kernels, gpu, self.margin.runs_fused)
        blocks = self.backend.blocks
        self.spec = dataclasses.replace(spec, kernels=self.backend.kind, native=self.backend.native,
                                        bfloat16_products=blocks.products_round(spec.compute_dtype),
                                        indexed_products=blocks.reads_rows_by_index("float32", "float32"))
        self.layout = block_layout(self.spec)
        self.dtype, self.center_dtype, self.chunk_rows = spec.compute_dtype, spec.center_dtype, chunk_rows
        self.momentum_dtype = spec.momentum_dtype
        self.rank, self.world_size, self.num_classes = spec.rank, spec.world_size, spec.num_classes
        self.sample_ratio, self.embedding_size = spec.sample_ratio, spec.embedding_size
        self.class_start, self.num_local = self.layout.class_start, self.layout.num_local
        self.num_sample, self.sampled = self.layout.num_sample, self.layout.sampled
        self.name = name or f"dist@fc@rank@{spec.rank:05d}"
        if any(head.name == self.name for head in registry.classifiers_of(paddle.static.default_main_program())):
            raise ValueError(f"this program already holds a LargeScaleClassifier named {self.name!r}: give each "
                             "head its own name= (heads of one name would share one center matrix)")
        self.input_dict = OrderedDict(feature=feature, label=label)
        self.label_feed_name = _feed_name(label)
        self.feature_feed_names = _batch_feed_names(feature)
        self.output_dict = OrderedDict()
        self.chain = CollectiveChain(spec.world_size)
        self.velocity = self.velocity_scale = self.adamw_states = None
        self.init_centers = bool(init_centers)
        self.sample_label = self._check_sample_label(sample_label)

        initializer = (paddle.nn.initializer.normal.NormalInitializer(
            0.0, CENTER_INIT_STD, seed=(spec.seed * 1_000_003 + spec.rank + 1) % (2**31 - 1)) if self.init_centers
            else paddle.nn.initializer.Constant(0.0))
        self.weight = paddle.static.create_parameter(
            shape=[self.num_local, self.embedding_size], dtype=self.center_dtype, name=self.name,
            default_initializer=initializer)
        self.weight.is_distributed = True
        self.weight.stop_gradient = True  # only the kept blocks take gradient (a sparse update)

        self._build(feature, label)
        registry.add_classifier(paddle.static.default_main_program(), self)

    @property
    def kernels(self) -> str:
        """The backend taken: ``"fused"`` or ``"composite"``."""
        return self.backend.kind

    @property
    def fused(self) -> bool:
        return self.backend.kind == "fused"

    @property
    def emulated(self) -> bool:
        """True when the fused kernels are the CPU emulations."""
        return self.backend.emulated

    @property
    def native(self) -> bool:
        """True when the block operations are the native CPU kernels."""
        return self.backend.native

    # ------------------------------------------------------------------------------------------
    def _build(self, feature, label) -> None:
        label = paddle.reshape(paddle.cast(label, "int64"), [-1])
        label.stop_gradient = True
        if feature.shape[0] in (None, -1) or label.shape[0] in (None, -1):
            feature, label = checks.same_batch_everywhere(feature, label, self.chain)
        total_label = checks.labels_in_range(self.chain.all_gather(label), self.num_classes, self.chain)
        local = sampling.local_labels(total_label, self.class_start, self.num_local)

        global_target = total_label
        if not self.sampled:
            self.sampled_index = None
            local_target = local
        else:
            drawn_from = self._sampling_labels(total_label)
            if self.fused:
                sample = sampling.sample_shard_fused(drawn_from, self.class_start, self.num_local, self.num_sample,
                                                     self.rank, self.world_size, self.backend.fused, self.chain,
                                                     target_label=total_label)
                global_target = sample.global_target
            else:
                drawn_local = local if self.sample_label is None else \
                    sampling.local_labels(drawn_from, self.class_start, self.num_local)
                sample = sampling.sample_shard_composite(drawn_local, self.num_local, self.num_sample,
                                                         self.backend.blocks, local)
            self.sampled_index, local_target = sample.sampled_index, sample.local_target
            if self.sample_label is not None:
                local_target = self._targets_kept(local, local_target)
            self.output_dict["sampled_class_index"] = self.sampled_index
        self.blocks = self._kept_blocks()
        self.margin_states = self.margin.create_states(self.name)

        total_feature = self.chain.all_gather_with_grad(feature, self.rank)
        if self.fused:
            loss = margin_softmax_loss_fused(total_feature, self.blocks[0].centers, global_target, self.chain,
                                             self.rank, self.margin, self.backend.fused)
        else:
            loss = margin_softmax_loss(total_feature, self.blocks, self._target_centers(local_target),
                                       local_target, self.chain, self.margin, self.backend.blocks, self.dtype,
                                       None if self.updates_in_place else self._reload_block, self.margin_states)
        self.output_dict["loss"] = loss

    def _check_sample_label(self, sample_label):
        """``sample_label`` once it can be sampled from: an integer tensor of one dimension (or
        [n, 1]); ValueError otherwise."""
        if sample_label is None:
            return None
        if sample_label.dtype not in (paddle.int64, paddle.int32) or not (
                len(sample_label.shape) == 1 or (len(sample_label.shape) == 2 and sample_label.shape[1] == 1)):
            raise ValueError(f"sample_label must be an integer tensor of shape [n] or [n, 1], got "
                             f"{sample_label.dtype} {list(sample_label.shape)}")
        return sample_label

    def _sampling_labels(self, total_label) -> paddle.pir.Value:
        """int64 [M]: the labels the kept centers are drawn from: ``total_label`` (this step's
        gathered labels), or every rank's ``sample_label`` (checked in range too)."""
        if self.sample_label is None:
            return total_label
        labels = paddle.reshape(paddle.cast(self.sample_label, "int64"), [-1])
        labels.stop_gradient = True
        return checks.labels_in_range(self.chain.all_gather(labels), self.num_classes, self.chain)

    def _targets_kept(self, local, local_target) -> paddle.pir.Value:
        """``local_target`` once every label of this shard in ``local`` is among the kept centers
        of every rank (a label missing from ``sample_label`` stops the step on every rank; the
        rank that misses it prints its labels missing)."""
        last = paddle.cast(paddle.shape(self.sampled_index)[0] - 1, "int64")
        found = paddle.gather(self.sampled_index, paddle.minimum(paddle.clip(local_target, min=0), last))
        missing = paddle.logical_and(local >= 0, found != local)
        bad = paddle.reshape(paddle.cast(paddle.any(missing), "float32"), [1])
        if self.world_size > 1:  # every rank stops together
            bad = self.chain.all_reduce_max(bad)
        ok = paddle.reshape(bad == 0, [])
        return checks.passed(local_target, ok, lambda: [paddle.masked_select(local + self.class_start, missing)],
                             4, self.chain)

    def _kept_blocks(self) -> list[Block]:
        """The kept centers in the blocks of ``layout`` (one block on the fused backend), gathered from the
        shard and cast to ``block_dtype``. Without sampling the blocks are consecutive slices of the shard."""
        by_index = self.reads_rows_by_index
        blocks = []
        for start, stop in self.layout.bounds:
            if self.sampled:  # the last block takes the rest: positives may exceed num_sample
                index = paddle.slice(self.sampled_index, [0], [start], [2**62 if stop is None else stop])
                centers = (self._gradient_handle(index) if by_index
                           else self.backend.blocks.gather_rows(self.weight, index))
            else:
                end = self.num_local if stop is None else stop
                index = paddle.arange(start, end, dtype="int64")
                centers = self.backend.blocks.row_range(self.weight, start, end)
            index.stop_gradient = True
            if self.block_dtype != centers.dtype:
                centers = paddle.cast(centers, self.block_dtype)
            centers.stop_gradient = False
            blocks.append(Block(index, centers, start, stop, table=self.weight if by_index else None))
        return blocks

    def _gradient_handle(self, index) -> paddle.pir.Value:
        """An uninitialised [len(index), D] value in ``block_dtype``: the differentiable stand-in of
        a block whose rows the products read from the shard by index. Its first dimension is static
        only where the index's is, as the gradient's will be."""
        count = index.shape[0]
        return paddle.empty([count if count >= 0 else paddle.shape(index)[0], self.embedding_size],
                            self.block_dtype)

    @property
    def block_dtype(self) -> str:
        """The dtype the blocks of kept centers are held in: ``dtype``, except float32 centers stay
        float32 where the products round their operands to ``dtype`` themselves (native bfloat16
        products on CPU: no cast passes; the centers' gradient then stays float32 too)."""
        return self.layout.block_dtype

    @property
    def reads_rows_by_index(self) -> bool:
        """True when the products read the kept rows from the shard by index (composite backend with
        sampling, where the block operations can: the native kernels' float32 products, of float32
        or bfloat16 rows): no gathered copy of them (:class:`~paddle_pfc.head.blocks.Block`)."""
        return self.layout.reads_rows_by_index

    @property
    def updates_in_place(self) -> bool:
        """True when each block is float32 rows of a float32 shard: the backward reads the block
        itself and the update runs in place on it. Otherwise the backward and the update gather
        the rows again, so no block stays alive from the forward to the backward."""
        return self.layout.updates_in_place

    def _reload_block(self, k: int) -> paddle.pir.Value:
        """Block k's centers again, for the backward: a fresh gather of its stored rows in
        ``block_dtype``."""
        rows = self.backend.blocks.gather_rows(self.weight, self.blocks[k].index)
        rows.stop_gradient = True
        return rows if self.block_dtype == self.center_dtype else paddle.cast(rows, self.block_dtype)

    def _target_centers(self, local_target) -> paddle.pir.Value:
        """[N, D]: the shard's row of each sample's class (row 0 for samples of other shards)."""
        column = paddle.clip(local_target, min=0)
        row = column if self.sampled_index is None else paddle.gather(self.sampled_index, column)
        target = self.backend.blocks.gather_rows(self.weight, row)
        target.stop_gradient = True
        return target

    # ------------------------------------------------------------------------------------------
    def create_states(self, rule) -> paddle.pir.Value | None:
        """Create (once) the momentum buffer of the shard (``momentum_dtype``; int8: with its row
        scales ``velocity_scale``) when ``rule`` needs one; return it. An AdamW ``rule``: its
        states ``adamw_states`` (:class:`~paddle_pfc.head.sparse_adamw.AdamWStates`) instead."""
        if rule.adamw is not None and self.adamw_states is None:
            self.adamw_states = create_adamw_states(self.weight)
        if rule.momentum is not None and self.velocity is None:
            self.velocity = create_velocity(self.weight, self.momentum_dtype)
            if self.momentum_dtype == "int8":
                self.velocity_scale = create_velocity_scale(self.weight)
        return self.velocity

    def states(self) -> list:
        """Persistable per-shard optimizer states (the momentum buffer and its scales, or the AdamW
        states, once created)."""
        adamw = self.adamw_states.values() if self.adamw_states is not None else []
        return [v for v in (self.velocity, self.velocity_scale, *adamw) if v is not None]

    def state_bytes(self, with_momentum: bool) -> int:
        """Bytes of the shard's centers, and (``with_momentum``) of their optimizer state (the AdamW
        states once created, else the spec's optimizer's)."""
        spec = dataclasses.replace(self.spec, optimizer="adamw") if self.adamw_states is not None else self.spec
        return centers_bytes(spec) + (optimizer_state_bytes(spec) if with_momentum else 0)

