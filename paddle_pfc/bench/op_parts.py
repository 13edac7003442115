"""Where a head step's time goes: a few steps under Paddle's profiler, each operator's whole time
sorted into one part by its name (:data:`PARTS`).

Control-flow instructions (the step's conditional update, the loss's hand-written backward) are
opened and their operators counted instead; an operator counts its kernels and native work whole.
``outside_ops`` is the step less every operator: the executor between operators, Python, and the
profiler's own cost (the profiled steps run a little slower than unprofiled ones).
"""
from __future__ import annotations

import collections
import functools
import time
from collections.abc import Callable

#: The parts, in the order they are reported.
PARTS = ("products", "softmax", "sampling", "gathers", "update", "finite_check", "collectives", "other_ops",
         "outside_ops")

# operator names (without their dialect prefix) of each part but other_ops
_PART_OF_OP = {
    **dict.fromkeys(("pfc_indexed_logits", "pfc_indexed_backward", "pfc_block_logits", "pfc_matmul", "matmul",
                     "matmul_grad"), "products"),
    **dict.fromkeys(("pfc_block_softmax_", "pfc_block_dlogits", "pfc_block_dlogits_", "logsumexp"), "softmax"),
    **dict.fromkeys(("pfc_sample_shard", "randint"), "sampling"),
    **dict.fromkeys(("pfc_gather_rows", "gather", "pfc_row_range"), "gathers"),
    **dict.fromkeys(("pfc_sparse_update", "pfc_sparse_update_", "pfc_sparse_update_int8",
                     "pfc_sparse_update_int8_"), "update"),
    **dict.fromkeys(("pfc_any_nonfinite", "isfinite", "any", "all"), "finite_check"),
}
_COLLECTIVE_PREFIXES = ("all_gather", "all_reduce", "c_allgather", "c_allreduce", "broadcast", "c_broadcast",
                        "reduce_scatter", "barrier")
# instructions that hold other operators: opened, not counted whole
_CONTAINERS = ("if_instruction", "pylayer_instruction", "while_instruction")


def part_of(op_name: str) -> str:
    """The part of :data:`PARTS` an operator's time counts in (``pd_op.all_gather`` ->
    ``collectives``, ``custom_op.pfc_sparse_update_`` -> ``update``, anything unknown ->
    ``other_ops``)."""
    name = op_name.rsplit(".", 1)[-1]
    if name in _PART_OF_OP:
        return _PART_OF_OP[name]
    if name.startswith(_COLLECTIVE_PREFIXES):
        return "collectives"
    return "other_ops"


@functools.cache
def _profiler():
    """The process's one profiler (Paddle makes a single native profiler a process)."""
    import paddle.profiler as profiler

    return profiler.Profiler(targets=[profiler.ProfilerTarget.CPU])


def operator_seconds(result) -> dict[str, float]:
    """Seconds of each operator name in a profiler result (``Profiler.profiler_result``), control-flow
    instructions opened."""
    import paddle.profiler as profiler

    seconds: dict[str, float] = collections.defaultdict(float)
    for root in result.get_data().values():
        stack = [root]
        while stack:
            node = stack.pop()
            if node.type == profiler.TracerEventType.Operator and node.name not in _CONTAINERS:
                seconds[node.name] += (node.end_ns - node.start_ns) / 1e9
            else:
                stack.extend(node.children_node)
    return dict(seconds)


def profiled_parts(step: Callable[[], object], steps: int) -> dict[str, float]:
    """Seconds a step of each part of :data:`PARTS` (and ``step``: the profiled step's wall time),
    from ``steps`` calls of ``step`` under the profiler."""
    prof = _profiler()
    prof.start()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    wall = (time.perf_counter() - start) / steps
    prof.stop()
    parts = dict.fromkeys(PARTS, 0.0)
    for name, seconds in operator_seconds(prof.profiler_result).items():
        parts[part_of(name)] += seconds / steps
    parts["outside_ops"] = max(0.0, wall - sum(parts.values()))
    return {"step": wall, **parts}
