"""The small-data recipes and the keys that make them safe to change: the learning rate scaled by
the global batch, log lines in short epochs, one input-size key."""
from __future__ import annotations

from pathlib import Path

import pytest

from paddle_pfc.engine.config import ConfigError, load_config, log_interval, resolve_lr

CONFIGS = Path(__file__).resolve().parents[2] / "configs"

# The effective base lr of every shipped recipe at 1, 2 and 8 ranks before train.lr_reference_batch
# existed (insightface's rule 0.1 x global_batch / 512 where train.lr is null; train.lr otherwise).
BEFORE = {"base": (0.025, 0.05, 0.2), "ms1mv3_r50": (0.025, 0.05, 0.2), "ms1mv3_r100": (0.025, 0.05, 0.2),
          "glint360k_r100": (0.1, 0.1, 0.1), "ms1mv2_mobileface": (0.1, 0.1, 0.1), "demo_cpu": (0.1, 0.1, 0.1)}


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_shipped_recipes_keep_their_learning_rate(name):
    cfg = load_config(str(CONFIGS / f"{name}.yaml"), [])
    assert [resolve_lr(cfg, w) for w in (1, 2, 8)] == pytest.approx(BEFORE[name], rel=1e-12)


def test_the_reference_rate_scales_with_the_global_batch():
    """lr = train.lr x global_batch / train.lr_reference_batch: lowering the batch lowers the rate."""
    small = load_config(str(CONFIGS / "train_small.yaml"), [])
    assert (small.train.lr, small.train.lr_reference_batch, small.train.batch_size) == (0.1, 128, 32)
    assert resolve_lr(small, 1) == pytest.approx(0.1 * 32 / 128)
    assert resolve_lr(small, 4) == pytest.approx(0.1)
    halved = load_config(str(CONFIGS / "train_small.yaml"), ["train.batch_size=16"])
    assert resolve_lr(halved, 1) == pytest.approx(0.1 * 16 / 128)
    # lr null with a reference batch: 0.1 at that batch
    assert resolve_lr(load_config(str(CONFIGS / "train_small.yaml"), ["train.lr=null"]), 2) == pytest.approx(0.05)
    # without a reference batch, train.lr is taken as given (configs written before the key)
    assert resolve_lr(load_config(str(CONFIGS / "train_small.yaml"), ["train.lr_reference_batch=null"]), 3) == 0.1
    tuned = load_config(str(CONFIGS / "finetune_small.yaml"), [])
    assert resolve_lr(tuned, 1) == pytest.approx(0.02 * 32 / 128)


@pytest.mark.parametrize("log_every, steps_per_epoch, expected", [
    (10, 5, 1), (10, 1, 1), (10, 16, 4), (10, 40, 10), (10, 1000, 10), (1, 5, 1), (3, 100, 3)])
def test_log_every_gives_a_few_lines_an_epoch(log_every, steps_per_epoch, expected):
    """The trap: log_every 10 with 5 steps an epoch logged one line a run-end."""
    every = log_interval(log_every, steps_per_epoch)
    assert every == expected
    assert steps_per_epoch // every >= min(4, steps_per_epoch) or every == log_every


def test_one_input_size_key():
    """model.input_size alone sets the size (the recipes no longer pin data.image_size to 112);
    an equal data.image_size is accepted, another one is an error naming the way out."""
    for name in ("ms1mv3_r50", "train_small", "demo_cpu"):
        cfg = load_config(str(CONFIGS / f"{name}.yaml"), ["model.input_size=64"])
        assert cfg.data.image_size == 64
    assert load_config(str(CONFIGS / "train_small.yaml"),
                       ["model.input_size=64", "data.image_size=64"]).data.image_size == 64
    with pytest.raises(ConfigError, match="set model.input_size only"):
        load_config(str(CONFIGS / "train_small.yaml"), ["model.input_size=64", "data.image_size=112"])


def test_small_recipes_fit_a_small_set():
    """A 20-identity set of ~10 images each (200 images) trains: the global batch fits the data on
    one and two ranks, the epoch logs a few lines and validation runs each epoch."""
    for name in ("train_small", "finetune_small"):
        cfg = load_config(str(CONFIGS / f"{name}.yaml"), [])
        t = cfg.train
        assert cfg.data.num_classes is None and t.batch_size * 2 <= 200
        steps = 200 // t.batch_size
        assert steps // log_interval(t.log_every, steps) >= 4
        assert cfg.validation.every_steps == 0
    assert load_config(str(CONFIGS / "finetune_small.yaml"), []).model.pretrained == "output/train_small/best"
