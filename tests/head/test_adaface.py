"""AdaFace's margin (paddle_pfc.head.adaface) on 1, 2 and 3 real ranks against the float64 numpy
reference of the same rule (tests/reference.py), that reference against its own finite differences
and (where torch is installed) against a transcription of mk-minchul/AdaFace ``head.py``; the
fused backend refuses it by name."""
from __future__ import annotations

import math

import numpy as np
import pytest

from helpers.head_runs import adaface_cases, check_case, load_ranks, run_world
from reference import adaface_statistics, adaface_target, central_differences, target_loss_and_grads

WORLD_SIZES = [1, pytest.param(2, marks=pytest.mark.multirank), pytest.param(3, marks=pytest.mark.multirank)]


@pytest.mark.parametrize("world_size", WORLD_SIZES)
def test_matches_reference(world_size, tmp_path_factory):
    """Loss, center and backbone steps (the gradients w.r.t. features and centers) and the moving
    averages, three steps, every rank's against the float64 reference."""
    out, cases = run_world(world_size, tmp_path_factory, tag="adaface", cases_for=adaface_cases)
    for case in cases:
        check_case(case, load_ranks(out, case["name"], world_size), world_size)


def test_paddle_kernels_match_reference(tmp_path_factory):
    """The same cases on Paddle's own block operations (``PADDLE_PFC_NATIVE=off``)."""
    out, cases = run_world(1, tmp_path_factory, tag="adaface_paddle_kernels", cases_for=adaface_cases, native=False)
    for case in cases:
        check_case(case, load_ranks(out, case["name"], 1), 1)


def _problem(seed: int = 0):
    rng = np.random.default_rng(seed)
    features = rng.standard_normal((6, 5)) * rng.uniform(0.5, 3.0, (6, 1))
    centers = rng.standard_normal((8, 5))
    return features, centers, np.array([0, 3, 3, 7, 5, 1]), np.arange(8)


@pytest.mark.parametrize("h, t_alpha", [(0.333, 0.01), (2.0, 1.0)])
def test_reference_gradient_matches_finite_differences(h, t_alpha):
    """The scaler is held (AdaFace detaches the norms); the rest is differentiated numerically."""
    features, centers, labels, kept = _problem()
    norms, mean, std = adaface_statistics(features, 20.0, 100.0, t_alpha)
    target = adaface_target(norms, mean, std, 0.4, h)
    _, grad_f, grad_c = target_loss_and_grads(features, centers, labels, kept, 8.0, target)
    for array, grad in ((features, grad_f), (centers, grad_c)):
        numeric = central_differences(
            lambda: target_loss_and_grads(features, centers, labels, kept, 8.0, target)[0], array)
        np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


def test_reference_target_by_hand():
    """One sample at the batch mean (scaler 0): cos(θ) - m; one far above it (scaler 1, clipped):
    cos(θ - m) - 2m; the slope is 0 where a clip holds."""
    target = adaface_target(np.array([5.0, 500.0, 5.0]), 5.0, 1.0, 0.4, 1.0)
    cos, slope = target(np.array([0.3, 0.3, 0.99999]))
    np.testing.assert_allclose(cos[:2], [0.3 - 0.4, math.cos(math.acos(0.3) - 0.4) - 0.8])
    np.testing.assert_allclose(slope[:2], [1.0, math.sin(math.acos(0.3) - 0.4) / math.sin(math.acos(0.3))])
    assert slope[2] == 0.0


def _torch_reference(features, centers, labels, m, h, s, t_alpha, batch_mean, batch_std):
    """mk-minchul/AdaFace ``head.py`` class AdaFace's forward and loss, transcribed (float64)."""
    import torch

    eps = 1e-3
    x = torch.tensor(features, requires_grad=True)
    w = torch.tensor(centers.T.copy(), requires_grad=True)  # the reference's kernel: [D, C]
    label = torch.tensor(labels)
    norms = torch.norm(x, 2, 1, True)
    embeddings = torch.div(x, norms)
    kernel_norm = torch.div(w, torch.norm(w, 2, 0, True))
    cosine = torch.mm(embeddings, kernel_norm).clamp(-1 + eps, 1 - eps)
    safe_norms = torch.clip(norms, min=0.001, max=100).clone().detach()
    with torch.no_grad():
        mean, std = safe_norms.mean().detach(), safe_norms.std().detach()
        batch_mean = mean * t_alpha + (1 - t_alpha) * batch_mean
        batch_std = std * t_alpha + (1 - t_alpha) * batch_std
    margin_scaler = torch.clip((safe_norms - batch_mean) / (batch_std + eps) * h, -1, 1)
    m_arc = torch.zeros(label.size()[0], cosine.size()[1], dtype=cosine.dtype)
    m_arc.scatter_(1, label.reshape(-1, 1), 1.0)
    theta_m = torch.clip(cosine.acos() + m_arc * (m * margin_scaler * -1), min=eps, max=math.pi - eps)
    m_cos = torch.zeros(label.size()[0], cosine.size()[1], dtype=cosine.dtype)
    m_cos.scatter_(1, label.reshape(-1, 1), 1.0)
    logits = (theta_m.cos() - m_cos * (m + m * margin_scaler)) * s
    loss = torch.nn.functional.cross_entropy(logits, label)
    loss.backward()
    return float(loss), x.grad.numpy(), w.grad.numpy().T, float(batch_mean), float(batch_std)


def test_reference_equals_the_original_formula():
    """The float64 reference against a transcription of the original (torch; skipped without it)
    on the same features, centers and labels, two steps (the moving averages move)."""
    pytest.importorskip("torch")
    m, h, s, t_alpha = 0.4, 0.333, 64.0, 0.3
    state = (20.0, 100.0)
    for step in range(2):
        features, centers, labels, kept = _problem(step)
        loss_t, grad_f_t, grad_c_t, mean_t, std_t = _torch_reference(features, centers, labels, m, h, s, t_alpha,
                                                                     *state)
        norms, mean, std = adaface_statistics(features, *state, t_alpha)
        loss, grad_f, grad_c = target_loss_and_grads(features, centers, labels, kept, s,
                                                     adaface_target(norms, mean, std, m, h))
        np.testing.assert_allclose([loss, mean, std], [loss_t, mean_t, std_t], rtol=1e-12)
        np.testing.assert_allclose(grad_f, grad_f_t, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(grad_c, grad_c_t, rtol=1e-9, atol=1e-12)
        state = (mean, std)


@pytest.fixture
def static(static_mode):
    yield


def _head(**kwargs):
    import paddle

    import paddle_pfc

    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        feature = paddle.static.data("feature", [4, 8], "float32")
        label = paddle.static.data("label", [4], "int64")
        head = paddle_pfc.LargeScaleClassifier(feature, label, 0, 1, 10, embedding_size=8, **kwargs)
    return head, main  # the program holds the head's values: kept alive while they are read


def test_fused_backend_refuses_it_by_name(static):
    from paddle_pfc.head.adaface import AdaFace

    with pytest.raises(ValueError, match="fused backend.*not margin 'adaface'.*kernels='composite'"):
        _head(margin=AdaFace(), kernels="fused")
    head, main = _head(margin=AdaFace(), kernels="auto")  # auto takes the composite backend for it
    assert head.kernels == "composite"
    assert [v.name for v in head.margin_states] == ["dist@fc@rank@00000@adaface@batch_mean",
                                                    "dist@fc@rank@00000@adaface@batch_std"]


def test_margin_object_or_scalars_not_both(static):
    from paddle_pfc.head.adaface import AdaFace
    from paddle_pfc.head.margin import CombinedMargin

    with pytest.raises(ValueError, match="give margin= or margin1/margin2/margin3/scale, not both"):
        _head(margin=AdaFace(), scale=32.0)
    with pytest.raises(ValueError, match="margin must be a paddle_pfc.head.margin.Margin"):
        _head(margin=(1.0, 0.5, 0.0, 64.0))
    assert _head(margin=CombinedMargin(1.0, 0.0, 0.4, 30.0))[0].margin == CombinedMargin(1.0, 0.0, 0.4, 30.0)
    assert _head()[0].margin == CombinedMargin(1.0, 0.5, 0.0, 64.0)


@pytest.mark.parametrize("kwargs, message", [(dict(m=-0.1), "AdaFace m must be >= 0"),
                                             (dict(h=0.0), "AdaFace h must be > 0"),
                                             (dict(s=math.inf), "AdaFace s must be a finite number"),
                                             (dict(t_alpha=0.0), r"AdaFace t_alpha must be in \(0, 1\]"),
                                             (dict(t_alpha=True), "AdaFace t_alpha must be a finite number")])
def test_adaface_names_a_bad_parameter(kwargs, message):
    from paddle_pfc.head.adaface import AdaFace

    with pytest.raises(ValueError, match=message):
        AdaFace(**kwargs)
