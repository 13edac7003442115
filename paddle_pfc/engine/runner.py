"""``run``: ``Executor.run`` that turns the classifier's run-time checks into clear errors.

Every ``LargeScaleClassifier`` asserts inside the program that each gathered label lies in
``[0, num_classes)`` (all ranks see all labels, so all ranks stop together, and no loss is ever
computed from a wrong label), and, where a batch size is dynamic, that this rank has one label
per feature row (before any collective). Paddle reports a failed assert as an anonymous
``AssertOp`` error; :func:`run` re-raises it as :class:`BatchSizeError` naming the feeds and
their sizes, or as :class:`LabelRangeError` naming the label value and its row.
"""
from __future__ import annotations

import warnings

import numpy as np
import paddle

from paddle_pfc.head.registry import classifiers_of, trains_centers_unawares


class LabelRangeError(ValueError):
    """A label outside ``[0, num_classes)`` reached a LargeScaleClassifier."""


class BatchSizeError(ValueError):
    """A LargeScaleClassifier got another number of labels than of feature rows on this rank."""


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


def run(executor: paddle.static.Executor, program, feed: dict | None = None, fetch_list=None, **kwargs):
    """``executor.run(program, feed=feed, fetch_list=fetch_list, **kwargs)``; a failed batch check
    raises :class:`BatchSizeError`, a failed label check :class:`LabelRangeError` (chained to
    Paddle's error). A training program whose
    classifiers :func:`paddle_pfc.minimize` did not update warns once (their centers never learn)."""
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
        mismatch = describe_batch_mismatch(program, feed)
        if mismatch is not None:
            raise BatchSizeError(mismatch) from exc
        message = describe_bad_labels(program, feed)
        if message is None:
            raise
        raise LabelRangeError(message) from exc
