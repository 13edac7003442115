"""Loading a checkpoint into a rank's programs: strict about what it holds, verified file by file,
center shards resharded to this run's split and read straight into the tensors' memory."""
from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from paddle_pfc.engine.checkpoint.common import CheckpointError, CheckpointTarget
from paddle_pfc.engine.checkpoint.files import FileCheck, present
from paddle_pfc.engine.checkpoint.folders import read_meta, resolve_checkpoint
from paddle_pfc.engine.checkpoint.shards import read_rows_into, reshard_rows
from paddle_pfc.engine.checkpoint.states import check_loaded_state, read_state
from paddle_pfc.engine.checkpoint.tensors import (
    center_optimizer,
    center_tensors,
    read_tensor,
    tensor_dtype,
    tensor_view,
    tensor_width,
    write_tensor,
)
from paddle_pfc.head.dtypes import HOST_DTYPES
from paddle_pfc.head.geometry import class_split

#: State that may be present on one side only: the loss scale and its counters (turning loss
#: scaling on starts from ``init_loss_scaling``; turning it off drops them).
OPTIONAL_STATE_PREFIX = "loss_scaling@"


def _check_same(what: str, saved, expected) -> None:
    if saved != expected:
        raise CheckpointError(f"checkpoint {what} is {saved!r}, this run has {expected!r}")


def _assign_strict(scope, saved: dict[str, np.ndarray], expected: dict[str, str], kind: str, place) -> None:
    """Write ``saved[key]`` into variable ``expected[key]`` for every key; both sets must match
    (except the optional loss-scaling state)."""
    optional = {k for k in set(saved) ^ set(expected) if k.startswith(OPTIONAL_STATE_PREFIX)}
    saved = {k: v for k, v in saved.items() if k not in optional}
    expected = {k: v for k, v in expected.items() if k not in optional}
    missing = sorted(set(expected) - set(saved))
    unexpected = sorted(set(saved) - set(expected))
    if missing:
        raise CheckpointError(f"{kind}: tensor {missing[0]!r} missing from the checkpoint"
                              + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
    if unexpected:
        raise CheckpointError(f"{kind}: unexpected tensor {unexpected[0]!r} in the checkpoint"
                              + (f" (and {len(unexpected) - 1} more)" if len(unexpected) > 1 else ""))
    for key, name in expected.items():
        current = read_tensor(scope, name)
        value = np.asarray(saved[key])
        if value.shape != current.shape or value.dtype != current.dtype:
            raise CheckpointError(f"{kind}: tensor {key!r} has shape {list(value.shape)} {value.dtype} in "
                                  f"the checkpoint, the program has {list(current.shape)} {current.dtype}")
    for key, name in expected.items():
        write_tensor(scope, name, saved[key], place)


def _load_shard(path: Path, meta: dict, target: CheckpointTarget, index: int, kind: str, name: str,
                check: Callable[[Path], Path]) -> None:
    """This rank's rows of head ``index``'s ``kind`` into variable ``name``: into its memory, or,
    where it offers no view of it (a GPU tensor), through a host copy set into it."""
    head = target.heads[index]
    start, count = class_split(head.num_classes, head.world_size, head.rank)
    width, dtype = tensor_width(head, kind), tensor_dtype(head, kind)
    rows = tensor_view(target.scope, name)
    if rows is None:
        write_tensor(target.scope, name, reshard_rows(path, index, kind, meta["world_size"], start, count, width,
                                                      dtype, check, num_classes=head.num_classes), target.place)
        return
    if rows.shape != (count, width) or rows.dtype != HOST_DTYPES[dtype]:
        raise CheckpointError(f"class centers {name} ({kind}) of this program are {list(rows.shape)} {rows.dtype}, "
                              f"its classifier's split needs {[count, width]} {HOST_DTYPES[dtype]}")
    read_rows_into(rows, path, index, kind, meta["world_size"], start, dtype, check, num_classes=head.num_classes)


def load_checkpoint(path: str | Path, target: CheckpointTarget, expect: dict, verify: bool = True) -> dict:
    """Load a checkpoint (folder or root) into ``target``; return its meta.

    ``expect``: fields that must match (num_classes, embedding_size, backbone, ...). ``verify``:
    check each file read against its recorded checksum (off only for a checkpoint that
    ``verify_checkpoint`` has just checked). Loaded tensors are checked either way
    (:func:`check_loaded_state`; center rows as they are read, naming their shard file). After an
    error ``target`` is partly loaded: it must not train on.
    """
    scope, place, heads = target.scope, target.place, target.heads
    path = resolve_checkpoint(path)
    meta = read_meta(path)
    for key, value in expect.items():
        _check_same(key, meta.get(key), value)
    _check_same("number of classifiers", meta.get("num_heads"), len(heads))
    check = FileCheck(path, meta, enabled=verify)
    backbone = read_state(check, meta, "backbone", expected=set(target.backbone_names))
    check_loaded_state(path, backbone, "backbone")
    states = read_state(check, meta, "states")
    check_loaded_state(path, states, "optimizer state")
    for index, head in enumerate(heads):
        _check_momentum_dtype(path, index, head, check)
    _assign_strict(scope, backbone, dict(target.backbone_names), "backbone", place)
    _assign_strict(scope, states, {n: n for n in target.state_names}, "optimizer state", place)
    for index, head in enumerate(heads):
        for kind, name in center_tensors(head):
            _load_shard(path, meta, target, index, kind, name, check)
    return meta


def _check_momentum_dtype(path: Path, index: int, head, check: Callable[[Path], None]) -> None:
    """:class:`CheckpointError` when head ``index``'s centers were saved with another optimizer's
    state than this run's (``train.optimizer``), or its saved momentum is int8 and this run's is not,
    or the other way round (a float momentum converts between float dtypes; int8 codes do not)."""
    info_path = present(path / "centers" / f"head{index}.rank0.json", check)
    try:
        info = json.loads(info_path.read_text())
        saved = info.get("momentum_dtype", info["center_dtype"]) if info["has_velocity"] else None
        optimizer = info.get("optimizer", "momentum" if info["has_velocity"] else "sgd")
    except (ValueError, KeyError, TypeError) as exc:
        raise CheckpointError(f"checkpoint file {info_path} is corrupt: {type(exc).__name__}: {exc}") from exc
    if optimizer != center_optimizer(head):
        raise CheckpointError(
            f"checkpoint {path}: the class centers of head{index} were trained with train.optimizer {optimizer} "
            f"(its state is saved), this run's is {center_optimizer(head)}; resume with train.optimizer={optimizer}, "
            "or start a new run from its backbone (model.pretrained)")
    if head.velocity is None:
        return
    if saved is not None and (saved == "int8") != (head.momentum_dtype == "int8"):
        raise CheckpointError(
            f"checkpoint {path}: the class centers' momentum of head{index} is stored as {saved}, this run's "
            f"classifier.momentum_dtype is {head.momentum_dtype}; resume with classifier.momentum_dtype={saved}")


def load_backbone_state(path: str | Path) -> tuple[dict, dict[str, np.ndarray]]:
    """``(config dict, {structured name: ndarray})`` of a checkpoint (or ``best/``) folder, its
    file verified and its tensors checked (see the package doc)."""
    path = resolve_checkpoint(path)
    meta = read_meta(path)
    state = read_state(FileCheck(path, meta), meta, "backbone")
    check_loaded_state(path, state, "backbone")
    return meta["config"], state


def model_from_checkpoint(ckpt_dir) -> tuple[dict, dict[str, np.ndarray]]:
    """``(model_args, state)`` of a training checkpoint (:func:`load_backbone_state`):
    ``model_args`` = ``{"backbone", "embedding_size", "input_size", "dropout"}`` from its config's
    ``model`` section, plus ``"options"`` when the section holds non-empty ones (a missing key is a
    ``ValueError`` naming the checkpoint); :meth:`ModelSpec.from_description
    <paddle_pfc.backbones.spec.ModelSpec.from_description>` reads it."""
    config, state = load_backbone_state(os.fspath(ckpt_dir))
    model = config.get("model", {}) if isinstance(config, Mapping) else {}
    missing = [k for k in ("backbone", "embedding_size", "input_size") if k not in model]
    if missing:
        raise ValueError(f"{ckpt_dir}: checkpoint config lacks model.{', model.'.join(missing)}")
    args = {"backbone": model["backbone"], "embedding_size": int(model["embedding_size"]),
            "input_size": model["input_size"], "dropout": float(model.get("dropout", 0.0) or 0.0)}
    if model.get("options"):
        args["options"] = dict(model["options"])
    return args, state


def eval_program_from_checkpoint(ckpt_dir, **kwargs):
    """``(program, state)``: the backbone of a training checkpoint as an
    :class:`~paddle_pfc.deploy.export.EvalProgram` (``kwargs``: its ``dtype``, ``native``, ...) and
    its state (:func:`model_from_checkpoint`)."""
    from paddle_pfc.backbones.spec import ModelSpec
    from paddle_pfc.deploy.export import EvalProgram

    model, state = model_from_checkpoint(ckpt_dir)
    return EvalProgram.from_spec(ModelSpec.from_description(model), state, **kwargs), state
