"""What the head's step cannot undercut on the machine at hand: its three products alone in its blocks
(:func:`build_floor_program`), its passes over the kept rows (:func:`build_passes_program`), the best
GEMM rate (:func:`build_gemm_program`), and the figures paired round by round (:func:`paired_floor`)."""
from __future__ import annotations

import time

import numpy as np
import paddle

from paddle_pfc.head.geometry import block_bounds
from paddle_pfc.head.sparse_update import CenterUpdateRule
from paddle_pfc.kernels import onednn_ops

GEMM_SIZE = 2048  # side of the square product whose rate is the best GEMM rate (gemm_peak_gflops)


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
    ``probe``: the sum of each gathered block's first element (0 without a gather). An AdamW ``rule``
    is a ValueError (its passes are not modelled here).

    Every step of the head pays these passes at least once (its momentum, rows and gradient are read
    and written where they lie in memory), so (floor + passes) / floor is the lowest step / floor
    that the head's design reaches on the machine that runs it. Memory: the gradients, as large as
    the step's own center gradients."""
    if rule.adamw is not None:
        raise ValueError("the passes floor models the Momentum / SGD update; benchmark with train.optimizer "
                         "momentum or sgd")
    ops = head.backend.blocks
    num_kept = head.layout.num_kept
    shape, dtype = [head.num_local, head.embedding_size], head.center_dtype
    rng = np.random.default_rng(seed)
    kept = (np.sort(rng.choice(head.num_local, num_kept, replace=False)) if head.sampled
            else np.arange(num_kept)).astype(np.int64)
    main, startup = paddle.static.Program(), paddle.static.Program()
    feed, probe = {}, None
    # the head's tables by name (its startup initialised them: these initialisers are never run)
    with paddle.static.program_guard(main, paddle.static.Program()):
        zero = paddle.nn.initializer.Constant(0.0)  # 2-byte and int8 parameters need one named
        weight = paddle.static.create_parameter(shape, dtype, name=head.weight.name, default_initializer=zero)
        velocity = (paddle.static.create_parameter(shape, head.momentum_dtype, name=head.velocity.name,
                                                   default_initializer=zero)
                    if rule.momentum is not None else None)
        scale = (paddle.static.create_parameter([head.num_local, 1], "float32", name=head.velocity_scale.name,
                                                default_initializer=zero)
                 if head.velocity_scale is not None else None)
    for table in (weight, velocity, scale):
        if table is not None:
            table.stop_gradient = True
    with paddle.static.program_guard(main, startup):
        lr = paddle.full([1], 1e-3, "float32")
        for k, block in enumerate(head.blocks):
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
            ops.update_rows_(weight, velocity, index, centers, grad, lr, rule, scale)
        if probe is None:
            probe = paddle.full([], 0.0, "float32")
    return main, startup, probe, feed


def build_floor_program(n: int, s: int, d: int, bf16: bool = False, block_rows: int | None = None):
    """The three products of the head alone, on persistable inputs (nothing is fed), in the head's
    blocks of ``block_rows`` kept centers (``block_layout(spec).rows``; all ``s`` in one block by
    default), cut as the head cuts them (:func:`paddle_pfc.head.geometry.block_bounds`): per block
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
        for start, stop in block_bounds(s, rows):
            block = w if rows >= s else paddle.slice(w, [0], [start], [s if stop is None else stop])
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

    def __init__(self, main, startup, probe, feed: dict | None = None,
                 scope: paddle.static.Scope | None = None) -> None:
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
