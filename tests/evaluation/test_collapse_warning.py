"""Collapsed embeddings (every pair at cosine ≈ 1, accuracy at chance) are named, with what they
usually mean, by validation and by infer --compare; a healthy or untrained model is not."""
from __future__ import annotations

import numpy as np
import pytest

from paddle_pfc.evaluation.collapse import collapse_note, pair_cosines
from paddle_pfc.evaluation.verification import evaluate_pairs


def _pairs(num_pairs: int, dim: int, seed: int, spread: float, common: float) -> tuple[np.ndarray, np.ndarray]:
    """[2P, D] rows ``common * shared direction + spread * noise``; pair i is rows 2i, 2i+1."""
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=dim)
    rows = common * direction + spread * rng.normal(size=(2 * num_pairs, dim))
    issame = np.arange(num_pairs) % 2 == 0
    return rows, issame


def test_collapsed_embeddings_are_named():
    rows, issame = _pairs(200, 64, 0, spread=1e-4, common=1.0)
    result = evaluate_pairs(rows, issame, nrof_folds=5)
    assert result.accuracy < 0.6  # chance: the trap the warning names
    cos = pair_cosines(rows)
    assert cos.min() > 0.9999
    note = collapse_note(rows, result.accuracy)
    assert note is not None and "collapsed" in note and "keep training" in note and "lower train.lr" in note
    assert f"accuracy {result.accuracy:.3f}" in note
    # said again (the next validations of a training run): the facts without the advice
    again = collapse_note(rows, result.accuracy, advice=False)
    assert note.startswith(again + ". This is usual") and "keep training" not in again


def test_pair_cosines_against_float64_reference():
    rows, _ = _pairs(7, 5, 1, spread=1.0, common=0.3)
    expected = [np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b) for a, b in zip(rows[0::2], rows[1::2])]
    np.testing.assert_allclose(pair_cosines(rows), expected, rtol=1e-12)


@pytest.mark.parametrize("spread, common", [(1.0, 0.0),     # trained-like: directions spread out
                                            (0.2, 1.0)])    # untrained-like: mean cosine ~0.96, yet spread
def test_healthy_and_untrained_embeddings_pass(spread, common):
    rows, _ = _pairs(200, 64, 2, spread=spread, common=common)
    assert collapse_note(rows) is None


def test_close_but_discriminative_embeddings_pass():
    """Pairs all above cosine 0.97 that still separate identities (accuracy 1.0) are no collapse."""
    rng = np.random.default_rng(4)
    common, identities = rng.normal(size=64), rng.normal(size=(20, 64))
    people = rng.integers(0, 20, size=400)
    people[1::2] = np.where(np.arange(200) % 2 == 0, people[0::2], (people[0::2] + 1) % 20)
    rows = 8 * common + 0.8 * identities[people] + 0.05 * rng.normal(size=(400, 64))
    issame = np.arange(200) % 2 == 0
    assert pair_cosines(rows).min() > 0.97
    assert evaluate_pairs(rows, issame, nrof_folds=5).accuracy > 0.95
    assert collapse_note(rows) is None


def test_validate_and_infer_commands_warn_on_a_collapsed_model(tmp_path, capsys):
    """A mobilefacenet whose last batch norm has zero scale maps every face to its bias: the
    validate command says so under its table; a random (healthy) one does not; infer --compare of
    two different images warns too."""
    from paddle_pfc.backbones.state import random_state
    from paddle_pfc.cli import export, infer, validate
    from paddle_pfc.data._image import encode_jpeg
    from paddle_pfc.data.synthetic import SyntheticFaces, make_verification_set
    from paddle_pfc.evaluation.bin_set import write_bin

    size, dim = 32, 16
    bins, issame = make_verification_set(10, 40, size, seed=5)
    write_bin(str(tmp_path / "pairs.bin"), bins, issame)
    state = random_state("mobilefacenet", dim, size, seed=1)
    gamma = [k for k in state if k.endswith("features.layers.3.weight")]
    assert len(gamma) == 1, sorted(state)[-6:]
    healthy = dict(state)
    state[gamma[0]] = np.zeros_like(state[gamma[0]])
    state[gamma[0].replace("weight", "bias")] = np.linspace(0.5, 1.5, dim).astype(np.float32)
    outputs = {}
    for name, weights in (("collapsed", state), ("healthy", healthy)):
        np.savez(tmp_path / f"{name}.npz", **weights)
        assert export.main(["--weights", str(tmp_path / f"{name}.npz"), "--backbone", "mobilefacenet",
                            "--embedding-size", str(dim), "--input-size", str(size),
                            "--out", str(tmp_path / name)]) == 0
        capsys.readouterr()
        assert validate.main(["--model", str(tmp_path / name), "--bin", str(tmp_path / "pairs.bin"),
                              "--nrof-folds", "2"]) == 0
        outputs[name] = capsys.readouterr().out
    assert "warning: pairs: embeddings have collapsed" in outputs["collapsed"], outputs["collapsed"]
    assert "collapsed" not in outputs["healthy"], outputs["healthy"]
    faces = SyntheticFaces(2, 1, size, seed=3)
    for i in range(2):
        (tmp_path / f"face{i}.jpg").write_bytes(encode_jpeg(faces[i][0]))
    compare = ["--compare", str(tmp_path / "face0.jpg"), str(tmp_path / "face1.jpg"), "--threshold", "0.5"]
    assert infer.main(["--model", str(tmp_path / "collapsed"), *compare]) == 0
    out = capsys.readouterr().out
    assert out.startswith("SAME") and "may have collapsed" in out, out
    assert infer.main(["--model", str(tmp_path / "healthy"), *compare]) == 0
    assert "collapsed" not in capsys.readouterr().out
