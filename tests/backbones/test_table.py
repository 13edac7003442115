"""The backbone table (paddle_pfc.backbones.table) and ModelSpec: every row builds and embeds, the
names and aliases the package exports are the table's, a row's options reach its layer (from a
ModelSpec and from a config), bad values name their field, stored descriptions read back."""
from __future__ import annotations

import numpy as np
import paddle
import pytest

from paddle_pfc.backbones import ALIASES, BACKBONES, build_backbone
from paddle_pfc.backbones import table as table_module
from paddle_pfc.backbones.spec import ModelSpec
from paddle_pfc.backbones.table import ROWS, Backbone, find_row, row_of
from paddle_pfc.deploy.model_format import export_meta
from paddle_pfc.engine.config import ConfigError, load_config
from paddle_pfc.engine.config import schema as config_schema
from paddle_pfc.utils.errors import UsageError

TOY = Backbone("toy", "helpers.toy_backbone:toy", ("t1",), options={"scale": 1.0, "bias": True},
               input_multiple=8)


@pytest.fixture
def toy_row(monkeypatch):
    """The table with one more row (what adding an architecture is), seen by the config too."""
    monkeypatch.setattr(table_module, "ROWS", (*ROWS, TOY))
    monkeypatch.setattr(config_schema, "BACKBONES", (*BACKBONES, "toy"))
    return TOY


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_every_row_builds_and_embeds(row):
    layer = ModelSpec(row.name, 8, 32).build()
    layer.train()  # batch statistics: the deep rows' fresh running statistics overflow in eval mode
    out = layer(paddle.to_tensor(np.random.default_rng(0).uniform(-1, 1, (2, 3, 32, 32)).astype(np.float32)))
    assert out.shape == [2, 8] and np.isfinite(out.numpy()).all()


def test_names_and_aliases_are_the_tables():
    # the lists the package had before the table, in their order, then the ViTs
    assert BACKBONES == ("iresnet18", "iresnet34", "iresnet50", "iresnet100", "iresnet200", "mobilefacenet",
                         "mobilefacenet_fc", "vit_t", "vit_s", "vit_b", "vit_l")
    assert list(ALIASES.items()) == [("r18", "iresnet18"), ("r34", "iresnet34"), ("r50", "iresnet50"),
                                     ("r100", "iresnet100"), ("r200", "iresnet200"), ("mbf", "mobilefacenet"),
                                     ("w600k_mbf", "mobilefacenet_fc"), ("vit_l_dp005_mask_005", "vit_l")]
    for alias, name in ALIASES.items():
        assert find_row(alias) is find_row(alias.upper()) is find_row(name) is row_of(name)
    assert find_row("vit_h") is None and find_row(3) is None
    with pytest.raises(ValueError,
                       match="unknown backbone name 'vit_h'; valid names: iresnet18, .* vit_l_dp005_mask_005$"):
        row_of("vit_h")


def test_a_rows_options_reach_the_layer(toy_row):
    spec = ModelSpec("T1", 4, 16, 0.25, {"scale": 3})  # an alias; an int for a float option
    assert dict(spec.options) == {"scale": 3.0, "bias": True} and isinstance(spec.options["scale"], float)
    layer = spec.build()
    assert (layer.scale, layer.dropout_rate, layer.fc.bias is not None) == (3.0, 0.25, True)
    x = np.random.default_rng(1).standard_normal((2, 3, 16, 16)).astype(np.float32)
    w = layer.fc.weight.numpy().astype(np.float64)
    b = layer.fc.bias.numpy().astype(np.float64)
    np.testing.assert_allclose(layer(paddle.to_tensor(x)).numpy(), 3.0 * (x.reshape(2, -1) @ w + b),
                               rtol=1e-5, atol=1e-4)
    assert build_backbone("toy", 4, 24, bias=False).fc.bias is None  # input rule: multiples of 8
    assert ModelSpec("toy", 4, 24).build().scale == 1.0  # the row's default


def test_options_flow_from_the_config_to_the_layer(toy_row):
    cfg = load_config("tests/train_tiny.yaml", ["model.backbone=toy", "model.input_size=40",
                                                "model.options={scale: 0.5}"])
    assert dict(cfg.model.options) == {"scale": 0.5, "bias": True}  # the row's defaults filled in
    assert cfg.to_dict()["model"]["options"] == {"scale": 0.5, "bias": True}
    layer = ModelSpec.from_config(cfg.model).build()
    assert layer.scale == 0.5 and layer.fc.weight.shape == [3 * 40 * 40, 32]
    with pytest.raises(ConfigError, match=r"model\.options\.drop_path: backbone toy has no option 'drop_path' "
                                          r"\(its options: scale, bias\)"):
        load_config("tests/train_tiny.yaml", ["model.backbone=toy", "model.options={drop_path: 0.1}"])
    with pytest.raises(ConfigError, match=r"model\.options\.bias: expected bool, got int"):
        load_config("tests/train_tiny.yaml", ["model.backbone=toy", "model.options={bias: 1}"])
    with pytest.raises(ConfigError, match=r"model\.input_size: must be a multiple of 16 and >= 16 \(backbone "
                                          r"mobilefacenet\), got 40"):  # the toy row's rule, not this backbone's
        load_config("tests/train_tiny.yaml", ["model.input_size=40"])
    with pytest.raises(ConfigError, match=r"model\.options\.scale: backbone mobilefacenet has no option"):
        load_config("tests/train_tiny.yaml", ["model.options={scale: 2.0}"])


@pytest.mark.parametrize("args,field", [
    (("r50", 0), "embedding_size"), (("r50", 2.5), "embedding_size"), (("r50", True), "embedding_size"),
    (("r50", 512, 100), "input_size"), (("r50", 512, (112,)), "input_size"),
    (("mbf", 512, 112, 1.0), "dropout"), (("mbf", 512, 112, -0.1), "dropout"),
    (("mbf", 512, 112, 0.0, {"scale": 2.0}), "options.scale"),
])
def test_bad_values_name_their_field(args, field):
    with pytest.raises(UsageError, match=field):
        ModelSpec(*args)


def test_bad_option_values_name_the_option(toy_row):
    with pytest.raises(UsageError, match=r"options\.scale: expected float, got str"):
        ModelSpec("toy", 4, 16, 0.0, {"scale": "2"})
    with pytest.raises(UsageError, match=r"^options: expected a mapping"):
        ModelSpec("toy", 4, 16, 0.0, [("scale", 2.0)])


def test_descriptions_read_back():
    # what engine.checkpoint.model_from_checkpoint returns for the tests' tiny run
    stored = {"backbone": "mobilefacenet", "embedding_size": 32, "input_size": 32, "dropout": 0.0}
    spec = ModelSpec.from_description(stored)
    assert spec == ModelSpec.from_config(load_config("tests/train_tiny.yaml").model)
    assert (spec.backbone, spec.embedding_size, spec.input_size, spec.dropout) == ("mobilefacenet", 32, (32, 32), 0.0)
    assert spec.description() == {**stored, "input_size": [32, 32]}
    assert ModelSpec.from_description(spec.description()) == spec
    # export.json (rectangular input, its dropout not recorded)
    meta = export_meta("w600k_mbf", 128, (64, 48), "float32", "model.json", "3.3.1")
    assert ModelSpec.from_description(meta) == ModelSpec("w600k_mbf", 128, (64, 48))
    with pytest.raises(UsageError, match="lacks input_size"):
        ModelSpec.from_description({"backbone": "r50", "embedding_size": 512})
    with pytest.raises(UsageError, match="lacks embedding_size"):
        ModelSpec.from_description({"backbone": "r50", "embedding_size": None, "input_size": 112})
    assert ModelSpec("r50") == ModelSpec("r50", 512, 112)  # the row's defaults


def test_specs_pickle_and_stored_options_read_back(toy_row):
    import pickle

    spec = ModelSpec("toy", 4, 16, 0.0, {"scale": 2.0})
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert spec.description()["options"] == {"scale": 2.0, "bias": True}
    assert ModelSpec.from_description(spec.description()) == spec
    assert export_meta("toy", 4, (16, 16), "float32", "model.json", "3.3.1", options=spec.options)["options"] == \
        {"scale": 2.0, "bias": True}
