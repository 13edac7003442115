"""The collectives of a benchmark: a tiny all-gather of every rank's figures (:class:`RankGather`, also
the ranks' meeting point), and a step's collectives replayed alone (:func:`collectives_of`,
:func:`build_collectives_program`)."""
from __future__ import annotations

import numpy as np
import paddle

from paddle_pfc.kernels.collectives import CollectiveChain


class RankGather:
    """All-gathers a small float64 vector from every rank (one tiny static program)."""

    def __init__(self, world_size: int, length: int) -> None:
        self.world_size, self.length = world_size, length
        if world_size == 1:
            return
        self.main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(self.main, startup):
            v = paddle.static.data("rank_values", [1, length], "float64")
            self.out = CollectiveChain(world_size).all_gather(v)
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
