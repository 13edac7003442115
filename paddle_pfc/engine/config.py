"""YAML training configuration: schema, validation, overrides, read-only access.

Usage (PaddleClas / PLSC style)::

    parser = argparse.ArgumentParser()
    add_config_args(parser)                 # -c/--config PATH, -o/--override k.k=v (repeatable)
    cfg = config_from_args(parser.parse_args())
    cfg.train.lr, cfg.data.root, cfg.to_dict(), cfg.to_yaml()

Contract:
  * ``load_config`` validates EVERYTHING (unknown sections/keys, types, ranges,
    cross-field rules) before returning and raises a single :class:`ConfigError`
    listing every problem, each prefixed with its dotted key.
  * Types are strict: ``bool`` is not an int, a string is not a number; an int is
    accepted (and converted) where a float is expected.  Floats must be finite.
  * YAML is read with a ``yaml.SafeLoader`` subclass that additionally resolves
    exponent floats without a dot (``5e-4``; plain PyYAML would give the string
    ``"5e-4"``) and rejects duplicate keys.
  * A file may start from another: a top-level ``_base_: other.yaml`` (relative to the file)
    is read first and the file's keys are merged over it, section by section (a list
    replaces the base's list). Bases may have bases; a cycle is an error.
  * ``-o key=value``: ``value`` is parsed as YAML (``-o train.lr=0.2``,
    ``-o train.lr=null``, ``-o validation.sets=[{name: lfw, path: lfw.bin}]``).
    For string-typed keys a scalar that YAML reads as a number/bool is kept as the
    raw text (``-o train.output_dir=2024`` gives ``"2024"``).
  * The returned :class:`Config` is read-only; it is fully populated (defaults
    filled in, ``data.image_size`` defaulted to ``model.input_size``), so
    ``config_from_dict(cfg.to_dict())`` round-trips.
"""
from __future__ import annotations

import argparse
import difflib
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import yaml

from paddle_pfc.head.dtypes import DTYPE_BYTES

__all__ = [
    "BACKBONES", "DTYPES", "AMP_MODES", "DATA_KINDS", "LR_SCHEDULES", "SCHEMA",
    "ConfigError", "Config", "Field",
    "load_config", "config_from_dict", "config_from_args", "add_config_args",
    "default_config_dict", "dump_config", "resolve_lr", "resolve_validation_sets",
]

#: Backbone names accepted by ``model.backbone`` (read at validation time, so
#: extending this tuple is enough to allow a new backbone).
BACKBONES: tuple[str, ...] = (
    "iresnet18", "iresnet34", "iresnet50", "iresnet100", "iresnet200", "mobilefacenet",
)
DTYPES: tuple[str, ...] = tuple(DTYPE_BYTES)
AMP_MODES: tuple[str, ...] = ("none", "bf16", "fp16_o1", "fp16_o2")
DATA_KINDS: tuple[str, ...] = ("synthetic", "folder", "rec")
LR_SCHEDULES: tuple[str, ...] = ("polynomial", "cosine", "step")


class ConfigError(ValueError):
    """Invalid configuration.  ``errors`` holds one ``"dotted.key: problem"`` line per problem."""

    def __init__(self, errors: str | Sequence[str]):
        self.errors = [errors] if isinstance(errors, str) else list(errors)
        if len(self.errors) == 1:
            msg = f"invalid config: {self.errors[0]}"
        else:
            msg = f"invalid config ({len(self.errors)} problems):\n  " + "\n  ".join(self.errors)
        super().__init__(msg)


# ---------------------------------------------------------------------------
# Schema
# ---------------------------------------------------------------------------
_REQUIRED = object()


@dataclass(frozen=True)
class Field:
    """One config key.

    kind: ``int | float | bool | str | int_list | val_sets``; default: value used
    when absent (``_REQUIRED`` = must be given); nullable: ``None`` allowed;
    choices: allowed values (tuple, or a callable returning one); check: returns a
    problem description or None; doc: meaning of the key.
    """

    kind: str
    default: Any = _REQUIRED
    doc: str = ""
    nullable: bool = False
    choices: tuple | Callable[[], tuple] | None = None
    check: Callable[[Any], str | None] | None = None

    @property
    def required(self) -> bool:
        """True when the key has no default and must be given."""
        return self.default is _REQUIRED


def _ge(lo):
    return lambda v: None if v >= lo else f"must be >= {lo}, got {v!r}"


def _gt(lo):
    return lambda v: None if v > lo else f"must be > {lo}, got {v!r}"


def _in_co(lo, hi):  # [lo, hi)
    return lambda v: None if lo <= v < hi else f"must be in [{lo}, {hi}), got {v!r}"


def _in_oc(lo, hi):  # (lo, hi]
    return lambda v: None if lo < v <= hi else f"must be in ({lo}, {hi}], got {v!r}"


def _in_oo(lo, hi):  # (lo, hi)
    return lambda v: None if lo < v < hi else f"must be in ({lo}, {hi}), got {v!r}"


def _loss_scale(v):
    if not 1.0 <= v <= 2.0**24:
        return f"must be in [1, 2^24 = 16777216] (Paddle and torch start at 2^15-2^16), got {v!r}"
    return None


def _input_size(v):
    if v < 16 or v % 16:
        return f"must be a multiple of 16 and >= 16, got {v!r}"
    return None


def _backbones():
    return BACKBONES


SCHEMA: dict[str, dict[str, Field]] = {
    "model": {
        # Backbone architecture name, one of BACKBONES.
        "backbone": Field("str", "iresnet50", "backbone architecture", choices=_backbones),
        # Dimension of the face embedding (backbone output / class-center width).
        "embedding_size": Field("int", 512, "embedding dimension", check=_ge(1)),
        # Dropout before the embedding FC layer (insightface uses 0).
        "dropout": Field("float", 0.0, "dropout probability before the embedding layer",
                         check=_in_co(0.0, 1.0)),
        # Square input side in pixels; multiple of 16 (four stride-2 stages).
        "input_size": Field("int", 112, "input image side (pixels)", check=_input_size),
        # Fine-tuning: initialise the backbone from a checkpoint folder, a checkpoints root, a
        # best/ folder, an exported model folder or a .pdparams/.npz state dict (see
        # paddle_pfc/engine/pretrained.py); the class centers start fresh. Ignored when resuming.
        "pretrained": Field("str", None, "pretrained backbone to fine-tune from", nullable=True),
    },
    "loss": {
        # Combined margin logit: s * (cos(m1 * theta + m2) - m3).
        # ArcFace = (1.0, 0.5, 0.0); CosFace = (1.0, 0.0, 0.4).
        "margin1": Field("float", 1.0, "multiplicative angular margin m1", check=_gt(0.0)),
        "margin2": Field("float", 0.5, "additive angular margin m2 (ArcFace)"),
        "margin3": Field("float", 0.0, "additive cosine margin m3 (CosFace)"),
        # insightface uses 30-64; far larger values saturate the softmax (loss = s * margin
        # garbage), so values above 1024 are refused.
        "scale": Field("float", 64.0, "logit scale s", check=_in_oc(0.0, 1024.0)),
    },
    "classifier": {
        # Partial FC: fraction of class centers sampled per step (positives always kept).
        "sample_ratio": Field("float", 1.0, "Partial FC sampling ratio", check=_in_oc(0.0, 1.0)),
        # Operand dtype of the head's products (logits, softmax and loss stay float32).
        # bfloat16 on CPU and GPU; float16 on GPU only.
        "dtype": Field("str", "float32", "classifier product dtype", choices=DTYPES),
        # Storage dtype of the (sharded) class centers and their momentum; bfloat16 / float16
        # halve the memory per identity (the update itself is float32 arithmetic).
        "center_dtype": Field("str", "float32", "class-center storage dtype", choices=DTYPES),
        # Fine-tuning: random (fresh init) or mean_embedding (each center = the mean normalised
        # embedding of its class's images under the pretrained backbone; needs model.pretrained).
        "center_init": Field("str", "random", "class-center initialisation",
                             choices=("random", "mean_embedding")),
        # mean_embedding: images per class embedded (the first ones of each class).
        "center_init_images": Field("int", 16, "images per class for center_init", check=_ge(1)),
        # Road of the head (paddle_pfc.kernels): auto = fused kernels on GPU, composite on CPU;
        # fused on CPU runs the GPU path with emulated kernels; composite on GPU: block-wise head.
        "kernels": Field("str", "auto", "classifier kernels", choices=("auto", "fused", "composite")),
    },
    "data": {
        # synthetic: generated identities; folder: root/<class>/<img>; rec: MXNet RecordIO.
        "kind": Field("str", "synthetic", "dataset kind", choices=DATA_KINDS),
        # Dataset directory (train.rec/train.idx or class folders); also where the
        # validation .bin files live.  Required for folder/rec.
        "root": Field("str", None, "dataset root directory", nullable=True),
        # Number of identities (classifier rows).  Always required.
        "num_classes": Field("int", _REQUIRED, "number of identities", check=_ge(1)),
        # Synthetic only: images per identity (dataset = num_classes * samples_per_class).
        "samples_per_class": Field("int", 20, "synthetic images per identity", check=_ge(1)),
        # Image side fed to the model; null = model.input_size, otherwise must equal it.
        "image_size": Field("int", None, "image side (must equal model.input_size)",
                            nullable=True, check=_ge(1)),
        # DataLoader worker processes per rank (0 = load in the main process).
        "num_workers": Field("int", 2, "loader workers per rank", check=_ge(0)),
        # Random horizontal flip augmentation.
        "flip": Field("bool", True, "random horizontal flip"),
        # Skip undecodable images instead of failing.
        "skip_bad": Field("bool", False, "skip corrupt images"),
        # Seed of data shuffling / synthetic generation.
        "seed": Field("int", 0, "data seed"),
    },
    "train": {
        # Number of passes over the training set.
        "epochs": Field("int", 20, "training epochs", check=_ge(1)),
        # Samples per rank per step (global batch = batch_size * world_size).
        "batch_size": Field("int", 128, "per-rank batch size", check=_ge(1)),
        # Base learning rate; null = 0.1 * global_batch / 512 (see resolve_lr).
        "lr": Field("float", None, "base learning rate (null = 0.1*global_batch/512)",
                    nullable=True, check=_gt(0.0)),
        # LR decay after warmup: polynomial (insightface PolyScheduler), cosine, or step.
        "lr_schedule": Field("str", "polynomial", "lr schedule", choices=LR_SCHEDULES),
        # Exponent of the polynomial decay (insightface: 2).
        "poly_power": Field("float", 2.0, "polynomial decay power", check=_gt(0.0)),
        # Linear warmup from 0 to lr over this many epochs (fractional allowed).
        "warmup_epochs": Field("float", 0.0, "linear warmup epochs", check=_ge(0.0)),
        # step schedule: epochs at which lr is multiplied by lr_decay_factor.
        "decay_epochs": Field("int_list", [], "step-schedule decay epochs"),
        # step schedule: multiplicative factor at each decay epoch.
        "lr_decay_factor": Field("float", 0.1, "step-schedule decay factor", check=_in_oo(0.0, 1.0)),
        # SGD momentum.
        "momentum": Field("float", 0.9, "SGD momentum", check=_in_co(0.0, 1.0)),
        # L2 weight decay (backbone and class centers).
        "weight_decay": Field("float", 5e-4, "weight decay", check=_ge(0.0)),
        # Max global L2 norm of the BACKBONE gradient (arcface_torch clips to 5); null = off.
        "grad_clip": Field("float", 5.0, "backbone grad-norm clip", nullable=True, check=_gt(0.0)),
        # Backbone mixed precision (GPU): none, bf16 (autocast), fp16_o1 (autocast), fp16_o2
        # (float16 weights with float32 master weights).
        "amp": Field("str", "none", "backbone mixed precision mode", choices=AMP_MODES),
        # Dynamic loss scaling: auto = on with float16 (amp fp16_* or classifier.dtype float16).
        "loss_scaling": Field("str", "auto", "dynamic loss scaling", choices=("auto", "on", "off")),
        # Initial loss scale (then halved on overflow, doubled after 2000 good steps).
        # Paddle / torch start at 2^15 / 2^16; outside [1, 2^24] is refused (a scaled float16
        # gradient overflows at 65504, so a larger start only costs skipped steps).
        "init_loss_scaling": Field("float", 65536.0, "initial loss scale", check=_loss_scale),
        # Seed for parameter init / dropout.
        "seed": Field("int", 2048, "training seed"),
        # Log every N steps.
        "log_every": Field("int", 10, "log interval (steps)", check=_ge(1)),
        # Directory for logs, checkpoints and the echoed config.
        "output_dir": Field("str", "output", "output directory"),
        # Extra checkpoint every N steps; 0 = only at the end of each epoch.
        "checkpoint_every_steps": Field("int", 0, "checkpoint interval (steps)", check=_ge(0)),
        # Number of most recent checkpoints kept on disk.
        "keep_checkpoints": Field("int", 3, "checkpoints to keep", check=_ge(1)),
        # Checkpoint to resume from: a checkpoint folder, a checkpoints root (its newest
        # complete checkpoint), or "auto" = the newest complete checkpoint in
        # output_dir/checkpoints if there is one, else start fresh (for job scripts that may be
        # preempted and restarted); null = start fresh.
        "resume": Field("str", None, "checkpoint to resume from, or auto", nullable=True),
        # A fresh run (resume null) into an output_dir that already holds checkpoints is an
        # error unless this is true; then those checkpoints are deleted first.
        "overwrite": Field("bool", False, "delete existing checkpoints of output_dir on a fresh run"),
        # Stop with an error after this many consecutive skipped (non-finite) steps.
        "max_bad_steps": Field("int", 5, "consecutive non-finite steps before stopping", check=_ge(1)),
        # Seconds a rank waits for the others at a barrier (and NCCL's collective timeout).
        "collective_timeout": Field("float", 1800.0, "rank wait timeout (seconds)", check=_gt(0.0)),
        # Fine-tuning: the first N steps train the head alone (backbone weights, their momentum and
        # BatchNorm statistics are kept as they were).
        "freeze_backbone_steps": Field("int", 0, "steps training the head alone", check=_ge(0)),
        # Stop after this many optimizer steps (for tests); null = run all epochs.
        "max_steps": Field("int", None, "hard step limit", nullable=True, check=_ge(1)),
    },
    "validation": {
        # Verification sets: [{name, path}]; a relative path is resolved against
        # data.root (see resolve_validation_sets).  insightface: lfw/cfp_fp/agedb_30 .bin.
        "sets": Field("val_sets", [], "verification sets [{name, path}]"),
        # Validate every N steps (insightface: 2000); 0 = only at the end of each epoch.
        "every_steps": Field("int", 2000, "validation interval (steps)", check=_ge(0)),
        # Batch size for embedding extraction.
        "batch_size": Field("int", 128, "validation batch size", check=_ge(1)),
        # Folds of the verification protocol (insightface: 10).
        "nrof_folds": Field("int", 10, "verification folds", check=_ge(1)),
        # Synthetic data only: number of pairs drawn from held-out synthetic
        # identities to form a verification set (0 = none).
        "synthetic_pairs": Field("int", 0, "held-out synthetic verification pairs", check=_ge(0)),
    },
}

_VAL_SET_KEYS = ("name", "path")


# ---------------------------------------------------------------------------
# Read-only config object
# ---------------------------------------------------------------------------
class Config(Mapping):
    """Read-only nested mapping with attribute access (``cfg.train.lr``).

    Sections are ``Config``; lists are tuples.  ``to_dict()`` returns plain,
    mutable, YAML-serialisable dicts/lists.
    """

    __slots__ = ("_data", "_prefix")

    def __init__(self, data: Mapping, _prefix: str = ""):
        frozen = {}
        for k, v in data.items():
            frozen[k] = _freeze(v, f"{_prefix}{k}.")
        object.__setattr__(self, "_data", frozen)
        object.__setattr__(self, "_prefix", _prefix)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._data[name]
        except KeyError:
            raise AttributeError(f"config has no key {self._prefix + name!r}") from None

    def __setattr__(self, name, value):
        raise AttributeError("Config is read-only; use overrides (load_config/config_from_dict)")

    def __delattr__(self, name):
        raise AttributeError("Config is read-only")

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)

    def __reduce__(self):
        return (Config, (self.to_dict(), self._prefix))

    def __repr__(self):
        return f"Config({self.to_dict()!r})"

    def to_dict(self) -> dict:
        """Deep, mutable copy as plain dicts/lists."""
        return {k: _thaw(v) for k, v in self._data.items()}

    def to_yaml(self) -> str:
        """YAML text (section order preserved) that ``load_config`` reads back identically."""
        return yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=False)


def _freeze(v, prefix):
    if isinstance(v, Mapping) and not isinstance(v, Config):
        return Config(v, prefix)
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x, prefix) for x in v)
    return v


def _thaw(v):
    if isinstance(v, Config):
        return v.to_dict()
    if isinstance(v, tuple):
        return [_thaw(x) for x in v]
    return v


# ---------------------------------------------------------------------------
# YAML loading
# ---------------------------------------------------------------------------
class _Loader(yaml.SafeLoader):
    """SafeLoader + exponent floats without a dot (``5e-4``) + duplicate-key check."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)
            seen = set()
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    if key_node.value in seen:
                        raise ConfigError(f"{key_node.value}: duplicate key "
                                          f"(line {key_node.start_mark.line + 1})")
                    seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _yaml_load(text: str, source: str):
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader
    except yaml.YAMLError as e:
        raise ConfigError(f"{source}: invalid YAML: {e}") from None


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------
def _suggest(name: str, candidates: Iterable[str]) -> str:
    m = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f"; did you mean {m[0]!r}?" if m else ""


def _unknown_key_msg(section: str, key: str) -> str:
    valid = SCHEMA[section]
    hint = _suggest(key, valid)
    if not hint:
        owners = [s for s in SCHEMA if key in SCHEMA[s]]
        if owners:
            hint = f"; did you mean {owners[0] + '.' + key!r}?"
    return f"{section}.{key}: unknown key{hint} (valid: {', '.join(valid)})"


def _unknown_section_msg(section: str) -> str:
    hint = _suggest(str(section), SCHEMA)
    if not hint:
        owners = [s for s in SCHEMA if section in SCHEMA[s]]
        if owners:
            hint = f"; did you mean {owners[0] + '.' + str(section)!r}?"
    return f"{section}: unknown section{hint} (valid: {', '.join(SCHEMA)})"


def _describe(v) -> str:
    r = repr(v)
    return f"{type(v).__name__} ({r if len(r) <= 40 else r[:37] + '...'})"


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _coerce(key: str, f: Field, v, errors: list[str]):
    """Type-check/convert one value; returns the value or appends an error."""
    if v is None:
        if f.nullable:
            return None
        errors.append(f"{key}: must not be null")
        return None
    kind = f.kind
    if kind == "int":
        if not _is_int(v):
            errors.append(f"{key}: expected int, got {_describe(v)}")
            return None
    elif kind == "float":
        if not (_is_int(v) or isinstance(v, float)):
            errors.append(f"{key}: expected float, got {_describe(v)}")
            return None
        v = float(v)
        if not math.isfinite(v):
            errors.append(f"{key}: must be finite, got {v!r}")
            return None
    elif kind == "bool":
        if not isinstance(v, bool):
            errors.append(f"{key}: expected bool (true/false), got {_describe(v)}")
            return None
    elif kind == "str":
        if not isinstance(v, str):
            errors.append(f"{key}: expected str, got {_describe(v)}")
            return None
    elif kind == "int_list":
        if not isinstance(v, (list, tuple)) or not all(_is_int(x) for x in v):
            errors.append(f"{key}: expected a list of ints, got {_describe(v)}")
            return None
        v = list(v)
    elif kind == "val_sets":
        return _coerce_val_sets(key, v, errors)
    else:  # pragma: no cover - schema bug
        raise AssertionError(kind)
    choices = f.choices() if callable(f.choices) else f.choices
    if choices is not None and v not in choices:
        errors.append(f"{key}: must be one of {', '.join(map(str, choices))}; got {v!r}"
                      + (_suggest(v, choices) if isinstance(v, str) else ""))
        return None
    if f.check is not None:
        problem = f.check(v)
        if problem:
            errors.append(f"{key}: {problem}")
            return None
    return v


def _coerce_val_sets(key, v, errors):
    if not isinstance(v, (list, tuple)):
        errors.append(f"{key}: expected a list of {{name, path}} mappings, got {_describe(v)}")
        return None
    out, names = [], set()
    for i, item in enumerate(v):
        k = f"{key}[{i}]"
        if not isinstance(item, Mapping):
            errors.append(f"{k}: expected a mapping with keys name, path; got {_describe(item)}")
            continue
        bad = False
        for extra in item:
            if extra not in _VAL_SET_KEYS:
                errors.append(f"{k}.{extra}: unknown key{_suggest(str(extra), _VAL_SET_KEYS)}"
                              f" (valid: name, path)")
                bad = True
        for req in _VAL_SET_KEYS:
            val = item.get(req)
            if not isinstance(val, str) or not val:
                errors.append(f"{k}.{req}: expected a non-empty str, got {_describe(val)}")
                bad = True
        if bad:
            continue
        if item["name"] in names:
            errors.append(f"{k}.name: duplicate validation set name {item['name']!r}")
            continue
        names.add(item["name"])
        out.append({"name": item["name"], "path": item["path"]})
    return out


def _cross_checks(c: dict, errors: list[str]) -> None:
    """Rules spanning several keys; only run on keys that passed their own checks."""
    m, d, t, v = c["model"], c["data"], c["train"], c["validation"]
    if m["input_size"] is not None:
        if d["image_size"] is None and "data.image_size" not in _failed(errors):
            d["image_size"] = m["input_size"]
        elif d["image_size"] is not None and d["image_size"] != m["input_size"]:
            errors.append(f"data.image_size: must equal model.input_size "
                          f"(data.image_size={d['image_size']}, model.input_size={m['input_size']})")
    if d["kind"] in ("folder", "rec") and d["root"] is None and "data.root" not in _failed(errors):
        errors.append(f"data.root: required when data.kind is {d['kind']!r}")
    if v["synthetic_pairs"] and d["kind"] not in (None, "synthetic"):
        errors.append(f"validation.synthetic_pairs: only supported with data.kind 'synthetic' "
                      f"(data.kind={d['kind']!r}); set it to 0")
    if c["classifier"]["center_init"] == "mean_embedding" and m["pretrained"] is None \
            and "model.pretrained" not in _failed(errors):
        errors.append("classifier.center_init: mean_embedding needs model.pretrained (the embeddings "
                      "of a random backbone carry no identity)")
    epochs = t["epochs"]
    if epochs is not None and t["warmup_epochs"] is not None and t["warmup_epochs"] >= epochs:
        errors.append(f"train.warmup_epochs: must be < train.epochs "
                      f"({t['warmup_epochs']} >= {epochs})")
    if t["lr_schedule"] == "step" and t["decay_epochs"] is not None:
        de = t["decay_epochs"]
        if not de:
            errors.append("train.decay_epochs: must be non-empty when train.lr_schedule is 'step'")
        elif any(b <= a for a, b in zip(de, de[1:])):
            errors.append(f"train.decay_epochs: must be strictly increasing, got {de}")
        elif epochs is not None and (de[0] < 1 or de[-1] >= epochs):
            errors.append(f"train.decay_epochs: each must be in [1, train.epochs={epochs}), got {de}")


def _failed(errors: list[str]) -> set[str]:
    return {e.split(":", 1)[0] for e in errors}


def _validate(raw: Any) -> dict:
    """Validate a nested dict against SCHEMA; returns the fully populated dict."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"<root>: expected a mapping of sections, got {_describe(raw)}")
    errors: list[str] = []
    for section in raw:
        if section not in SCHEMA:
            errors.append(_unknown_section_msg(section))
    out: dict[str, dict] = {}
    for section, fields in SCHEMA.items():
        given = raw.get(section)
        if given is None:
            given = {}
        if not isinstance(given, Mapping):
            errors.append(f"{section}: expected a mapping, got {_describe(given)}")
            given = {}
        for key in given:
            if key not in fields:
                errors.append(_unknown_key_msg(section, str(key)))
        sec = {}
        for key, f in fields.items():
            dotted = f"{section}.{key}"
            if key in given:
                sec[key] = _coerce(dotted, f, given[key], errors)
            elif f.default is _REQUIRED:
                errors.append(f"{dotted}: required (no default); set it in the config "
                              f"or with -o {dotted}=...")
                sec[key] = None
            else:
                default = f.default
                sec[key] = list(default) if isinstance(default, list) else default
        out[section] = sec
    _cross_checks(out, errors)
    if errors:
        raise ConfigError(errors)
    return out


# ---------------------------------------------------------------------------
# Overrides
# ---------------------------------------------------------------------------
def _apply_override(raw: dict, override: str) -> None:
    if not isinstance(override, str) or "=" not in override:
        raise ConfigError(f"{override}: override must look like 'section.key=value'")
    dotted, text = override.split("=", 1)
    dotted = dotted.strip()
    parts = dotted.split(".")
    if not dotted or any(not p for p in parts):
        raise ConfigError(f"{dotted or '<empty>'}: malformed override key in {override!r}")
    section = parts[0]
    if section not in SCHEMA:
        raise ConfigError(_unknown_section_msg(section))
    value = _yaml_load(text, dotted) if text.strip() else None
    sec = raw.get(section)
    if not isinstance(sec, dict):
        sec = {} if sec is None else sec
        raw[section] = sec
    if len(parts) == 1:  # whole-section override: merge a mapping
        if not isinstance(value, Mapping):
            raise ConfigError(f"{section}: a section override needs a mapping value, "
                              f"got {_describe(value)}")
        if not isinstance(sec, dict):
            raise ConfigError(f"{section}: expected a mapping, got {_describe(sec)}")
        sec.update(value)
        return
    key = parts[1]
    if key not in SCHEMA[section]:
        raise ConfigError(_unknown_key_msg(section, key))
    if len(parts) > 2:
        raise ConfigError(f"{section}.{key}: cannot override inside this value "
                          f"({dotted!r}); give the whole value, e.g. -o {section}.{key}=[...]")
    f = SCHEMA[section][key]
    if f.kind == "str" and isinstance(value, (bool, int, float)):
        value = text.strip()  # keep e.g. '2024' as a string for str keys
    if not isinstance(sec, dict):
        raise ConfigError(f"{section}: expected a mapping, got {_describe(sec)}")
    sec[key] = value


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------
def default_config_dict() -> dict:
    """Schema defaults as a nested dict (required keys are ``None``)."""
    return {s: {k: (None if f.default is _REQUIRED else
                    (list(f.default) if isinstance(f.default, list) else f.default))
                for k, f in fields.items()}
            for s, fields in SCHEMA.items()}


def config_from_dict(data: Mapping | None, overrides: Sequence[str] = ()) -> Config:
    """Validate ``data`` (e.g. a checkpoint's saved ``cfg.to_dict()``) plus overrides."""
    raw = _deep_copy(data) if data is not None else {}
    if not isinstance(raw, dict):
        raise ConfigError(f"<root>: expected a mapping of sections, got {_describe(raw)}")
    for ov in overrides or ():
        _apply_override(raw, ov)
    return Config(_validate(raw))


def load_config(path: str | os.PathLike | None, overrides: Sequence[str] = ()) -> Config:
    """Load YAML ``path`` (or only defaults if None), apply ``dotted.key=value``
    overrides in order, validate everything, and return a read-only Config.

    Raises:
        ConfigError: unreadable/invalid file, bad override syntax, unknown
            section/key (with suggestion), wrong type, out-of-range value, or a
            violated cross-field rule; the message names every offending key.
    """
    raw: Any = _read_with_bases(path, ()) if path is not None else {}
    return config_from_dict(raw, overrides)


BASE_KEY = "_base_"


def _merged(base: dict, delta: dict) -> dict:
    """``delta`` over ``base``: sections merge key by key; any other value (lists too) replaces."""
    out = dict(base)
    for key, value in delta.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def _read_with_bases(path: str | os.PathLike, chain: tuple[str, ...]) -> Any:
    """The raw mapping of YAML ``path``; a top-level ``_base_: FILE`` (relative to ``path``'s
    folder) is read first, recursively, and ``path``'s own keys are merged over it."""
    real = os.path.realpath(path)
    if real in chain:
        raise ConfigError(f"{path}: {BASE_KEY} cycle: " + " -> ".join([*chain, real]))
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as e:
        where = f"{chain[-1]}: {BASE_KEY}: " if chain else ""
        raise ConfigError(f"{where}{path}: cannot read config file ({e.strerror or e})") from None
    raw = _yaml_load(text, str(path))
    if raw is None:
        return {}
    if not isinstance(raw, dict) or BASE_KEY not in raw:
        return raw
    base = raw.pop(BASE_KEY)
    if not isinstance(base, str) or not base:
        raise ConfigError(f"{path}: {BASE_KEY} must be the path of a config file, got {_describe(base)}")
    base_path = os.path.join(os.path.dirname(os.path.abspath(path)), os.path.expanduser(base))
    base_raw = _read_with_bases(base_path, (*chain, real))
    if not isinstance(base_raw, dict):
        raise ConfigError(f"{base_path}: expected a mapping of sections, got {_describe(base_raw)}")
    return _merged(base_raw, raw)


def add_config_args(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``-c/--config PATH`` and repeatable ``-o/--override KEY=VALUE`` (dest ``overrides``)."""
    parser.add_argument("-c", "--config", default=None, metavar="PATH",
                        help="YAML config file (default: schema defaults only)")
    parser.add_argument("-o", "--override", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE",
                        help="override a config value, e.g. -o train.lr=0.2 (repeatable; "
                             "VALUE is parsed as YAML)")
    return parser


def config_from_args(args: argparse.Namespace) -> Config:
    """``load_config(args.config, args.overrides)`` for a parser set up by :func:`add_config_args`."""
    return load_config(args.config, getattr(args, "overrides", None) or [])


def dump_config(cfg: Config, path: str | os.PathLike) -> None:
    """Write ``cfg`` as YAML to ``path`` (readable back with :func:`load_config`)."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(cfg.to_yaml())


def resolve_lr(cfg: Config, world_size: int) -> float:
    """Base learning rate: ``cfg.train.lr`` if set, else ``0.1 * global_batch / 512``
    with ``global_batch = cfg.train.batch_size * world_size``.

    Gradient-scale convention: the trainer's gradient is the exact gradient of the
    MEAN loss over the global batch (each rank's local-mean gradient averaged over
    ranks, as DDP does in arcface_torch), so this is insightface's rule unchanged
    (e.g. 8 GPUs x 128 -> 0.2, as in its ms1mv3_r50 config).
    """
    if isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1:
        raise ValueError(f"world_size must be an int >= 1, got {world_size!r}")
    if cfg.train.lr is not None:
        return float(cfg.train.lr)
    return 0.1 * cfg.train.batch_size * world_size / 512.0


def resolve_validation_sets(cfg: Config) -> list[tuple[str, str]]:
    """``[(name, path)]`` of ``validation.sets``; relative paths are joined to ``data.root``
    (left relative to the working directory when ``data.root`` is null)."""
    out = []
    for s in cfg.validation.sets:
        p = os.path.expanduser(s.path)
        if not os.path.isabs(p) and cfg.data.root is not None:
            p = os.path.join(os.path.expanduser(cfg.data.root), p)
        out.append((s.name, p))
    return out


def _deep_copy(v):
    if isinstance(v, Config):
        return v.to_dict()
    if isinstance(v, Mapping):
        return {k: _deep_copy(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_deep_copy(x) for x in v]
    return v
