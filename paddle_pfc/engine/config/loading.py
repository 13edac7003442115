"""Reading configs: YAML files with ``_base_:`` inheritance, ``-o key=value`` overrides, argparse glue.

Contract:
  * YAML is read with a ``yaml.SafeLoader`` subclass that also resolves exponent floats without a
    dot (``5e-4``; plain PyYAML gives the string ``"5e-4"``) and rejects duplicate keys.
  * A top-level ``_base_: other.yaml`` (relative to the file) is read first and the file's keys
    are merged over it, section by section (a list replaces the base's list). Bases may have
    bases; a cycle is an error.
  * ``-o key=value``: ``value`` is parsed as YAML (``-o train.lr=0.2``, ``-o train.lr=null``,
    ``-o validation.sets=[{name: lfw, path: lfw.bin}]``, ``-o train={epochs: 3}`` merges into the
    section). For string-typed keys a scalar that YAML reads as a number/bool is kept as the raw
    text (``-o train.output_dir=2024`` gives ``"2024"``). Overrides apply in order.
  * Every entry point validates everything (:func:`.checks.validate`) and raises
    :class:`ConfigError` naming every offending key.
"""
from __future__ import annotations

import argparse
import os
import re
import stat
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from paddle_pfc.utils.errors import UsageError

from .checks import ConfigError, describe, unknown_key_msg, unknown_section_msg, validate
from .schema import SCHEMA, Config

BASE_KEY = "_base_"


#: Aliases (``*name``) one YAML text may use, and values it may expand to: a config needs few; a
#: "billion laughs" text nests aliases of aliases to expand a few lines into billions of values.
MAX_ALIASES = 100
MAX_VALUES = 100_000
#: Bytes a config file may hold: the shipped recipes are ~2 KB.
MAX_CONFIG_BYTES = 1 << 20


class _TooManyAliases(UsageError, yaml.YAMLError):
    """More aliases than :data:`MAX_ALIASES` (raised while composing; reported naming the file)."""


class _Loader(yaml.SafeLoader):
    """SafeLoader + exponent floats without a dot (``5e-4``) + duplicate-key check + at most
    :data:`MAX_ALIASES` aliases."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self.aliases = getattr(self, "aliases", 0) + 1
            if self.aliases > MAX_ALIASES:
                raise _TooManyAliases(f"more than {MAX_ALIASES} aliases (*name); a config needs few")
        return super().compose_node(parent, index)

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


def _check_expansion(value: Any, source: str) -> None:
    """``value`` (loaded YAML) must be a tree of at most :data:`MAX_VALUES` values once its aliases
    are expanded, none holding itself; :class:`ConfigError` naming ``source`` otherwise."""
    count, stack = 0, [(value, ())]
    while stack:
        item, ancestors = stack.pop()
        count += 1
        if count > MAX_VALUES:
            raise ConfigError(f"{source}: expands to more than {MAX_VALUES:,} values (aliases of aliases: "
                              "a YAML bomb?); a config holds far fewer")
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if id(child) in ancestors or child is item:
                    raise ConfigError(f"{source}: a value that contains itself (a recursive alias)")
                stack.append((child, (*ancestors, id(item))))
            else:
                count += 1


def _yaml_load(text: str, source: str) -> Any:
    try:
        value = yaml.load(text, Loader=_Loader)  # _Loader is a SafeLoader
    except _TooManyAliases as e:
        raise ConfigError(f"{source}: {e}") from None
    except RecursionError:
        raise ConfigError(f"{source}: nested too deeply to be a config") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{source}: invalid YAML: {e}") from None
    except (ValueError, TypeError, AttributeError, OverflowError) as e:  # a tag PyYAML cannot construct
        raise ConfigError(f"{source}: invalid YAML: a value cannot be read ({type(e).__name__}: {e})") from None
    _check_expansion(value, source)
    return value


def _merged(base: dict, delta: dict) -> dict:
    """``delta`` over ``base``: sections merge key by key; any other value (lists too) replaces."""
    out = dict(base)
    for key, value in delta.items():
        nested = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = _merged(out[key], value) if nested else value
    return out


def _read_with_bases(path: str | os.PathLike, chain: tuple[str, ...]) -> Any:
    """The raw mapping of YAML ``path``; a top-level ``_base_: FILE`` (relative to ``path``'s
    folder) is read first, recursively, and ``path``'s own keys are merged over it."""
    real = os.path.realpath(path)
    if real in chain:
        raise ConfigError(f"{path}: {BASE_KEY} cycle: " + " -> ".join([*chain, real]))
    where = f"{chain[-1]}: {BASE_KEY}: " if chain else ""
    try:
        with open(path, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ConfigError(f"{where}{path}: not a regular file (a device, FIFO or folder is no config)")
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as e:
        raise ConfigError(f"{where}{path}: cannot read config file ({e.strerror or e})") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{where}{path}: more than {MAX_CONFIG_BYTES:,} bytes; a config holds a few thousand")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{where}{path}: not UTF-8 text (byte {e.start})") from None
    raw = _yaml_load(text, str(path))
    if raw is None:
        return {}
    if not isinstance(raw, dict) or BASE_KEY not in raw:
        return raw
    base = raw.pop(BASE_KEY)
    if not isinstance(base, str) or not base:
        raise ConfigError(f"{path}: {BASE_KEY} must be the path of a config file, got {describe(base)}")
    base_path = os.path.join(os.path.dirname(os.path.abspath(path)), os.path.expanduser(base))
    base_raw = _read_with_bases(base_path, (*chain, real))
    if not isinstance(base_raw, dict):
        raise ConfigError(f"{base_path}: expected a mapping of sections, got {describe(base_raw)}")
    return _merged(base_raw, raw)


def _apply_override(raw: dict, override: str) -> None:
    """Set ``section.key=value`` (or merge ``section={...}``) into ``raw``, checking the key."""
    parts, text = _override_parts(override)
    section = parts[0]
    value = _yaml_load(text, ".".join(parts))
    sec = raw.get(section)
    if sec is None:
        sec = raw[section] = {}
    if len(parts) == 3 and isinstance(sec, dict) and _is_options(section, parts[1]):
        _set_option(sec, parts, value)
        return
    if len(parts) > 1:
        value = _key_value(parts, value, text)
    elif not isinstance(value, Mapping):
        raise ConfigError(f"{section}: a section override needs a mapping value, got {describe(value)}")
    if not isinstance(sec, dict):
        raise ConfigError(f"{section}: expected a mapping, got {describe(sec)}")
    if len(parts) > 1:
        sec[parts[1]] = value
    else:
        sec.update(value)


def _is_options(section: str, key: str) -> bool:
    field = SCHEMA[section].get(key)
    return field is not None and field.kind == "options"


def _set_option(sec: dict, parts: list[str], value: Any) -> None:
    """``section.key.name=value`` of a mapping setting (``model.options``): that one entry set, the
    others kept (a null mapping starts empty)."""
    current = sec.get(parts[1]) or {}
    if not isinstance(current, Mapping):
        raise ConfigError(f"{parts[0]}.{parts[1]}: expected a mapping, got {describe(current)}")
    sec[parts[1]] = {**current, parts[2]: value}


def _override_parts(override: str) -> tuple[list[str], str]:
    """``(["section", "key"], value text)`` of ``section.key=value``, the section known and the
    value not empty."""
    if not isinstance(override, str) or "=" not in override:
        raise ConfigError(f"{override}: override must look like 'section.key=value'")
    dotted, text = override.split("=", 1)
    dotted = dotted.strip()
    parts = dotted.split(".")
    if not dotted or any(not p for p in parts):
        raise ConfigError(f"{dotted or '<empty>'}: malformed override key in {override!r}")
    if parts[0] not in SCHEMA:
        raise ConfigError(unknown_section_msg(parts[0]))
    if not text.strip():  # e.g. -o model.pretrained=$UNSET_VARIABLE: not silently null
        raise ConfigError(f"{dotted}: empty value in override {override!r} (write {dotted}=null for none)")
    return parts, text


def _key_value(parts: list[str], value: Any, text: str) -> Any:
    """The value of ``section.key`` (the key checked; a str key keeps a number's text as written)."""
    section, key = parts[0], parts[1]
    if key not in SCHEMA[section]:
        raise ConfigError(unknown_key_msg(section, key))
    if len(parts) > 2:
        raise ConfigError(f"{section}.{key}: cannot override inside this value "
                          f"({'.'.join(parts)!r}); give the whole value, e.g. -o {section}.{key}=[...]")
    if SCHEMA[section][key].kind == "str" and isinstance(value, (bool, int, float)):
        return text.strip()  # keep e.g. '2024' as a string for str keys
    return value


def _plain(v: Any) -> Any:
    """Deep copy as plain dicts/lists (a Config or its sections included: they are Mappings)."""
    if isinstance(v, Mapping):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def default_config_dict() -> dict:
    """Schema defaults as a nested dict (required keys are ``None``)."""
    return {s: {k: f.default_value() for k, f in fields.items()} for s, fields in SCHEMA.items()}


def config_from_dict(data: Mapping | None, overrides: Sequence[str] = ()) -> Config:
    """Validate ``data`` (e.g. a checkpoint's saved ``cfg.to_dict()``) plus overrides."""
    raw = _plain(data) if data is not None else {}
    if not isinstance(raw, dict):
        raise ConfigError(f"<root>: expected a mapping of sections, got {describe(raw)}")
    for ov in overrides or ():
        _apply_override(raw, ov)
    return Config.from_validated(validate(raw))


def read_config_file(path: str | os.PathLike) -> Any:
    """The YAML at ``path`` with its ``_base_`` chain merged, not validated (``{}`` for an empty
    file): for a caller that must see what a file sets before it is validated."""
    return _read_with_bases(path, ())


def load_config(path: str | os.PathLike | None, overrides: Sequence[str] = ()) -> Config:
    """Load YAML ``path`` (or only defaults if None), apply ``dotted.key=value``
    overrides in order, validate everything, and return a read-only Config.

    Raises:
        ConfigError: unreadable/invalid file, bad override syntax, unknown
            section/key (with suggestion), wrong type, out-of-range value, or a
            violated cross-field rule; the message names every offending key.
    """
    raw: Any = read_config_file(path) if path is not None else {}
    try:
        return config_from_dict(raw, overrides)
    except ConfigError as e:  # a problem of a key the file sets (not an override) names the file too
        if path is None:
            raise
        overridden = {ov.split("=", 1)[0].strip() for ov in overrides if isinstance(ov, str)}
        raise ConfigError([line if any(_key_of(line) == key or _key_of(line).startswith(key + ".")
                                       or _key_of(line).split(".")[0] == key for key in overridden)
                           else f"{path}: {line}" for line in e.errors]) from None


def _key_of(problem: str) -> str:
    """The ``dotted.key`` a problem line of :class:`ConfigError` starts with."""
    return problem.split(":", 1)[0].strip()


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
