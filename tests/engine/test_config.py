"""Tests for paddle_pfc.engine.config (schema, overrides, errors, lr rule, shipped configs)."""
import argparse
import copy
import pickle

import pytest
import yaml

from launcher import REPO
from paddle_pfc.engine.config import (
    BACKBONES,
    Config,
    ConfigError,
    add_config_args,
    config_from_args,
    config_from_dict,
    default_config_dict,
    dump_config,
    load_config,
    resolve_lr,
    resolve_validation_sets,
)
from paddle_pfc.engine.config import schema as config_mod

CONFIG_DIR = REPO / "configs"
SHIPPED = sorted(CONFIG_DIR.glob("*.yaml"))
MIN = ["data.num_classes=10"]  # the only required key


def _write(tmp_path, data, name="c.yaml"):
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return str(p)


def _err(overrides, path=None):
    with pytest.raises(ConfigError) as ei:
        load_config(path, overrides)
    return str(ei.value)


# --------------------------------------------------------------------------- shipped
def test_expected_configs_shipped():
    names = {p.stem for p in SHIPPED}
    assert {"demo_cpu", "ms1mv3_r50", "ms1mv3_r100", "ms1mv2_mobileface",
            "glint360k_r100", "wf42m_vit_t", "wf42m_vit_b", "train_small_vit"} <= names


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_config_loads_and_roundtrips(path, tmp_path):
    cfg = load_config(str(path), [])
    assert cfg.data.image_size == cfg.model.input_size
    assert cfg.model.backbone in BACKBONES
    out = tmp_path / "echo.yaml"
    dump_config(cfg, out)
    assert load_config(str(out), []) == cfg
    assert config_from_dict(cfg.to_dict()) == cfg


def test_published_recipes():
    r50 = load_config(str(CONFIG_DIR / "ms1mv3_r50.yaml"), [])
    assert (r50.data.num_classes, r50.train.epochs, r50.train.warmup_epochs) == (93431, 25, 2.0)
    assert (r50.loss.margin1, r50.loss.margin2, r50.loss.margin3, r50.loss.scale) == (1.0, 0.5, 0.0, 64.0)
    assert r50.train.lr is None and resolve_lr(r50, 8) == pytest.approx(0.2)
    assert load_config(str(CONFIG_DIR / "ms1mv2_mobileface.yaml"), []).data.num_classes == 85742
    g = load_config(str(CONFIG_DIR / "glint360k_r100.yaml"), [])
    assert g.data.num_classes == 360232
    assert (g.loss.margin2, g.loss.margin3) == (0.0, 0.4)  # CosFace, as insightface
    vit_t = load_config(str(CONFIG_DIR / "wf42m_vit_t.yaml"), [])
    # arcface_torch configs/wf42m_pfc03_40epoch_8gpu_vit_t.py / _vit_b.py, get_model's vit_*_dp005_*
    assert (vit_t.model.backbone, dict(vit_t.model.options)) == ("vit_t", {"drop_path_rate": 0.05, "mask_ratio": 0.0})
    assert (vit_t.loss.margin1, vit_t.loss.margin2, vit_t.loss.margin3, vit_t.loss.scale) == (1.0, 0.0, 0.4, 64.0)
    assert (vit_t.classifier.sample_ratio, vit_t.data.num_classes, vit_t.train.epochs) == (0.3, 2059906, 40)
    assert (vit_t.train.optimizer, vit_t.train.lr, vit_t.train.weight_decay, vit_t.train.weight_decay_exempt,
            vit_t.train.warmup_epochs, vit_t.train.batch_size, vit_t.train.accumulate_steps) == (
        "adamw", 0.001, 0.1, "none", 4.0, 512, 1)
    assert resolve_lr(vit_t, 8) == 0.001  # as published, not scaled
    vit_b = load_config(str(CONFIG_DIR / "wf42m_vit_b.yaml"), [])
    assert (vit_b.model.backbone, vit_b.train.batch_size, vit_b.train.accumulate_steps) == ("vit_b", 256, 12)
    assert dict(vit_b.model.options) == {"drop_path_rate": 0.05, "mask_ratio": 0.1}
    assert (vit_b.train.optimizer, vit_b.loss.margin3, vit_b.classifier.sample_ratio) == ("adamw", 0.4, 0.3)
    demo = load_config(str(CONFIG_DIR / "demo_cpu.yaml"), [])
    assert demo.data.kind == "synthetic" and demo.validation.synthetic_pairs == 1000
    assert demo.classifier.sample_ratio == 0.5


# --------------------------------------------------------------------------- defaults / object
def test_defaults_and_attribute_access():
    cfg = load_config(None, MIN)
    assert cfg.model.backbone == "iresnet50" and cfg.model.embedding_size == 512
    assert cfg.data.image_size == 112  # defaulted from model.input_size
    assert cfg.train.momentum == 0.9 and cfg.train.weight_decay == 5e-4
    assert cfg.train.lr is None and cfg.validation.sets == ()
    assert cfg["train"]["batch_size"] == cfg.train.batch_size
    assert set(cfg) == set(default_config_dict())


def test_config_is_read_only_and_picklable():
    cfg = load_config(None, MIN)
    with pytest.raises(AttributeError):
        cfg.train.lr = 0.3
    with pytest.raises(AttributeError):
        cfg.train = None
    with pytest.raises(AttributeError, match="train.nope"):
        cfg.train.nope
    d = cfg.to_dict()
    d["train"]["lr"] = 1.0  # a copy: the config is unchanged
    assert cfg.train.lr is None
    assert pickle.loads(pickle.dumps(cfg)) == cfg
    assert copy.deepcopy(cfg) == cfg


# --------------------------------------------------------------------------- overrides
def test_overrides_nested_and_typed(tmp_path):
    p = _write(tmp_path, {"data": {"num_classes": 5}, "train": {"lr": 0.1}})
    cfg = load_config(p, ["train.lr=0.2", "data.root=/x", "train.weight_decay=1e-4",
                          "train.grad_clip=null", "data.flip=false", "model.input_size=32",
                          "train.decay_epochs=[3, 6]", "train.lr_schedule=step",
                          "train.epochs=8", "train.output_dir=2024",
                          "validation.sets=[{name: lfw, path: lfw.bin}]"])
    assert cfg.train.lr == 0.2 and isinstance(cfg.train.lr, float)
    assert cfg.data.root == "/x" and cfg.data.num_classes == 5
    assert cfg.train.weight_decay == pytest.approx(1e-4)
    assert cfg.train.grad_clip is None and cfg.data.flip is False
    assert cfg.data.image_size == 32 and cfg.train.decay_epochs == (3, 6)
    assert cfg.train.output_dir == "2024"  # str key keeps raw text
    assert cfg.validation.sets[0].name == "lfw"
    assert resolve_validation_sets(cfg) == [("lfw", "/x/lfw.bin")]


def test_override_order_and_section_merge():
    cfg = load_config(None, MIN + ["train.lr=0.3", "train.lr=0.4",
                                   "train={batch_size: 32, epochs: 3}"])
    assert (cfg.train.lr, cfg.train.batch_size, cfg.train.epochs) == (0.4, 32, 3)


def test_int_accepted_for_float():
    cfg = load_config(None, MIN + ["train.lr=1", "loss.scale=30"])
    assert cfg.train.lr == 1.0 and isinstance(cfg.train.lr, float)
    assert isinstance(cfg.loss.scale, float)


def test_exponent_float_in_file(tmp_path):
    p = _write(tmp_path, "data:\n  num_classes: 3\ntrain:\n  weight_decay: 5e-4\n")
    assert load_config(p, []).train.weight_decay == pytest.approx(5e-4)


@pytest.mark.parametrize("bad,key", [
    ("train.lr", "train.lr"),
    ("=3", "<empty>"),
    ("train..lr=3", "train..lr"),
    ("validation.sets.0.name=x", "validation.sets"),
    ("model.pretrained=", "model.pretrained: empty value"),   # e.g. =$UNSET: not null
    ("train.lr= ", "train.lr: empty value"),
])
def test_malformed_overrides(bad, key):
    assert key in _err(MIN + [bad])


def test_add_config_args(tmp_path):
    p = _write(tmp_path, {"data": {"num_classes": 7}})
    parser = add_config_args(argparse.ArgumentParser())
    args = parser.parse_args(["-c", p, "-o", "train.lr=0.2", "--override", "data.seed=3"])
    assert args.config == p and args.overrides == ["train.lr=0.2", "data.seed=3"]
    cfg = config_from_args(args)
    assert (cfg.train.lr, cfg.data.seed, cfg.data.num_classes) == (0.2, 3, 7)
    assert parser.parse_args([]).overrides == []


# --------------------------------------------------------------------------- errors
def test_unknown_section_and_key_suggestions(tmp_path):
    msg = _err(MIN + ["trian.lr=0.1"])
    assert "trian" in msg and "'train'" in msg
    msg = _err(MIN + ["train.learning_rat=0.1"])
    assert "train.learning_rat" in msg
    msg = _err(MIN + ["train.wieght_decay=0.1"])
    assert "train.wieght_decay" in msg and "'weight_decay'" in msg
    msg = _err(MIN + ["train.num_classes=3"])
    assert "'data.num_classes'" in msg  # key that lives in another section
    p = _write(tmp_path, {"data": {"num_classes": 3}, "modle": {}, "train": {"bacth_size": 4}})
    msg = _err([], p)
    assert "modle" in msg and "'model'" in msg
    assert "train.bacth_size" in msg and "'batch_size'" in msg
    p = _write(tmp_path, {"lr": 0.1, "data": {"num_classes": 3}})
    assert "'train.lr'" in _err([], p)


@pytest.mark.parametrize("override,key", [
    ("train.batch_size=abc", "train.batch_size"),       # str for int
    ("train.batch_size=2.5", "train.batch_size"),       # float for int
    ("train.epochs=true", "train.epochs"),              # bool is not int
    ("train.lr=fast", "train.lr"),                      # str for float
    ("train.lr=true", "train.lr"),                      # bool is not float
    ("data.flip=1", "data.flip"),                       # int for bool
    ("train.decay_epochs=[1, x]", "train.decay_epochs"),
    ("validation.sets=lfw", "validation.sets"),
    ("validation.sets=[{name: lfw}]", "validation.sets[0].path"),
    ("validation.sets=[{name: a, path: b, pth: c}]", "validation.sets[0].pth"),
    ("model=3", "model"),
])
def test_wrong_type_names_key(override, key):
    msg = _err(MIN + [override])
    assert key in msg


@pytest.mark.parametrize("override,key", [
    ("model.backbone=resnet50", "model.backbone"),
    ("model.embedding_size=0", "model.embedding_size"),
    ("model.dropout=1.0", "model.dropout"),
    ("model.input_size=100", "model.input_size"),
    ("model.input_size=0", "model.input_size"),
    ("loss.scale=0", "loss.scale"),
    ("loss.margin2=.nan", "loss.margin2"),
    ("loss.margin3=.inf", "loss.margin3"),
    ("classifier.sample_ratio=0", "classifier.sample_ratio"),
    ("classifier.sample_ratio=1.5", "classifier.sample_ratio"),
    ("classifier.dtype=float64", "classifier.dtype"),
    ("classifier.center_dtype=int8", "classifier.center_dtype"),
    ("data.kind=lmdb", "data.kind"),
    ("data.num_classes=0", "data.num_classes"),
    ("data.samples_per_class=0", "data.samples_per_class"),
    ("data.num_workers=-1", "data.num_workers"),
    ("train.epochs=0", "train.epochs"),
    ("train.lr=0", "train.lr"),
    ("train.lr_schedule=linear", "train.lr_schedule"),
    ("train.warmup_epochs=-1", "train.warmup_epochs"),
    ("train.momentum=1.0", "train.momentum"),
    ("train.weight_decay=-0.1", "train.weight_decay"),
    ("train.grad_clip=0", "train.grad_clip"),
    ("train.amp=fp16", "train.amp"),
    ("train.log_every=0", "train.log_every"),
    ("train.checkpoint_every_steps=-1", "train.checkpoint_every_steps"),
    ("train.keep_checkpoints=0", "train.keep_checkpoints"),
    ("train.max_steps=0", "train.max_steps"),
    ("validation.batch_size=0", "validation.batch_size"),
    ("validation.synthetic_pairs=-5", "validation.synthetic_pairs"),
    ("train.output_dir=null", "train.output_dir"),
    ("data.num_classes=1", "data.num_classes"),      # one class: the loss is 0, nothing to learn
    ("loss.margin1=100", "loss.margin1"),
    ("loss.margin2=-5", "loss.margin2"),
    ("loss.margin3=1.5", "loss.margin3"),
])
def test_impossible_values_name_key(override, key):
    msg = _err(MIN + [override])
    assert key in msg


def test_choice_suggestion():
    assert "'iresnet50'" in _err(MIN + ["model.backbone=iresnet5"])


def test_required_key():
    msg = _err([])
    assert "data.num_classes" in msg and "required" in msg


@pytest.mark.parametrize("overrides,keys", [
    (["data.image_size=64"], ["data.image_size", "model.input_size"]),
    (["data.kind=rec"], ["data.root"]),
    (["data.kind=folder", "data.root=null"], ["data.root"]),
    (["train.lr_schedule=step"], ["train.decay_epochs"]),
    (["train.lr_schedule=step", "train.decay_epochs=[5, 3]"], ["train.decay_epochs"]),
    (["train.lr_schedule=step", "train.epochs=10", "train.decay_epochs=[5, 10]"],
     ["train.decay_epochs"]),
    (["train.epochs=2", "train.warmup_epochs=2"], ["train.warmup_epochs", "train.epochs"]),
    (["data.kind=rec", "data.root=/d", "validation.synthetic_pairs=10"],
     ["validation.synthetic_pairs"]),
    (["validation.sets=[{name: a, path: x}, {name: a, path: y}]"], ["validation.sets[1].name"]),
    (["train.resume=auto", "train.overwrite=true"], ["train.overwrite", "train.resume='auto'"]),
])
def test_cross_field_rules(overrides, keys):
    msg = _err(MIN + overrides)
    for k in keys:
        assert k in msg


def test_all_errors_reported_at_once():
    with pytest.raises(ConfigError) as ei:
        load_config(None, ["train.lr=-1", "model.dropout=2", "train.batch_size=x"])
    err = ei.value
    assert isinstance(err, ValueError)
    joined = "\n".join(err.errors)
    for k in ("train.lr", "model.dropout", "train.batch_size", "data.num_classes"):
        assert k in joined


def test_file_errors(tmp_path):
    assert "cannot read" in _err([], str(tmp_path / "missing.yaml"))
    assert "invalid YAML" in _err([], _write(tmp_path, "train: [1, 2\n"))
    assert "duplicate" in _err([], _write(tmp_path, "data:\n  num_classes: 1\n  num_classes: 2\n"))
    assert "<root>" in _err([], _write(tmp_path, "- 1\n- 2\n"))
    assert "train" in _err([], _write(tmp_path, "data: {num_classes: 1}\ntrain: 5\n"))


def test_backbones_are_one_list():
    """model.backbone accepts exactly the names build_backbone builds: one tuple
    (paddle_pfc.backbones.names), read without importing Paddle."""
    import subprocess
    import sys

    from paddle_pfc import backbones
    from paddle_pfc.backbones import names

    assert config_mod.BACKBONES is names.BACKBONES is backbones.BACKBONES
    with pytest.raises(ConfigError, match="model.backbone"):
        load_config(None, MIN + ["model.backbone=vit_h"])
    code = "import sys, paddle_pfc.engine.config; assert 'paddle' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], cwd=CONFIG_DIR.parent, check=True, timeout=120)


# --------------------------------------------------------------------------- lr rule
def test_resolve_lr():
    cfg = load_config(None, MIN + ["train.batch_size=128"])
    assert resolve_lr(cfg, 8) == pytest.approx(0.2)
    assert resolve_lr(cfg, 1) == pytest.approx(0.025)
    assert resolve_lr(load_config(None, MIN + ["train.batch_size=64"]), 2) == pytest.approx(0.025)
    assert resolve_lr(load_config(None, MIN + ["train.lr=0.3"]), 8) == 0.3
    with pytest.raises(ValueError):
        resolve_lr(cfg, 0)


def test_config_from_dict_validates():
    with pytest.raises(ConfigError, match="model.embedding_size"):
        config_from_dict({"data": {"num_classes": 2}, "model": {"embedding_size": "big"}})
    cfg = config_from_dict({"data": {"num_classes": 2}}, ["train.lr=0.5"])
    assert isinstance(cfg, Config) and cfg.train.lr == 0.5


# --------------------------------------------------------------------------- _base_
def test_recipes_are_deltas_over_the_base(tmp_path):
    """A recipe states only what differs from configs/base.yaml; the rest comes from the base."""
    base = load_config(str(CONFIG_DIR / "base.yaml"), [])
    r100 = load_config(str(CONFIG_DIR / "ms1mv3_r100.yaml"), [])
    assert r100.model.backbone == "iresnet100" and r100.validation.sets == base.validation.sets
    assert len((CONFIG_DIR / "ms1mv3_r100.yaml").read_text().splitlines()) < 15


def test_base_merge_lists_and_nesting(tmp_path):
    _write(tmp_path, {"data": {"num_classes": 7, "seed": 3}, "train": {"lr": 0.5, "decay_epochs": [1, 2]},
                      "validation": {"sets": [{"name": "a", "path": "a.bin"}]}}, "root.yaml")
    _write(tmp_path, "_base_: root.yaml\ntrain:\n  momentum: 0.8\n  decay_epochs: [5]\n", "mid.yaml")
    leaf = _write(tmp_path, "_base_: mid.yaml\ndata:\n  seed: 9\nvalidation:\n  sets: []\n", "leaf.yaml")
    cfg = load_config(leaf, ["train.lr=0.25"])
    assert (cfg.data.num_classes, cfg.data.seed) == (7, 9)           # section merged key by key
    assert (cfg.train.lr, cfg.train.momentum) == (0.25, 0.8)        # overrides still win
    assert cfg.train.decay_epochs == (5,) and cfg.validation.sets == ()  # lists replace


@pytest.mark.parametrize("content, message", [
    ("_base_: nowhere.yaml\n", "nowhere.yaml: cannot read config file"),
    ("_base_: [a.yaml]\n", "_base_ must be the path of a config file"),
    ("_base_: self.yaml\n", "_base_ cycle"),
])
def test_base_errors_name_the_file(tmp_path, content, message):
    path = _write(tmp_path, content, "self.yaml")
    assert message in _err([], path)


def test_configuration_reference_is_current():
    """docs/configuration.md is generated from the schema; a new or changed key must regenerate it."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "tools/config_reference.py", "--check"],
                          cwd=CONFIG_DIR.parent, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_data_non_square_takes_one_of_its_policies():
    assert load_config(None, ["data.num_classes=10"]).data.non_square == "stretch"
    assert load_config(None, ["data.num_classes=10", "data.non_square=crop"]).data.non_square == "crop"
    assert "data.non_square: must be one of pad, crop, stretch; got 'squash'" in _err(
        ["data.num_classes=10", "data.non_square=squash"])


def test_an_option_is_overridden_one_entry_at_a_time():
    base = ["model.backbone=vit_t", "model.input_size=112", "data.num_classes=10"]
    cfg = config_from_dict(None, [*base, "model.options.mask_ratio=0.0"])
    assert dict(cfg.model.options) == {"drop_path_rate": 0.1, "mask_ratio": 0.0}  # the row's default kept
    cfg = config_from_dict(None, [*base, "model.options={drop_path_rate: 0.05}", "model.options.mask_ratio=0.25"])
    assert dict(cfg.model.options) == {"drop_path_rate": 0.05, "mask_ratio": 0.25}
    with pytest.raises(ConfigError, match=r"model\.options\.mask_rate"):
        config_from_dict(None, [*base, "model.options.mask_rate=0.1"])
    with pytest.raises(ConfigError, match=r"model\.backbone: cannot override inside"):
        config_from_dict(None, ["model.backbone.x=1"])
