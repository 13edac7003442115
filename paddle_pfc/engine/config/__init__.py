"""YAML training configuration: typed sections, validation, overrides, read-only access.

Usage (PaddleClas / PLSC style)::

    parser = argparse.ArgumentParser()
    add_config_args(parser)                 # -c/--config PATH, -o/--override k.k=v (repeatable)
    cfg = config_from_args(parser.parse_args())
    cfg.train.lr, cfg.data.root, cfg.to_dict(), cfg.to_yaml()

Modules: ``fields`` (a value rule, a schema field, the read-only section base), ``schema`` (the
section dataclasses: every key's type, default, check and doc; the
read-only :class:`Config`), ``checks`` (validation, :class:`ConfigError`), ``loading`` (YAML files,
``_base_:`` inheritance, ``-o`` overrides, argparse glue), ``resolve`` (learning rate, set paths).

Contract: every entry point validates EVERYTHING (unknown sections/keys, types, ranges,
cross-field rules) before returning and raises a single :class:`ConfigError` listing every
problem, each prefixed with its dotted key. The returned :class:`Config` is read-only and fully
populated (defaults filled in, ``data.image_size`` defaulted to ``model.input_size``), so
``config_from_dict(cfg.to_dict())`` round-trips. Importing this package does not import Paddle.
"""
from .checks import ConfigError
from .fields import Field
from .loading import (
    add_config_args,
    config_from_args,
    config_from_dict,
    default_config_dict,
    dump_config,
    load_config,
    read_config_file,
)
from .resolve import describe_lr, log_interval, resolve_lr, resolve_validation_sets
from .schema import (
    AMP_MODES,
    BACKBONES,
    DATA_KINDS,
    DTYPES,
    LR_SCHEDULES,
    SCHEMA,
    SECTIONS,
    ClassifierConfig,
    Config,
    DataConfig,
    LossConfig,
    ModelConfig,
    TrainConfig,
    ValidationConfig,
    ValSet,
)

__all__ = [
    "BACKBONES", "DTYPES", "AMP_MODES", "DATA_KINDS", "LR_SCHEDULES", "SCHEMA", "SECTIONS",
    "ConfigError", "Config", "Field", "ModelConfig", "LossConfig", "ClassifierConfig", "DataConfig",
    "TrainConfig", "ValidationConfig", "ValSet",
    "load_config", "read_config_file", "config_from_dict", "config_from_args", "add_config_args",
    "default_config_dict", "dump_config", "resolve_lr", "describe_lr", "log_interval", "resolve_validation_sets",
]
