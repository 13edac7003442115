"""EvalProgram from a ModelSpec: the same program as from the spelled-out arguments, and a row's
options carried into the program and into export.json (read back as the same spec)."""
from __future__ import annotations

import numpy as np
import pytest

from paddle_pfc.backbones import table as table_module
from paddle_pfc.backbones.spec import ModelSpec
from paddle_pfc.backbones.state import random_state
from paddle_pfc.backbones.table import ROWS, Backbone
from paddle_pfc.deploy.export import EvalProgram
from paddle_pfc.deploy.inference import FaceEmbedder
from paddle_pfc.deploy.model_format import read_export_meta

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_from_spec_is_the_spelled_out_program():
    spec = ModelSpec("w600k_mbf", 16, (32, 48))
    state = random_state("w600k_mbf", 16, (32, 48), seed=3)
    x = np.random.default_rng(0).uniform(-1, 1, (3, 3, 32, 48)).astype(np.float32)
    prog = EvalProgram.from_spec(spec, state)
    assert prog.spec == spec and prog.input_size == (32, 48)
    np.testing.assert_array_equal(prog(x), EvalProgram("w600k_mbf", 16, (32, 48), state)(x))


def test_a_rows_options_reach_the_program_and_export_json(monkeypatch, tmp_path):
    monkeypatch.setattr(table_module, "ROWS", (*ROWS, Backbone("toy", "helpers.toy_backbone:toy",
                                                               options={"scale": 1.0, "bias": True})))
    spec = ModelSpec("toy", 4, 16, 0.0, {"scale": 2.5})
    state = random_state("toy", 4, 16, seed=1, options=spec.options)
    x = np.random.default_rng(2).standard_normal((2, 3, 16, 16)).astype(np.float32)
    expected = 2.5 * (x.reshape(2, -1).astype(np.float64) @ state["fc.weight"] + state["fc.bias"])
    prog = EvalProgram.from_spec(spec, state)
    np.testing.assert_allclose(prog(x), expected, rtol=1e-5, atol=1e-5)
    out = prog.save(tmp_path / "export")
    meta = read_export_meta(out)
    assert meta["options"] == {"scale": 2.5, "bias": True}
    assert ModelSpec.from_description(meta) == spec
    np.testing.assert_allclose(FaceEmbedder(out).forward(x), expected, rtol=1e-5, atol=1e-5)


def test_export_json_of_a_row_without_options_has_none(tmp_path):
    prog = EvalProgram.from_spec(ModelSpec("mbf", 8, 32), random_state("mbf", 8, 32))
    assert "options" not in read_export_meta(prog.save(tmp_path / "export"))
