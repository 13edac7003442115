"""A non-finite step changes nothing, in every precision, on 1-3 ranks; the trainer counts, logs
and stops after train.max_bad_steps; no checkpoint holds inf/NaN; implausible scales are refused."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from helpers.head_runs import beyond_limit_cases, check_case, load_ranks, nonfinite_cases, run_world
from launcher import REPO, launch
from paddle_pfc.engine import checkpoint as ckpt
from paddle_pfc.engine.config import ConfigError, load_config
from paddle_pfc.utils.npz_state import load_state
from workers.head_worker import case_data

TRAIN = REPO / "tools" / "train.py"
CONFIG = REPO / "tests" / "train_tiny.yaml"


@pytest.mark.parametrize("world_size", [1, pytest.param(2, marks=pytest.mark.multirank),
                                        pytest.param(3, marks=pytest.mark.multirank)])
def test_injected_nonfinite_step_changes_no_parameter_or_state(world_size, tmp_path_factory):
    out, cases = run_world(world_size, tmp_path_factory, tag="nonfinite", cases_for=nonfinite_cases)
    for case in cases:
        # check_case: the skipped step leaves centers, backbone and both momenta bit-identical on
        # every rank; the steps around it match the float64 reference.
        check_case(case, load_ranks(out, case["name"], world_size), world_size)


def _checkpoint_arrays(folder: Path) -> dict[str, np.ndarray]:
    arrays = {}
    for name in ("backbone.npz", "states.npz"):
        arrays.update({f"{name}:{k}": np.asarray(v) for k, v in load_state(folder / name).items()})
    for path in sorted((folder / "centers").glob("*.npy")):
        arrays[path.name] = np.load(path)
    return arrays


@pytest.mark.multirank
def test_trainer_skips_counts_and_stops_on_nonfinite_steps_and_never_saves_them(tmp_path):
    out = tmp_path / "run"
    proc = launch(TRAIN, 2, ["-c", str(CONFIG), "-o", "train.lr=1e6", "-o", "train.max_steps=16",
                             "-o", "train.checkpoint_every_steps=1", "-o", "train.keep_checkpoints=30",
                             "-o", "train.max_bad_steps=3", "-o", f"train.output_dir={out}"],
                  tmp_path / "log", check=False)
    assert proc.returncode != 0
    skipped = [int(s) for s in re.findall(r"step (\d+) skipped \(nothing updated\)", (out / "train.log").read_text())]
    assert len(skipped) == 3 and skipped == list(range(skipped[0], skipped[0] + 3)), skipped
    first = skipped[0]
    assert first > 1  # lr 1e6 takes a few steps to overflow
    for rank in range(2):  # every rank stops with the same error, naming the step and the cause
        error = (out / f"error_rank{rank}.txt").read_text().splitlines()[0]
        assert f"[rank {rank}] NonFiniteTrainingError: step {first + 2}:" in error
        assert "inf/NaN in:" in error and "train.max_bad_steps=3" in error
    root = out / "checkpoints"
    saved = {step: folder for step, folder in ckpt.complete_checkpoints(root)}
    assert sorted(saved) == list(range(1, first + 2))  # the last bad step stops before saving
    for step, folder in saved.items():
        for key, value in _checkpoint_arrays(folder).items():
            if np.issubdtype(value.dtype, np.floating):
                assert np.isfinite(value).all(), (step, key)
    good = _checkpoint_arrays(saved[first - 1])
    for step in (first, first + 1):  # the skipped steps changed nothing at all, bit for bit
        after = _checkpoint_arrays(saved[step])
        assert after.keys() == good.keys()
        for key in good:
            np.testing.assert_array_equal(after[key], good[key], err_msg=f"step {step}: {key}")


@pytest.mark.parametrize("override, key", [("loss.scale=1e30", "loss.scale"),
                                           ("train.init_loss_scaling=1e30", "train.init_loss_scaling"),
                                           ("train.init_loss_scaling=0.5", "train.init_loss_scaling"),
                                           ("train.max_bad_steps=0", "train.max_bad_steps"),
                                           ("train.collective_timeout=0", "train.collective_timeout")])
def test_implausible_settings_are_refused_naming_the_key(override, key):
    with pytest.raises(ConfigError, match=re.escape(key)):
        load_config(None, ["data.num_classes=10", override])
    # insightface's values pass
    load_config(None, ["data.num_classes=10", "loss.scale=64", "train.init_loss_scaling=65536"])


@pytest.mark.parametrize("loss_factor, skipped", [(1.0, False), (1e8, True)])
@pytest.mark.parametrize("feature_has_grad", [True, False])
def test_center_gradient_beyond_the_native_updates_limit_skips_the_step(loss_factor, skipped, feature_has_grad,
                                                                        static_mode):
    """A center of tiny norm (1/|w| clipped at 1e12) in a loss scaled by 1e8: its gradient reaches
    ~1e21, beyond 2**64, where the native update's projection could overflow. The step is
    skipped and reported as the centers' — found through the feature's gradient (the logit
    gradients that lead there turn NaN), or without one through the centers' gradients; the
    same program with an ordinary loss updates."""
    import paddle

    import paddle_pfc
    from paddle_pfc.head import registry

    rng = np.random.default_rng(5)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        x = paddle.static.data("x", [4, 8], "float32")
        x.stop_gradient = not feature_has_grad
        y = paddle.static.data("y", [4], "int64")
        head = paddle_pfc.LargeScaleClassifier(x, y, 0, 1, 20, embedding_size=8, scale=64.0)
        if not head.native:
            pytest.skip("the native kernels did not build here")
        paddle_pfc.minimize(paddle.optimizer.Momentum(0.1, momentum=0.9), head.output_dict["loss"] * loss_factor,
                            startup_program=startup)
    weights = rng.standard_normal((20, 8)).astype(np.float32)
    weights[3] = 1e-20
    exe, scope = paddle.static.Executor(paddle.CPUPlace()), paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        scope.find_var(head.weight.name).get_tensor().set(weights, paddle.CPUPlace())
        flags, = exe.run(main, feed={"x": rng.standard_normal((4, 8)).astype(np.float32),
                                     "y": np.array([3, 3, 7, 11], np.int64)},
                         fetch_list=[registry.nonfinite_flags(main)])
        after = np.array(scope.find_var(head.weight.name).get_tensor())
    np.testing.assert_array_equal(flags, [0.0, 0.0, 1.0 if skipped else 0.0, 0.0])
    if skipped:
        np.testing.assert_array_equal(after, weights)
    else:
        assert np.isfinite(after).all() and not np.array_equal(after[3], weights[3])


@pytest.mark.multirank
@pytest.mark.parametrize("world_size", [2, 3])
def test_center_gradient_beyond_the_limit_skips_the_step_on_every_rank(world_size, tmp_path_factory):
    """The last rank holds a center of tiny norm and the loss is scaled by 1e10: that rank's center
    gradient passes 2**64 while every loss stays finite. Its NaN logit gradients reach other ranks'
    feature gradients through the all-gather's summed backward, and the all-reduced flags make
    every rank skip: no center, momentum or backbone value moves anywhere."""
    cases = beyond_limit_cases(world_size)
    out, _ = run_world(world_size, tmp_path_factory, tag="beyond", cases_for=beyond_limit_cases)
    ranks = load_ranks(out, "beyond_limit", world_size)
    _, _, _, backbone = case_data(cases[0], world_size)
    for r in ranks:
        assert np.isfinite(float(r["loss_0"]))
        np.testing.assert_array_equal(r["shard_0"], r["shard_initial"])
        np.testing.assert_array_equal(r["velocity_0"], np.zeros_like(r["velocity_0"]))
        np.testing.assert_array_equal(r["backbone_0"], backbone)
