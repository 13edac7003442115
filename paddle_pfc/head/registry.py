"""What the head records about a program: its classifiers, and the non-finite flags of ``minimize``.

Kept here, keyed by the Program object, instead of as attributes set on Paddle's ``Program``.
The keys are weak (a program's record goes with it). A PIR ``Program`` is weak-referenceable and
``paddle.static.default_main_program()`` returns the same Python object for a program each time
(also under ``program_guard``), so the object itself is the key; a clone is another program,
with no record.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import paddle

#: What the entries of :func:`nonfinite_flags` stand for, in order.
NONFINITE_PARTS = ("loss", "backbone gradients", "class-center gradients", "batch-norm statistics")


@dataclass
class _Record:
    classifiers: list = field(default_factory=list)
    nonfinite: object = None
    minimized: bool = False
    inspected: bool = False


_records: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _record(program: paddle.static.Program) -> _Record:
    record = _records.get(program)
    if record is None:
        record = _records[program] = _Record()
    return record


def add_classifier(program: paddle.static.Program, classifier: Any) -> None:
    """Record that ``classifier`` (a ``LargeScaleClassifier``) was built into ``program``."""
    _record(program).classifiers.append(classifier)


def classifiers_of(program: paddle.static.Program) -> list[Any]:
    """The ``LargeScaleClassifier`` objects built into ``program`` (in build order)."""
    record = _records.get(program)
    return list(record.classifiers) if record is not None else []


def mark_minimized(program: paddle.static.Program) -> bool:
    """Record that :func:`paddle_pfc.minimize` appended its backward and updates to ``program``;
    False when it had already done so."""
    record = _record(program)
    first, record.minimized = not record.minimized, True
    return first


def trains_centers_unawares(program: paddle.static.Program) -> bool:
    """True, once per program, for a program with classifiers and backward ops that
    :func:`paddle_pfc.minimize` did not build (e.g. Paddle's own ``optimizer.minimize``: the
    class centers are then never updated); False afterwards and for every other program."""
    record = _records.get(program)
    if record is None or not record.classifiers or record.minimized or record.inspected:
        return False
    record.inspected = True
    return any(op.name().endswith("_grad") for op in program.global_block().ops)


def set_nonfinite_flags(program: paddle.static.Program, flags: paddle.pir.Value) -> None:
    """Record the flags Value that :func:`paddle_pfc.minimize` built into ``program``."""
    _record(program).nonfinite = flags


def nonfinite_flags(program: paddle.static.Program) -> paddle.pir.Value | None:
    """float32 [4] Value of ``program`` built by :func:`paddle_pfc.minimize` with a finite check:
    1.0 where that part (:data:`NONFINITE_PARTS`) held an inf/NaN on any rank at this step (the
    step was skipped), else 0.0; identical on every rank. None when the program has no check."""
    record = _records.get(program)
    return record.nonfinite if record is not None else None
