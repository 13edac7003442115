"""The variables of a rank's programs that a checkpoint holds, read from and written into its scope:
as host copies (small tensors) or, for center shards, through a view of the tensor's own memory."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from paddle_pfc.engine.checkpoint.common import CheckpointError, check_finite
from paddle_pfc.head.dtypes import HOST_DTYPES
from paddle_pfc.utils.paddle_compat import host_tensor_view


def persistable_names(program) -> list[str]:
    """Names of the persistable variables (parameters, statistics, optimizer states) of ``program``.

    PIR declares parameters with ``builtin.parameter`` and optimizer accumulators (momentum, ...)
    with persistable ``pd_op.data`` ops; feed inputs are non-persistable ``pd_op.data``. Ops inside
    control flow count too: with loss scaling the optimizer creates its accumulators inside the
    branch that applies the updates.
    """
    names = []

    def visit(block) -> None:
        for op in block.ops:
            if op.name() == "builtin.parameter":
                names.append(op.attrs()["parameter_name"])
            elif op.name() == "pd_op.data" and op.result(0).persistable:
                names.append(op.attrs()["name"])
            for inner in op.blocks():
                visit(inner)

    visit(program.global_block())
    return list(dict.fromkeys(names))


def scope_tensor(scope, name: str):
    """The ``DenseTensor`` of variable ``name`` of ``scope``."""
    var = scope.find_var(name)
    if var is None:
        raise CheckpointError(f"variable {name!r} is not in the scope (was the startup program run?)")
    return var.get_tensor()


def read_tensor(scope, name: str) -> np.ndarray:
    """A host copy of variable ``name`` (bfloat16 as uint16 bit patterns)."""
    return np.array(scope_tensor(scope, name))


def write_tensor(scope, name: str, value: np.ndarray, place) -> None:
    """Variable ``name`` set to a copy of ``value`` on ``place`` (a new allocation)."""
    scope.find_var(name).get_tensor().set(np.ascontiguousarray(value), place)


def tensor_view(scope, name: str) -> np.ndarray | None:
    """Variable ``name``'s own memory as a writable numpy array, no copy, or None where there is no
    such view (a tensor on a GPU): the caller then copies (:func:`read_tensor`, :func:`write_tensor`).
    Valid until a program runs or the variable is set."""
    return host_tensor_view(scope_tensor(scope, name))


def read_finite(scope, names: Mapping[str, str], label: str = "") -> dict[str, np.ndarray]:
    """``{key: value of variable names[key]}``, each checked by :func:`check_finite` (named
    ``label + key``)."""
    values = {key: read_tensor(scope, name) for key, name in names.items()}
    for key, value in values.items():
        check_finite(label + key, value)
    return values


#: The shard tensors of the AdamW states (float32), and those of them with one value a row.
ADAMW_KINDS = ("moment1", "moment2", "adam_steps")
ROW_KINDS = ("velocity_scale", "adam_steps")


def center_tensors(head) -> list[tuple[str, str]]:
    """``[(kind, variable name)]`` of a classifier's shard: its centers, their momentum and (int8
    momentum) its row scales, or their AdamW moments and step counts."""
    adamw = head.adamw_states.values() if head.adamw_states is not None else (None,) * 3
    return [("weight", head.weight.name)] + [
        (kind, value.name) for kind, value in (("velocity", head.velocity), ("velocity_scale", head.velocity_scale),
                                               *zip(ADAMW_KINDS, adamw))
        if value is not None]


def center_optimizer(head) -> str:
    """The optimizer whose state a head's shard holds: ``adamw``, ``momentum`` or ``sgd``."""
    return "adamw" if head.adamw_states is not None else "momentum" if head.velocity is not None else "sgd"


def tensor_dtype(head, kind: str) -> str:
    """The storage dtype of a shard tensor of ``kind`` (:func:`center_tensors`)."""
    return {"weight": head.center_dtype, "velocity": head.momentum_dtype}.get(kind, "float32")


def tensor_width(head, kind: str) -> int:
    """The row width of a shard tensor of ``kind``: 1 for the per-row ones, else the embedding size."""
    return 1 if kind in ROW_KINDS else head.embedding_size


def shard_bytes(heads) -> int:
    """Bytes of a rank's center shards in a checkpoint: its centers and their optimizer state."""
    return sum(head.num_local * tensor_width(head, kind) * np.dtype(HOST_DTYPES[tensor_dtype(head, kind)]).itemsize
               for head in heads for kind, _ in center_tensors(head))
