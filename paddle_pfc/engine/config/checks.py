"""Validation of a raw nested mapping against the schema: types, choices, ranges, cross-field rules.

Contract: :func:`validate` checks EVERYTHING and raises one :class:`ConfigError` listing every
problem, each as ``"dotted.key: problem"``; otherwise it returns the fully populated nested dict
(defaults filled in, ``data.image_size`` defaulted to ``model.input_size``). Types are strict:
``bool`` is not an int, a string is not a number; an int is accepted (and converted) where a float
is expected; floats must be finite. Unknown sections and keys get a "did you mean" when one is close.
"""
from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from paddle_pfc.backbones.spec import check_options
from paddle_pfc.backbones.table import find_row
from paddle_pfc.data.formats import data_format, either, formats_where
from paddle_pfc.utils.errors import UsageError
from paddle_pfc.utils.numbers import is_int

from .fields import Field
from .schema import SCHEMA


class ConfigError(UsageError):
    """Invalid configuration.  ``errors`` holds one ``"dotted.key: problem"`` line per problem."""

    def __init__(self, errors: str | Sequence[str]):
        self.errors = [errors] if isinstance(errors, str) else list(errors)
        if len(self.errors) == 1:
            msg = f"invalid config: {self.errors[0]}"
        else:
            msg = f"invalid config ({len(self.errors)} problems):\n  " + "\n  ".join(self.errors)
        super().__init__(msg)


def describe(v: Any) -> str:
    """``type (repr)`` of a value, the repr cut at 40 characters."""
    r = repr(v)
    return f"{type(v).__name__} ({r if len(r) <= 40 else r[:37] + '...'})"


def _suggest(name: str, candidates: Iterable[str]) -> str:
    m = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f"; did you mean {m[0]!r}?" if m else ""


def _suggest_or_owner(name: str, candidates: Iterable[str]) -> str:
    """A close candidate, else the ``section.name`` that holds ``name``."""
    hint = _suggest(name, candidates)
    owners = [s for s in SCHEMA if name in SCHEMA[s]]
    return hint or (f"; did you mean {owners[0] + '.' + name!r}?" if owners else "")


def unknown_key_msg(section: str, key: str) -> str:
    valid = SCHEMA[section]
    return f"{section}.{key}: unknown key{_suggest_or_owner(key, valid)} (valid: {', '.join(valid)})"


def unknown_section_msg(section: str) -> str:
    return f"{section}: unknown section{_suggest_or_owner(str(section), SCHEMA)} (valid: {', '.join(SCHEMA)})"


#: kind -> (type test, what the error says was expected).
_TYPES = {
    "int": (is_int, "int"),
    "float": (lambda v: is_int(v) or isinstance(v, float), "float"),
    "bool": (lambda v: isinstance(v, bool), "bool (true/false)"),
    "str": (lambda v: isinstance(v, str), "str"),
    "int_list": (lambda v: isinstance(v, (list, tuple)) and all(is_int(x) for x in v), "a list of ints"),
    "float_list": (lambda v: isinstance(v, (list, tuple)) and all(is_int(x) or isinstance(x, float) for x in v),
                   "a list of numbers"),
    "options": (lambda v: isinstance(v, Mapping) and all(isinstance(k, str) for k in v), "a mapping {name: value}"),
}
_VAL_SET_KEYS = ("name", "path")


def _coerce(key: str, f: Field, v: Any, errors: list[str]) -> Any:
    """Type-check/convert one value; returns the value, or None after appending an error."""
    if v is None:
        if not f.nullable:
            errors.append(f"{key}: must not be null")
        return None
    if f.kind == "val_sets":
        return _coerce_val_sets(key, v, errors)
    is_kind, expected = _TYPES[f.kind]
    if not is_kind(v):
        errors.append(f"{key}: expected {expected}, got {describe(v)}")
        return None
    if f.kind == "float":
        v = float(v)
        if not math.isfinite(v):
            errors.append(f"{key}: must be finite, got {v!r}")
            return None
    elif f.kind == "int_list":
        v = list(v)
    elif f.kind == "float_list":
        v = [float(x) for x in v]
    elif f.kind == "options":
        v = dict(v)
    choices = f.allowed()
    if choices is not None and v not in choices:
        errors.append(f"{key}: must be one of {', '.join(map(str, choices))}; got {v!r}"
                      + (_suggest(v, choices) if isinstance(v, str) else ""))
        return None
    problem = f.check(v) if f.check is not None else None
    if problem:
        errors.append(f"{key}: {problem}")
        return None
    return v


def _coerce_val_sets(key: str, v: Any, errors: list[str]) -> list[dict] | None:
    if not isinstance(v, (list, tuple)):
        errors.append(f"{key}: expected a list of {{name, path}} mappings, got {describe(v)}")
        return None
    out, names = [], set()
    for i, item in enumerate(v):
        k = f"{key}[{i}]"
        if not isinstance(item, Mapping):
            errors.append(f"{k}: expected a mapping with keys name, path; got {describe(item)}")
            continue
        problems = [f"{k}.{extra}: unknown key{_suggest(str(extra), _VAL_SET_KEYS)} (valid: name, path)"
                    for extra in item if extra not in _VAL_SET_KEYS]
        problems += [f"{k}.{req}: expected a non-empty str, got {describe(item.get(req))}"
                     for req in _VAL_SET_KEYS if not isinstance(item.get(req), str) or not item.get(req)]
        if problems:
            errors.extend(problems)
        elif item["name"] in names:
            errors.append(f"{k}.name: duplicate validation set name {item['name']!r}")
        else:
            names.add(item["name"])
            out.append({"name": item["name"], "path": item["path"]})
    return out


def _failed(errors: list[str]) -> set[str]:
    return {e.split(":", 1)[0] for e in errors}


def _cross_checks(c: dict, errors: list[str]) -> None:
    """Rules spanning several keys; only run on keys that passed their own checks."""
    _check_model_and_data(c, errors)
    _check_backbone(c["model"], errors)
    _check_run(c, errors)
    _check_schedule(c["train"], errors)


def _check_model_and_data(c: dict, errors: list[str]) -> None:
    """The input size, the data's root and kind, the centers' initialisation (``data.image_size``
    follows ``model.input_size`` when unset)."""
    m, d, v = c["model"], c["data"], c["validation"]
    if m["input_size"] is not None:
        if d["image_size"] is None and "data.image_size" not in _failed(errors):
            d["image_size"] = m["input_size"]
        elif d["image_size"] is not None and d["image_size"] != m["input_size"]:
            errors.append(f"data.image_size: must equal model.input_size "
                          f"(data.image_size={d['image_size']}, model.input_size={m['input_size']}); set "
                          "model.input_size only: data.image_size follows it")
    data = None if d["kind"] is None else data_format(d["kind"])  # None: data.kind failed its own check
    if data is not None and data.under_root and d["root"] is None and "data.root" not in _failed(errors):
        errors.append(f"data.root: required when data.kind is {d['kind']!r}")
    if v["synthetic_pairs"] and data is not None and not data.held_out_pairs:
        errors.append(f"validation.synthetic_pairs: only supported with data.kind "
                      f"{either(formats_where('held_out_pairs'))} (data.kind={d['kind']!r}); set it to 0")
    if c["classifier"]["center_init"] == "mean_embedding" and m["pretrained"] is None \
            and "model.pretrained" not in _failed(errors):
        errors.append("classifier.center_init: mean_embedding needs model.pretrained (the embeddings "
                      "of a random backbone carry no identity)")


def _check_backbone(m: dict, errors: list[str]) -> None:
    """``model.input_size`` against the backbone's input-size rule, ``model.options`` against the
    options of its row of the backbone table (``m["options"]`` gets the row's defaults filled in)."""
    failed = _failed(errors)
    row = find_row(m["backbone"]) if "model.backbone" not in failed else None
    if row is None:
        return
    side = m["input_size"]
    if "model.input_size" not in failed and side is not None and not (
            side >= row.input_multiple and side % row.input_multiple == 0):
        errors.append(f"model.input_size: must be {row.input_rule} (backbone {row.name}), got {side!r}")
    if "model.options" not in failed and (m["options"] is not None or row.options):
        try:
            m["options"] = check_options(row, m["options"], "model.options.")
        except UsageError as e:
            errors.append(str(e))


def _check_run(c: dict, errors: list[str]) -> None:
    """The loss against the kernels, resume against overwrite."""
    t = c["train"]
    _check_margin_name(c["loss"], errors)
    if c["loss"]["name"] == "adaface" and c["classifier"]["kernels"] == "fused":
        errors.append("classifier.kernels: the fused kernels cannot run loss.name 'adaface' (a margin a sample); "
                      "use auto or composite")
    _check_optimizer(c, errors)
    if t["resume"] and t["overwrite"]:
        errors.append(f"train.overwrite: deletes the checkpoints that train.resume={t['resume']!r} would "
                      "continue from; give one of them")


def _check_optimizer(c: dict, errors: list[str]) -> None:
    """The settings that only one optimizer takes, against ``train.optimizer``."""
    t, momentum_dtype = c["train"], c["classifier"]["momentum_dtype"]
    if t["optimizer"] == "adamw" and momentum_dtype is not None:
        errors.append(f"classifier.momentum_dtype: {momentum_dtype!r} with train.optimizer adamw, whose moments are "
                      "float32; leave classifier.momentum_dtype out")
    if t["optimizer"] == "adamw" and t["lr"] is None and "train.lr" not in _failed(errors):
        errors.append("train.lr: required with train.optimizer adamw (its default, 0.1 at global batch 512, is "
                      "SGD's; AdamW trains at about 1e-3)")
    if t["weight_decay_exempt"] not in (None, "none") and t["optimizer"] != "adamw":
        errors.append(f"train.weight_decay_exempt: {t['weight_decay_exempt']!r} needs train.optimizer adamw "
                      f"(train.optimizer {t['optimizer']!r} decays every parameter)")


#: what ``loss.name`` arcface / cosface asks of margin1..3: (margin1, margin2 > 0 or == 0, margin3 > 0 or == 0)
_NAMED_MARGINS = {"arcface": ("cos(theta + margin2)", (1.0, True, False)),
                  "cosface": ("cos(theta) - margin3", (1.0, False, True))}


def _check_margin_name(loss: dict, errors: list[str]) -> None:
    """``loss.name`` arcface / cosface agree with margin1..3 (a CosFace run must not train ArcFace's
    default margins); combined takes them as given."""
    if loss["name"] not in _NAMED_MARGINS or _failed(errors) & {"loss.margin1", "loss.margin2", "loss.margin3"}:
        return
    formula, (m1, m2_set, m3_set) = _NAMED_MARGINS[loss["name"]]
    if loss["margin1"] != m1 or (loss["margin2"] > 0) != m2_set or (loss["margin3"] > 0) != m3_set \
            or min(loss["margin2"], loss["margin3"]) < 0:
        errors.append(f"loss.name: {loss['name']!r} is the margin {formula}: it needs margin1 1, "
                      f"{'margin2 > 0 and margin3 0' if m2_set else 'margin2 0 and margin3 > 0'} (got margin1 "
                      f"{loss['margin1']}, margin2 {loss['margin2']}, margin3 {loss['margin3']}; "
                      f"{'ArcFace: margin2 0.5' if m2_set else 'CosFace: margin2 0, margin3 0.4'}); "
                      "loss.name combined takes margin1..3 as given")


def _check_schedule(t: dict, errors: list[str]) -> None:
    """The warm-up and the step schedule's epochs against ``train.epochs``."""
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


def validate(raw: Any) -> dict:
    """Validate a nested mapping against SCHEMA; returns the fully populated nested dict."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"<root>: expected a mapping of sections, got {describe(raw)}")
    errors = [unknown_section_msg(section) for section in raw if section not in SCHEMA]
    out: dict[str, dict] = {}
    for section, fields in SCHEMA.items():
        given = raw.get(section)
        if given is None:
            given = {}
        if not isinstance(given, Mapping):
            errors.append(f"{section}: expected a mapping, got {describe(given)}")
            given = {}
        errors += [unknown_key_msg(section, str(key)) for key in given if key not in fields]
        sec = out[section] = {}
        for key, f in fields.items():
            dotted = f"{section}.{key}"
            if key in given:
                sec[key] = _coerce(dotted, f, given[key], errors)
            else:
                sec[key] = f.default_value()
                if f.required:
                    errors.append(f"{dotted}: required (no default); set it in the config "
                                  f"or with -o {dotted}=...")
    _cross_checks(out, errors)
    if errors:
        raise ConfigError(errors)
    return out
