"""The head's run-time checks of its inputs, each placed so that what reads the input waits for it.

A bare ``Assert`` has no output: Paddle's multi-thread executor (its default, and always on GPU)
may run it after, or alongside, the ops it guards (docs/performance.md), and on several ranks
the all-gathers of unequal batches could start first.
So each checked value passes through a ``cond`` whose failing branch raises
the assert, and the head reads the value ``cond`` returns: nothing downstream runs before the
check has passed, in any executor mode. Every check that a collective follows is made on values
every rank holds (gathered), and the head's next collective is ordered after the check, so all
ranks stop at the same check, none waiting in a collective.
The failure is Paddle's ``AssertOp`` error, which :func:`paddle_pfc.run` names
(``BatchSizeError``, ``LabelRangeError``).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import paddle

if TYPE_CHECKING:
    from paddle_pfc.kernels.collectives import CollectiveChain


def passed(value: paddle.pir.Value, ok: paddle.pir.Value, describe: Callable[[], list[paddle.pir.Value]],
           summarize: int, chain: CollectiveChain) -> paddle.pir.Value:
    """``value`` once the bool scalar ``ok`` holds; otherwise the step stops with Paddle's ``AssertOp``
    error printing the values ``describe()`` builds (computed only when the check fails). Ops that
    read the result run after the check, and so does ``chain``'s next collective: a collective
    that read nothing checked could otherwise start on one rank and not on another, which has
    stopped (a 2-rank test met it: gloo's ``std::exception``). ``value`` takes no gradient
    through the check."""
    def fail():
        paddle.static.nn.control_flow.Assert(ok, describe(), summarize=summarize)
        return value

    result = paddle.static.nn.cond(ok, lambda: value, fail)
    result.stop_gradient = True
    chain.after(result)
    return result


def same_batch_everywhere(feature: paddle.pir.Value, label: paddle.pir.Value,
                          chain: CollectiveChain) -> tuple[paddle.pir.Value, paddle.pir.Value]:
    """(feature [B, D], label [B]) once every rank has as many labels as feature rows, and (on 2+
    ranks) every rank the same B: the all-gathers of the features and labels need equal batches,
    and a mismatch would reach them otherwise. For dynamic batch sizes. One all-gather of each
    rank's [rows, labels] (16 bytes) comes first on several ranks, so every rank sees every rank's
    sizes and all stop together; on failure the assert prints that table. The feature keeps its
    gradient (a reshape to the checked label count, which orders it after the check)."""
    sizes = paddle.cast(paddle.stack([paddle.shape(feature)[0], paddle.shape(label)[0]]), "int64")   # [2]
    table = chain.all_gather(sizes)                                                              # [2W]
    label = passed(label, paddle.all(table == table[0]), lambda: [table], 2 * chain.world_size, chain)
    feature = paddle.reshape(feature, [paddle.shape(label)[0], feature.shape[1]])
    return feature, label


def labels_in_range(total_label: paddle.pir.Value, num_classes: int, chain: CollectiveChain) -> paddle.pir.Value:
    """The gathered labels [N] once every one lies in ``[0, num_classes)``; every rank sees all of
    them, so every rank stops together, before sampling or the loss reads them. On failure the
    assert prints the largest label outside the range."""
    bad = paddle.logical_or(total_label < 0, total_label >= num_classes)

    def largest_bad():
        return [paddle.max(paddle.where(bad, total_label, paddle.full_like(total_label, -(2**62))))]

    return passed(total_label, paddle.logical_not(paddle.any(bad)), largest_bad, 1, chain)
