"""Batch norm folded at export: the served program holds no batch-norm op and embeds as the
eval program (Paddle's kernels, norms kept) within a relative tolerance."""
from __future__ import annotations

import re

import numpy as np
import pytest

from paddle_pfc.backbones.state import random_state
from paddle_pfc.deploy.export import EvalProgram, export_backbone
from paddle_pfc.deploy.model_format import read_export_meta
from paddle_pfc.deploy.parity import PADDLE_RTOL, relative_difference
from paddle_pfc.deploy.predictor import EmbeddingModel

SIZE, EMB = 32, 64


def _state(backbone: str, seed: int = 5) -> dict:
    """A random state whose norms move the activations (not the identity): running means and
    variances far from 0 and 1, scales and shifts far from 1 and 0."""
    state = random_state(backbone, EMB, SIZE, seed=seed)
    rng = np.random.RandomState(seed + 1)
    for key, value in state.items():
        if key.endswith("._mean"):
            state[key] = rng.uniform(-0.5, 0.5, value.shape).astype(np.float32)
        elif key.endswith("._variance"):
            state[key] = rng.uniform(0.2, 3.0, value.shape).astype(np.float32)
        elif key.rsplit(".", 1)[0] + "._mean" in state:  # a norm's scale or shift
            state[key] = (value + rng.uniform(-0.3, 0.3, value.shape)).astype(np.float32)
    return state


def _op_names(model_dir) -> set:
    """The op names of a saved PIR program (``"1.conv2d"``: dialect 1, Paddle's ops)."""
    return set(re.findall(r'"(1\.[a-z0-9_]+)"', (model_dir / "model.json").read_text()))


@pytest.mark.parametrize("backbone", ["iresnet18", "mobilefacenet"])
def test_folded_export_embeds_as_the_eval_program(backbone, tmp_path):
    state = _state(backbone)
    reference = EvalProgram(backbone, EMB, SIZE, state)
    out = export_backbone(backbone, EMB, SIZE, state, tmp_path / "model")
    ops = _op_names(out)
    assert not {"1.batch_norm", "1.batch_norm_"} & ops and "1.conv2d" in ops
    assert read_export_meta(out)["batch_norm"] == "folded"

    model = EmbeddingModel(out, num_threads=1)
    assert model.onednn  # what the fold is for: oneDNN runs it (no batch-norm kernel to crash)
    x = np.random.RandomState(2).uniform(-1, 1, (5, 3, SIZE, SIZE)).astype(np.float32)
    expected = reference(x)
    assert np.abs(expected).max() > 0.1
    assert relative_difference(model(x), expected) <= PADDLE_RTOL
    # the float64 fold is exact up to float32 rounding: the same program without oneDNN
    assert relative_difference(EmbeddingModel(out, num_threads=1, onednn=False)(x), expected) <= 1e-5


@pytest.mark.parametrize("backbone, counts", [
    # iresnet18: stem, 2 per block, 4 downsamples (every stage strides) -> conv; bn2 (before fc) and
    # features -> linear; each block's first norm (before a padded convolution) -> affine
    ("iresnet18", {"conv": 1 + 2 * 8 + 4, "linear": 2, "affine": 8}),
    ("mobilefacenet", None),
])
def test_fold_counts(backbone, counts):
    state = _state(backbone)
    prog = EvalProgram(backbone, EMB, SIZE, state, fold_batch_norm=True)
    norms = sum(1 for k in state if k.endswith("._mean"))
    assert sum(prog.fold_counts.values()) == norms
    if counts is None:  # mobilefacenet: every norm follows a convolution, the last one a linear layer
        counts = {"conv": norms - 1, "linear": 1, "affine": 0}
    assert prog.fold_counts == counts
    x = np.random.RandomState(3).uniform(-1, 1, (2, 3, SIZE, SIZE)).astype(np.float32)
    expected = EvalProgram(backbone, EMB, SIZE, state)(x)
    assert relative_difference(prog(x), expected) <= 1e-5


def test_unfolded_export_keeps_batch_norm_and_runs_without_onednn(tmp_path):
    state = _state("iresnet18")
    out = export_backbone("iresnet18", EMB, SIZE, state, tmp_path / "model", fold_batch_norm=False)
    assert {"1.batch_norm", "1.batch_norm_"} & _op_names(out)
    assert read_export_meta(out)["batch_norm"] == "kept"
    model = EmbeddingModel(out, num_threads=1)
    assert not model.onednn
    x = np.random.RandomState(2).uniform(-1, 1, (3, 3, SIZE, SIZE)).astype(np.float32)
    assert relative_difference(model(x), EvalProgram("iresnet18", EMB, SIZE, state)(x)) <= 1e-5


def test_eval_program_fold_leaves_the_reference_alone(tmp_path):
    """save() folds a copy: the program it is called on still runs its norms."""
    state = _state("mobilefacenet")
    prog = EvalProgram("mobilefacenet", EMB, SIZE, state)
    x = np.random.RandomState(4).uniform(-1, 1, (2, 3, SIZE, SIZE)).astype(np.float32)
    before = prog(x)
    prog.save(tmp_path / "model")
    assert not prog.batch_norm_folded
    assert any("batch_norm" in op.name() for op in prog.main.global_block().ops)
    np.testing.assert_array_equal(prog(x), before)


def test_fold_refuses_native_and_float16():
    state = random_state("mobilefacenet", EMB, SIZE)
    with pytest.raises(ValueError, match="fold_batch_norm"):
        EvalProgram("mobilefacenet", EMB, SIZE, state, dtype="float16", fold_batch_norm=True)
