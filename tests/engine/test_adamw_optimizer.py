"""``train.optimizer: adamw`` for the backbone: Paddle's AdamW (from ``build_optimizer``) against
torch.optim.AdamW's documented step in float64, with the ``norms_biases`` exemptions and the global
gradient-norm clip; the settings' checks."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.adamw_runs import correction_rtol
from launcher import REPO
from reference import adamw_step

TINY = str(REPO / "tests" / "train_tiny.yaml")
LR, WD, BETAS, EPS, CLIP = 0.05, 0.5, (0.8, 0.99), 1e-6, 0.5


def _net():
    import paddle

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = paddle.nn.Linear(6, 4)
            self.norm = paddle.nn.BatchNorm1D(4)
            self.pos_embed = self.create_parameter([1, 4], default_initializer=paddle.nn.initializer.Normal())

        def forward(self, x):
            return self.norm(self.fc(x)) + self.pos_embed

    return Net()


def _config(tmp_path, *overrides):
    from paddle_pfc.engine.config import load_config

    return load_config(TINY, ["train.optimizer=adamw", f"train.weight_decay={WD}", f"train.grad_clip={CLIP}",
                              f"train.betas=[{BETAS[0]}, {BETAS[1]}]", f"train.eps={EPS}",
                              f"train.output_dir={tmp_path}", *overrides])


def test_backbone_adamw_matches_torch_rule_with_the_exempt_set(static_mode, tmp_path):
    import paddle

    from paddle_pfc.engine.builder import build_optimizer, decay_exempt_names

    cfg = _config(tmp_path, "train.weight_decay_exempt=norms_biases")
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        net = _net()
        x = paddle.static.data("x", [5, 6], "float32")
        loss = paddle.mean(paddle.square(net(x) - 1.0))
        exempt = decay_exempt_names(net, cfg.train.weight_decay_exempt)
        optimizer = build_optimizer(cfg, LR, exempt)
        _, pairs = optimizer.minimize(loss)
    structured = {p.name: key for key, p in net.named_parameters()}
    assert sorted(structured[n] for n in exempt) == ["fc.bias", "norm.bias", "norm.weight", "pos_embed"]
    assert isinstance(optimizer, paddle.optimizer.AdamW)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    scope = paddle.static.global_scope()
    params = {p.name: np.array(scope.find_var(p.name).get_tensor()).astype(np.float64) for p, _ in pairs}
    moments = {n: (np.zeros_like(v), np.zeros_like(v)) for n, v in params.items()}
    rng = np.random.default_rng(0)
    clipped_steps = 0
    for step in range(1, 4):
        grads = exe.run(main, feed={"x": rng.standard_normal((5, 6)).astype(np.float32)},
                        fetch_list=[g for _, g in pairs])
        norm = np.sqrt(sum(float(np.sum(g.astype(np.float64) ** 2)) for g in grads))
        clipped_steps += norm > CLIP
        for (p, _), grad in zip(pairs, grads):
            g = grad.astype(np.float64) * CLIP / max(norm, CLIP)
            decay = 0.0 if p.name in exempt else WD
            new, m1, m2 = adamw_step(params[p.name], g, *moments[p.name], step, LR, *BETAS, EPS, decay)
            got = np.array(scope.find_var(p.name).get_tensor()).astype(np.float64)
            rtol = correction_rtol(BETAS[0], step) + correction_rtol(BETAS[1], step) + 1e-6
            np.testing.assert_allclose(got, new, rtol=0, atol=LR * rtol * 2 + 1e-7 * np.abs(new).max(),
                                       err_msg=f"{structured[p.name]} step {step}")
            if decay == 0.0 and step > 1:  # the decay would move an exempt parameter beyond the tolerance
                decayed = adamw_step(params[p.name], g, *moments[p.name], step, LR, *BETAS, EPS, WD)[0]
                assert np.abs(decayed - new).max() > 5 * (LR * rtol * 2 + 1e-7 * np.abs(new).max())
            params[p.name], moments[p.name] = got, (m1, m2)
    assert clipped_steps, "the clip must act at some step for this test to check it"


def test_exempt_set_of_none_and_of_a_backbone_without_position_embedding():
    from paddle_pfc.backbones import build_backbone
    from paddle_pfc.engine.builder import decay_exempt_names

    backbone = build_backbone("mobilefacenet", 32, 32, 0.0)
    assert decay_exempt_names(backbone, "none") == frozenset()
    exempt = decay_exempt_names(backbone, "norms_biases")
    params = dict(backbone.named_parameters())
    assert exempt == {p.name for p in params.values() if len(p.shape) == 1 and not p.stop_gradient}
    assert any(len(p.shape) > 1 for p in params.values()) and exempt


def test_optimizer_settings_are_checked(tmp_path):
    from paddle_pfc.engine.config import ConfigError, load_config

    cfg = _config(tmp_path)
    assert (cfg.train.optimizer, cfg.train.betas, cfg.train.eps, cfg.train.weight_decay_exempt) == \
        ("adamw", (0.8, 0.99), 1e-6, "none")
    default = load_config(TINY, [f"train.output_dir={tmp_path}"]).train
    assert (default.optimizer, default.betas, default.eps, default.weight_decay_exempt) == \
        ("momentum", (0.9, 0.999), 1e-8, "none")
    with pytest.raises(ConfigError, match="classifier.momentum_dtype: 'int8' with train.optimizer adamw"):
        _config(tmp_path, "classifier.momentum_dtype=int8")
    with pytest.raises(ConfigError, match="train.weight_decay_exempt: 'norms_biases' needs train.optimizer adamw"):
        load_config(TINY, ["train.weight_decay_exempt=norms_biases"])
    with pytest.raises(ConfigError, match="train.lr: required with train.optimizer adamw"):
        _config(tmp_path, "train.lr=null")
    with pytest.raises(ConfigError, match=r"train.betas: must be two values in \[0, 1\)"):
        _config(tmp_path, "train.betas=[0.9]")
    with pytest.raises(ConfigError, match="train.optimizer: must be one of momentum, sgd, adamw; got 'adam'"):
        load_config(TINY, ["train.optimizer=adam"])
