"""AdaFace in the engine: ``loss.name`` builds the margin; its moving averages are checkpointed with
the run and resumed exactly (a run stopped at step 3 and resumed to step 6 repeats the uninterrupted
run's losses and state, bit for bit, on 2 ranks)."""
from __future__ import annotations

import numpy as np
import pytest

from launcher import REPO, launch
from launcher import metrics_losses as losses
from paddle_pfc.engine import checkpoint as ckpt
from paddle_pfc.engine.config import ConfigError, load_config

TRAIN = REPO / "tools" / "train.py"
CONFIG = REPO / "tests" / "train_tiny.yaml"
STATES = ("pfc_centers@adaface@batch_mean", "pfc_centers@adaface@batch_std")


def _command(out, steps: int, *extra: str) -> list[str]:
    return ["-c", str(CONFIG), "-o", "loss.name=adaface", "-o", "loss.adaface_t_alpha=0.5",
            "-o", f"train.max_steps={steps}", "-o", f"train.output_dir={out}",
            "-o", "train.checkpoint_every_steps=3", *extra]


def _states(run) -> dict[str, np.ndarray]:
    with np.load(ckpt.latest_checkpoint(run / "checkpoints") / "states.npz") as f:
        return {name: f[name] for name in STATES}


@pytest.mark.multirank
def test_resumed_adaface_run_equals_the_uninterrupted_one(tmp_path):
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    launch(TRAIN, 2, _command(whole, 6), tmp_path / "log_whole")
    launch(TRAIN, 2, _command(parts, 3), tmp_path / "log_first")
    first = _states(parts)
    assert all(abs(float(v[0]) - start) > 1e-3 for v, start in zip(first.values(), (20.0, 100.0)))  # they moved
    launch(TRAIN, 2, _command(parts, 6, "-o", "train.resume=auto"), tmp_path / "log_resumed")
    assert losses(parts) == losses(whole)
    expected = _states(whole)
    for name, value in _states(parts).items():
        np.testing.assert_array_equal(value, expected[name], err_msg=name)


@pytest.mark.parametrize("name, margins, expected", [
    ("arcface", ["loss.margin2=0.2"], (1.0, 0.2, 0.0)),
    ("cosface", ["loss.margin2=0", "loss.margin3=0.35"], (1.0, 0.0, 0.35)),
    ("combined", ["loss.margin1=0.9", "loss.margin2=0.2", "loss.margin3=0.1"], (0.9, 0.2, 0.1))])
def test_loss_name_builds_the_margin(name, margins, expected):
    from paddle_pfc.engine.builder import build_margin
    from paddle_pfc.head.adaface import AdaFace
    from paddle_pfc.head.margin import CombinedMargin

    cfg = load_config(str(CONFIG), [f"loss.name={name}", *margins])
    assert build_margin(cfg.loss) == CombinedMargin(*expected, 16.0)
    cfg = load_config(str(CONFIG), ["loss.name=adaface", "loss.adaface_m=0.3", "loss.adaface_h=0.5",
                                    "loss.adaface_t_alpha=0.1"])
    assert build_margin(cfg.loss) == AdaFace(m=0.3, h=0.5, s=16.0, t_alpha=0.1)


@pytest.mark.parametrize("name, margins", [("cosface", []), ("cosface", ["loss.margin2=0"]),
                                           ("arcface", ["loss.margin3=0.2"]), ("arcface", ["loss.margin1=0.9"]),
                                           ("arcface", ["loss.margin2=-0.1"])])
def test_a_named_margin_refuses_margins_of_another(name, margins):
    """loss.name cosface with ArcFace's default margin2 (or any margins not its own) is refused,
    naming what it needs: a run never trains another margin than its name says."""
    with pytest.raises(ConfigError, match=rf"loss\.name: '{name}' is the margin .* it needs margin1 1"):
        load_config(str(CONFIG), [f"loss.name={name}", *margins])


@pytest.mark.parametrize("override, key", [("loss.name=magface", "loss.name"),
                                           ("loss.adaface_h=0", "loss.adaface_h"),
                                           ("loss.adaface_t_alpha=0", "loss.adaface_t_alpha"),
                                           ("classifier.kernels=fused", "classifier.kernels")])
def test_bad_adaface_settings_are_named(override, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config(str(CONFIG), ["loss.name=adaface", override] if "name=" not in override else [override])
