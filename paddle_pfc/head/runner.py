"""``run``: ``Executor.run`` that turns the classifier's run-time checks into clear errors.

Every ``LargeScaleClassifier`` asserts inside the program that each gathered label lies in
``[0, num_classes)`` and, where a batch size is dynamic, that every rank has one label per
feature row and (on 2+ ranks) the same batch (:mod:`paddle_pfc.head.checks`). Each check is made
on values every rank holds, so all ranks stop at the same check, before any loss or update reads
a wrong input. Paddle reports a failed assert as an anonymous ``AssertOp`` error; :func:`run`
re-raises it as :class:`BatchSizeError` naming the feeds and their sizes, or as
:class:`LabelRangeError` naming the label value and its row. On several ranks it first gathers
what every rank fed (:func:`feed_facts`, one small all-gather, which every rank makes since every
rank stopped at the same check), so each rank's error names the rank whose input was wrong: call
``run`` on every rank.
"""
from __future__ import annotations

import warnings

import numpy as np
import paddle

from paddle_pfc.head.errors import BatchSizeError, LabelRangeError
from paddle_pfc.head.registry import classifiers_of, trains_centers_unawares
from paddle_pfc.runtime.distributed import all_gather_rows


def _rows(value) -> int:
    shape = np.shape(value)
    return int(shape[0]) if shape else 1


def describe_batch_mismatch(program, feed: dict | None) -> str | None:
    """Message naming the fed label batch and the fed inputs of the feature batch that differ in
    size, for the classifiers of ``program``, if any (None when the feeds do not show it)."""
    for head in classifiers_of(program):
        if not feed or head.label_feed_name not in feed:
            continue
        labels = _rows(feed[head.label_feed_name])
        sources = {name: _rows(feed[name]) for name in head.feature_feed_names if name in feed}
        differing = {name: rows for name, rows in sources.items() if rows != labels}
        if differing:
            inputs = ", ".join(f"{rows} rows of '{name}'" for name, rows in differing.items())
            return (f"{head.name}: {labels} labels ('{head.label_feed_name}') for {inputs}, which its feature "
                    "is computed from: feed one label per sample")
    return None


def describe_bad_labels(program, feed: dict | None) -> str | None:
    """Message naming out-of-range labels in ``feed`` for the classifiers of ``program``, if any."""
    messages = []
    for head in classifiers_of(program):
        label_name = head.label_feed_name
        labels = np.asarray(feed[label_name]).reshape(-1) if feed and label_name in feed else None
        bad = np.flatnonzero((labels < 0) | (labels >= head.num_classes)) if labels is not None else []
        if len(bad):
            rows = ", ".join(f"row {i}: {labels[i]}" for i in bad[:8])
            messages.insert(0, f"label '{label_name}' outside [0, {head.num_classes}) for "
                               f"{head.name}: {rows}" + (" ..." if len(bad) > 8 else ""))
        else:
            fused = " — or the fused class_center_sample kernel dropped a positive center (run with " \
                "kernels='composite' and report it)" if head.fused and head.sampled else ""
            hint = ""
            if label_name is None:  # computed from the feed, not fed as it is: its values are not at hand
                where = "a label (computed in the program, not fed directly, so not named here)"
            elif head.world_size > 1:
                where, hint = "a label fed on another rank", "; see that rank's log"
            else:
                where = f"a label of '{label_name}'"
            messages.append(f"{where} is outside [0, {head.num_classes}) ({head.name}){hint}{fused}")
    return messages[0] if messages else None


#: Columns of :func:`feed_facts`: feature rows, labels, out-of-range labels, the first one's row and value.
_ROWS, _LABELS, _BAD, _BAD_ROW, _BAD_VALUE = range(5)


def feed_facts(head, feed: dict | None) -> np.ndarray:
    """int64 [5] of what this rank fed ``head``: feature rows (of its first feature feed), labels,
    how many labels lie outside ``[0, num_classes)``, the first such label's row and value; -1
    where the feed does not show it (a label computed in the program, a feature of no feed)."""
    facts = np.full(5, -1, np.int64)
    feed = feed or {}
    rows = [_rows(feed[name]) for name in head.feature_feed_names if name in feed]
    if rows:
        facts[_ROWS] = rows[0]
    if head.label_feed_name in feed:
        labels = np.asarray(feed[head.label_feed_name]).reshape(-1)
        facts[_LABELS] = labels.size
        if np.issubdtype(labels.dtype, np.number):
            bad = np.flatnonzero((labels < 0) | (labels >= head.num_classes))
            facts[_BAD] = len(bad)
            if len(bad):
                facts[_BAD_ROW], facts[_BAD_VALUE] = bad[0], labels[bad[0]]
    return facts


def describe_ranks(head, table: np.ndarray) -> Exception | None:
    """The error every rank's ``feed_facts`` (``table`` [W, 5], rank order) show for ``head``:
    a rank with labels other than its feature rows, ranks of different batch sizes, a rank's label
    outside the range, or (every label fed and in range, on the fused backend with sampling) a kept
    positive dropped by the kernel; None when the feeds do not show which."""
    feeds = ", ".join(f"'{name}'" for name in head.feature_feed_names) or "the feature's inputs"
    for rank, facts in enumerate(table):
        if facts[_ROWS] >= 0 and facts[_LABELS] >= 0 and facts[_ROWS] != facts[_LABELS]:
            return BatchSizeError(f"{head.name}: rank {rank} fed {facts[_LABELS]} labels ('{head.label_feed_name}') "
                                  f"for {facts[_ROWS]} rows of {feeds}: feed one label per sample")
    samples = [int(facts[_LABELS] if facts[_LABELS] >= 0 else facts[_ROWS]) for facts in table]  # -1: not fed
    if len(set(samples) - {-1}) > 1:
        per_rank = ", ".join(f"rank {rank}: {count}" for rank, count in enumerate(samples))
        return BatchSizeError(f"{head.name}: the ranks fed batches of different sizes ({per_rank} samples): every "
                              "rank must feed the same number each step (drop or pad an epoch's last, partial batch)")
    for rank, facts in enumerate(table):
        if facts[_BAD] > 0:
            more = f" and {facts[_BAD] - 1} more" if facts[_BAD] > 1 else ""
            return LabelRangeError(f"label '{head.label_feed_name}' outside [0, {head.num_classes}) for {head.name} "
                                   f"on rank {rank}: row {facts[_BAD_ROW]}: {facts[_BAD_VALUE]}{more}")
    if head.fused and head.sampled and all(facts[_LABELS] >= 0 for facts in table):
        return RuntimeError(f"{head.name}: every rank's labels lie in [0, {head.num_classes}), but a rank's fused "
                            "class_center_sample kernel dropped one of its positive centers (run with "
                            "kernels='composite' and report it)")
    return None


def _gathered_error(executor, program, feed: dict | None) -> Exception | None:
    """The error all ranks' feeds show, gathered from every rank (one all-gather), for the
    classifiers of a program on 2+ ranks; None on one rank or when no feed shows it."""
    heads = [head for head in classifiers_of(program) if head.world_size > 1]
    if not heads:
        return None
    facts = np.stack([feed_facts(head, feed) for head in heads])              # [H, 5]
    world = heads[0].world_size
    table = all_gather_rows(facts.reshape(1, -1), executor, world).reshape(world, len(heads), 5)
    for k, head in enumerate(heads):
        error = describe_ranks(head, table[:, k])
        if error is not None:
            return error
    return None


def run(executor: paddle.static.Executor, program, feed: dict | None = None, fetch_list=None, **kwargs):
    """``executor.run(program, feed=feed, fetch_list=fetch_list, **kwargs)``; a failed batch check
    raises :class:`BatchSizeError`, a failed label check :class:`LabelRangeError` (chained to
    Paddle's error), on several ranks naming the rank that fed it (every rank must call ``run``).
    A training program whose classifiers :func:`paddle_pfc.minimize` did not update warns once
    (their centers never learn)."""
    if trains_centers_unawares(program):
        warnings.warn("paddle_pfc.run: this program has backward ops but paddle_pfc.minimize did not build "
                      f"them: the class centers of {', '.join(h.name for h in classifiers_of(program))} are never "
                      "updated (Paddle's own optimizer.minimize leaves them out); use paddle_pfc.minimize",
                      UserWarning, stacklevel=2)
    try:
        return executor.run(program, feed=feed, fetch_list=fetch_list, **kwargs)
    except Exception as exc:
        if "AssertOp" not in str(exc) or not classifiers_of(program):
            raise
        error = _gathered_error(executor, program, feed)
        if error is not None:
            raise error from exc
        mismatch = describe_batch_mismatch(program, feed)
        if mismatch is not None:
            raise BatchSizeError(mismatch) from exc
        message = describe_bad_labels(program, feed)
        if message is None:
            raise
        raise LabelRangeError(message) from exc
