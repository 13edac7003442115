"""``minimize``: backward + updates for a program holding ``LargeScaleClassifier`` heads."""
from __future__ import annotations

import math
from dataclasses import dataclass

import paddle

from paddle_pfc.head import accumulation
from paddle_pfc.head.host_memory import check_state_fits
from paddle_pfc.head.loss_scaling import DynamicLossScaler, LossScaling, nonfinite_flag
from paddle_pfc.head.registry import classifiers_of, mark_minimized, set_nonfinite_flags
from paddle_pfc.head.sparse_update import CenterUpdateRule, append_center_update
from paddle_pfc.head.spec import accumulation_bytes, optimizer_state_row_bytes
from paddle_pfc.kernels.collectives import CollectiveChain
from paddle_pfc.utils import paddle_compat
from paddle_pfc.utils.launch_env import local_world_size

_BUCKET_ELEMENTS = 1 << 24  # 64 MiB of float32 per all-reduce


def data_parallel_parameters(program, optimizer) -> list:
    """Trainable parameters that every rank holds whole (everything except the class centers)."""
    sharded = set()
    for clf in classifiers_of(program):
        sharded.update({clf.weight.name, *(v.name for v in clf.states())})
    chosen = paddle_compat.parameter_list(optimizer) or program.global_block().all_parameters()
    return [p for p in chosen
            if not p.stop_gradient and p.name not in sharded and not getattr(p, "is_distributed", False)]


def _numel(value) -> int:
    if any(d is None or d < 0 for d in value.shape):
        raise ValueError(f"parameter gradients need static shapes, got {value.shape}")
    return math.prod(value.shape)


def all_reduce_in_buckets(chain: CollectiveChain, grads: list) -> list:
    """Sum ``grads`` over ranks: flattened into ≤64 MiB buckets, one ordered all-reduce each."""
    summed, bucket, size = [], [], 0

    def flush():
        nonlocal bucket, size
        if not bucket:
            return
        flat = chain.all_reduce_sum_concat([paddle.reshape(g, [-1]) for g in bucket])
        pieces = paddle.split(flat, [_numel(g) for g in bucket] + [1])[:-1]  # the last: the chain's tie
        summed.extend(paddle.reshape(p, g.shape) for p, g in zip(pieces, bucket))
        bucket, size = [], 0

    for g in grads:
        if size and size + _numel(g) > _BUCKET_ELEMENTS:
            flush()
        bucket.append(g)
        size += _numel(g)
    flush()
    return summed


def broadcast_at_startup(startup, params: list, world_size: int, rank: int) -> None:
    """Make every rank start from rank 0's values of ``params`` (appended to the startup program).

    A sum over ranks of (value on rank 0, zeros elsewhere) is rank 0's value bit for bit; one
    flattened all-reduce of the startup program's own :class:`CollectiveChain` keeps the
    collective order trivially identical on every rank.
    """
    names = {p.name for p in params}
    if world_size == 1 or not names:
        return
    values = {}
    for op in startup.global_block().ops:
        if op.name() == "builtin.set_parameter" and op.attrs()["parameter_name"] in names:
            values[op.attrs()["parameter_name"]] = op.operand_source(0)
    ordered = [values[p.name] for p in sorted(params, key=lambda p: p.name) if p.name in values]
    with paddle.static.program_guard(startup):
        flat = paddle.concat([paddle.reshape(v, [-1]) for v in ordered])
        flat = CollectiveChain(world_size).all_reduce_sum(flat * (1.0 if rank == 0 else 0.0))
        for value, piece in zip(ordered, paddle.split(flat, [_numel(v) for v in ordered])):
            paddle_compat.assign_into(paddle.reshape(piece, value.shape), value)


def _per_head(block_grads: list, heads) -> list[list]:
    """``block_grads`` (every head's blocks, in order) split into one list per head."""
    out, start = [], 0
    for head in heads:
        out.append(block_grads[start:start + len(head.blocks)])
        start += len(head.blocks)
    return out


def _center_grads_bad(heads, block_grads: list, feature_grads: dict | None = None,
                      limited_only: bool = False) -> paddle.pir.Value:
    """bool [1]: a block gradient of any head is non-finite, or reaches its head's magnitude limit
    (``blocks.grad_limit_log2`` < 128: the native update projects the gradient, which must not
    overflow). For such a head, a gradient of its feature in ``feature_grads`` (by ``id`` of the
    head) vouches for its blocks and is checked instead: its backward turns every logit gradient
    that could reach the limit into NaN, and a NaN logit gradient makes the feature gradient NaN.
    ``limited_only``: check only the heads with a limit (gradients already checked otherwise)."""
    feature_grads = feature_grads or {}
    flags = []
    for head, grads in zip(heads, _per_head(block_grads, heads)):
        limit = head.backend.blocks.grad_limit_log2
        if not grads or (limited_only and limit == 128):
            continue
        vouching = feature_grads.get(id(head)) if limit < 128 else None
        if vouching is not None:
            flags.append(nonfinite_flag([vouching], head.backend.blocks))
        else:
            flags.append(nonfinite_flag(grads, head.backend.blocks, limit))
    if not flags:
        return paddle.full([1], False, "bool")
    return paddle.reshape(paddle.any(paddle.concat(flags)), [1]) if len(flags) > 1 else flags[0]


def _loss_scaler(loss_scaling, heads) -> DynamicLossScaler | None:
    if loss_scaling is None:  # on for float16 heads, as float16 gradients need it
        loss_scaling = any(h.dtype == "float16" for h in heads)
    if loss_scaling is True:
        loss_scaling = LossScaling()
    if loss_scaling is False:
        return None
    if not isinstance(loss_scaling, LossScaling):
        raise ValueError("loss_scaling must be None, a bool or a paddle_pfc.LossScaling, "
                         f"got {loss_scaling!r}")
    return DynamicLossScaler(loss_scaling)


def running_statistics(program) -> list:
    """The running means and variances that the BatchNorm ops of ``program`` write in its
    forward pass (their new values, as Values of the program): Paddle's, and the native ones of
    :func:`paddle_pfc.kernels.native_ops.batch_norm` (same result order)."""
    names = ("pd_op.batch_norm_", "pd_op.batch_norm", "custom_op.pfc_batch_norm_", "custom_op.pfc_batch_norm_prelu_")
    out = []
    for op in program.global_block().ops:
        if op.name() in names:
            out += [op.result(1), op.result(2)]
    return out


def check_arguments(program, heads: list, optimizer: paddle.optimizer.Optimizer, loss) -> CenterUpdateRule:
    """The centers' update rule read from ``optimizer``, once ``program`` (the current main
    program), its ``heads`` and ``loss`` are what :func:`minimize` can train; ValueError naming
    the problem otherwise."""
    if not heads:
        raise ValueError("minimize: the current main program holds no LargeScaleClassifier; build "
                         "one (under the same program_guard) before calling minimize")
    if not isinstance(loss, paddle.pir.Value) or loss.dtype != paddle.float32 or loss.shape not in ([], [1]):
        raise ValueError(f"loss must be a float32 scalar Value, got {loss!r}")
    maker = loss.get_defining_op()
    if maker is not None and maker.get_parent_block().program is not program:
        raise ValueError("minimize: loss was built in another program than the current main program; call "
                         "minimize under the program_guard of the program that built the loss")
    rule = CenterUpdateRule.from_optimizer(optimizer)
    if rule.adamw is not None and any(h.momentum_dtype == "int8" for h in heads):
        raise ValueError("momentum_dtype='int8' with optimizer AdamW: the centers' AdamW moments are float32; "
                         "leave momentum_dtype unset")
    if rule.rescale_grad != 1.0 and not paddle_compat.on_gpu():
        raise ValueError(f"optimizer rescale_grad={rule.rescale_grad:g}: Paddle 3.3's CPU momentum kernel ignores it "
                         "for the backbone while the class centers would apply it; scale the loss instead")
    if isinstance(paddle_compat.grad_clip(optimizer), paddle.nn.ClipGradByValue):
        raise ValueError("optimizer grad_clip: Paddle 3.3's static (PIR) programs have no ClipGradByValue "
                         "(it raises NotImplementedError); use paddle.nn.ClipGradByGlobalNorm")
    return rule


def check_centers_fit(heads: list, rule: CenterUpdateRule, accumulate_steps: int = 1) -> None:
    """On CPU, :class:`~paddle_pfc.head.host_memory.HeadMemoryError` when the shards of ``heads``
    and their optimizer state (with ``rule``; and their gradient accumulation buffers) cannot fit
    in the memory available to this machine's ranks: it fails now, not at the OOM killer's SIGKILL."""
    if paddle_compat.on_gpu():
        return
    state = sum(h.state_bytes(with_momentum=False) + accumulation_bytes(h.spec, accumulate_steps)
                + h.num_local * optimizer_state_row_bytes(rule.kind, h.embedding_size, h.momentum_dtype) for h in heads)
    held = {"sgd": "", "momentum": " and their momentum", "adamw": " and their AdamW moments"}[rule.kind]
    check_state_fits(state, local_world_size(), f"the class centers{held} of "
                     f"{', '.join(h.name for h in heads)}")


@dataclass
class Gradients:
    """What the backward hands on. ``pairs``: (parameter, gradient) of the data-parallel
    parameters that have one; ``blocks``: every head's block gradients, heads in order (one list);
    ``features``: the gradient of each head's feature (by ``id`` of the head), where it has one."""

    pairs: list
    blocks: list
    features: dict


def backward(loss, heads: list, params: list, scaler: DynamicLossScaler | None) -> Gradients:
    """The gradients of ``loss`` (times the loss scale with ``scaler``) w.r.t. ``params``, the
    heads' blocks of kept centers and their features. ValueError when ``loss`` does not depend on
    a head's centers."""
    feature_heads = [h for h in heads if not h.input_dict["feature"].stop_gradient]
    blocks = [c.centers for h in heads for c in h.blocks]
    grads = paddle_compat.pir_grad(scaler.scaled(loss) if scaler else loss,
                                   params + blocks + [h.input_dict["feature"] for h in feature_heads],
                                   allow_unused=True)
    param_grads = grads[:len(params)]
    block_grads = grads[len(params):len(params) + len(blocks)]
    features = {id(h): g for h, g in zip(feature_heads, grads[len(params) + len(blocks):]) if g is not None}
    for head, head_grads in zip(heads, _per_head(block_grads, heads)):
        if any(g is None for g in head_grads):
            raise ValueError(f"loss does not depend on the class centers of {head.name}")
    return Gradients([(p, g) for p, g in zip(params, param_grads) if g is not None], block_grads, features)


def sync_gradients(chain: CollectiveChain, grads: Gradients) -> None:
    """Sum the data-parallel gradients over ranks (ordered buckets, in place in ``grads.pairs``),
    after every feature gradient's all-reduce (issued by the backward, on every rank)."""
    feature_grads = list(grads.features.values())
    if feature_grads:
        chain.after(feature_grads[-1])
    if grads.pairs and chain.world_size > 1:
        summed = all_reduce_in_buckets(chain, [g for _, g in grads.pairs])
        grads.pairs = [(p, g) for (p, _), g in zip(grads.pairs, summed)]


def finite_check(program, chain: CollectiveChain, loss, heads: list, grads: Gradients, statistics: list,
                 scaler: DynamicLossScaler | None) -> paddle.pir.Value:
    """bool [1], the same on every rank: the step's loss, a gradient (backbone or kept centers, on
    any rank) or a new BatchNorm statistic is inf/NaN (or a center gradient reaches its head's
    magnitude limit: :func:`_center_grads_bad`). With ``scaler`` the gradients are unscaled here
    (replaced in ``grads``). The four flags are recorded as the program's
    :func:`~paddle_pfc.head.registry.nonfinite_flags`."""
    loss_bad = paddle.reshape(paddle.logical_not(paddle.isfinite(loss)), [1])
    ops = heads[0].backend.blocks  # the program's kernels (one device, one backend per program)
    if scaler:
        backbone, backbone_bad = scaler.unscale_and_check([g for _, g in grads.pairs])
        centers, centers_bad = scaler.unscale_and_check(
            [g if g.dtype == paddle.float32 else paddle.cast(g, "float32") for g in grads.blocks])
        grads.pairs = [(p, g) for (p, _), g in zip(grads.pairs, backbone)]
        grads.blocks = centers
        centers_bad = paddle.logical_or(centers_bad, _center_grads_bad(heads, grads.blocks, limited_only=True))
    else:
        backbone_bad = nonfinite_flag([g for _, g in grads.pairs], ops)
        centers_bad = _center_grads_bad(heads, grads.blocks, grads.features)
    stats_bad = nonfinite_flag(statistics, ops)
    flags = paddle.concat([paddle.cast(f, "float32") for f in (loss_bad, backbone_bad, centers_bad, stats_bad)])
    if chain.world_size > 1:  # the center gradients (and so their flag) differ per rank
        flags = chain.all_reduce_max(flags)
    set_nonfinite_flags(program, flags)
    return paddle.reshape(paddle.max(flags) > 0, [1])


def append_updates(optimizer: paddle.optimizer.Optimizer, heads: list, grads: Gradients, rule: CenterUpdateRule,
                   found_inf: paddle.pir.Value | None, scaler: DynamicLossScaler | None,
                   apply: paddle.pir.Value | None = None) -> None:
    """Every update of the step: each head's kept centers (:mod:`paddle_pfc.head.sparse_update`)
    and the data-parallel parameters (``optimizer.apply_gradients``); all inside one ``cond`` on
    ``found_inf`` when there is a finite check (a bad step changes no parameter and no optimizer
    state), then the loss scale's update. ``apply`` (bool [1]): the updates run only where it
    holds (the K-th micro-step of an accumulated step)."""
    lr = paddle_compat.learning_rate_value(optimizer)

    def apply_updates():
        for head, head_grads in zip(heads, _per_head(grads.blocks, heads)):
            append_center_update(head.weight, head.velocity, head.blocks, head_grads, lr, rule, head.backend.blocks,
                                 head.velocity_scale, head.adamw_states)
        if grads.pairs:
            optimizer.apply_gradients(grads.pairs)

    run = None if found_inf is None else paddle.logical_not(paddle.reshape(found_inf, []))
    if apply is not None:
        due = paddle.reshape(apply, [])
        run = due if run is None else paddle.logical_and(run, due)
    if run is None:
        apply_updates()
    else:
        paddle.static.nn.cond(run, apply_updates, None)
        if scaler:
            scaler.append_update(found_inf, apply)


def minimize(optimizer: paddle.optimizer.Optimizer, loss: paddle.pir.Value,
             startup_program: paddle.static.Program | None = None,
             loss_scaling: LossScaling | bool | None = None, skip_nonfinite: bool = True,
             check_memory: bool = True, accumulate_steps: int = 1) -> list:
    """Append backward and updates for ``loss`` to the current main program.

    * Data-parallel parameters (the backbone: every trainable parameter except class centers) get
      the gradient of the global loss — their local gradients summed over ranks, in ordered
      buckets — and Paddle's own ``optimizer.apply_gradients`` (its LR scheduler, momentum, weight
      decay and grad clip, identical on every rank). They are synchronised from rank 0 at start-up.
    * Each classifier's kept centers get the same rule sparsely (:mod:`paddle_pfc.head.sparse_update`;
      AdamW: :mod:`paddle_pfc.head.sparse_adamw`, each row bias-corrected by its own step count).
      On CPU, shards whose centers and optimizer state cannot fit in the memory available to this
      machine's ranks raise :class:`paddle_pfc.head.host_memory.HeadMemoryError` here, before anything
      is allocated (``check_memory=False``: the caller has checked, e.g. the trainer's whole plan).
    * ``loss_scaling`` (:mod:`paddle_pfc.head.loss_scaling`): dynamic loss scaling whose finite check
      covers the center gradients too; a step with an inf/NaN gradient on any rank updates
      nothing. ``None`` (default): on when a classifier computes in float16; ``True``: on with
      the default :class:`LossScaling`; ``False``: off.
    * ``skip_nonfinite`` (default True; always on with loss scaling): a step whose loss or any
      gradient (backbone or kept centers, on any rank) is inf/NaN updates no parameter and no
      optimizer state — every update sits in one ``cond`` branch. (With the native CPU kernels,
      whose update projects the centers' gradient itself, a center gradient element of magnitude
      >= 2**64 counts as non-finite too: below it the projection cannot overflow.) The new BatchNorm running
      statistics are checked too (a variance can overflow while the loss stays finite); they are
      written by the forward pass, outside the branch, so the caller restores them after a
      skipped step (the trainer does). Cost: one isfinite pass over every gradient (with the
      native kernels, the feature's gradient stands in for the centers': see
      :func:`_center_grads_bad`) and a 4-float all-reduce per step. What was non-finite is fetchable as
      :func:`paddle_pfc.head.registry.nonfinite_flags`.

    * ``accumulate_steps`` K > 1: gradient accumulation (:mod:`paddle_pfc.head.accumulation`): the
      program is run K times a step, fed the micro-step (0 .. K-1) as ``accumulation_of(program).feed_name``;
      gradients of ``loss / K`` add up in buffers and the updates run at the K-th micro-step, the
      finite check reading the buffers (with loss scaling: the scaled sums, unscaled there; the
      scale moves at the K-th micro-step only). A sampled head needs its ``sample_label`` (the
      labels of all K micro-batches).

    ``loss``: float32 scalar, normally ``LargeScaleClassifier.output_dict['loss']`` (plus any
    terms the user adds; local terms are summed over ranks like the rest). Returns the list of
    (parameter, summed gradient) pairs of the data-parallel parameters (accumulated ones with K > 1).
    """
    program = paddle.static.default_main_program()
    startup = startup_program or paddle.static.default_startup_program()
    heads = classifiers_of(program)
    statistics = running_statistics(program)
    rule = check_arguments(program, heads, optimizer, loss)
    scaler = _loss_scaler(loss_scaling, heads)
    accumulation.check_accumulation(heads, accumulate_steps)
    if check_memory:
        check_centers_fit(heads, rule, accumulate_steps)
    if not mark_minimized(program):
        raise ValueError("minimize: already called for this program (its backward and updates are in it); "
                         "call it once, with the sum of the losses")
    world_size = heads[0].world_size
    acc = accumulation.start(program, accumulate_steps) if accumulate_steps > 1 else None
    if acc is not None:
        loss = loss * (1.0 / accumulate_steps)
    grads = backward(loss, heads, data_parallel_parameters(program, optimizer), scaler)
    for head in heads:
        head.create_states(rule)
    chain = CollectiveChain(world_size)
    sync_gradients(chain, grads)
    if acc is not None:
        loss = accumulation.accumulate_gradients(acc, heads, grads, loss)
    found_inf = finite_check(program, chain, loss, heads, grads, statistics, scaler) \
        if scaler or skip_nonfinite else None
    if grads.pairs:
        broadcast_at_startup(startup, [p for p, _ in grads.pairs], world_size, heads[0].rank)
    append_updates(optimizer, heads, grads, rule, found_inf, scaler, None if acc is None else acc.last)
    return grads.pairs

