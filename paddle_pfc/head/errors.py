"""The errors :func:`paddle_pfc.head.runner.run` raises when a classifier's run-time check fails (no Paddle
imported: catch them without building anything)."""
from __future__ import annotations

from paddle_pfc.utils.errors import RunDataError


class LabelRangeError(RunDataError):
    """A label outside ``[0, num_classes)`` reached a LargeScaleClassifier."""


class BatchSizeError(RunDataError):
    """A LargeScaleClassifier got another number of labels than of feature rows on this rank."""
