"""Type tests of plain numbers shared by every argument check (Python's or numpy's, never a bool)."""
from __future__ import annotations

import math
import numbers


def is_int(value) -> bool:
    """An integer (Python's, or numpy's such as ``labels.max() + 1``), not a bool."""
    return isinstance(value, numbers.Integral) and not _is_bool(value)


def is_finite_real(value) -> bool:
    """A finite real number (int or float, Python's or numpy's), not a bool."""
    return isinstance(value, numbers.Real) and not _is_bool(value) and math.isfinite(value)


def _is_bool(value) -> bool:
    return isinstance(value, bool) or type(value).__name__ == "bool_"
