"""The float64 reference's gradients agree with central finite differences of its own loss."""
import numpy as np
import pytest

from reference import central_differences, loss_and_grads


@pytest.mark.parametrize("margins", [(1.0, 0.5, 0.0), (1.0, 0.0, 0.4), (0.9, 0.4, 0.15), (1.0, 0.0, 0.0)])
def test_reference_gradient_matches_finite_differences(margins):
    rng = np.random.default_rng(0)
    features, centers = rng.standard_normal((5, 6)), rng.standard_normal((9, 6))
    labels = np.array([0, 3, 3, 7, 8])
    kept = np.array([0, 1, 3, 5, 7, 8])
    args = (*margins, 8.0)
    _, grad_f, grad_c = loss_and_grads(features, centers, labels, kept, *args)
    for array, grad in ((features, grad_f), (centers, grad_c)):
        numeric = central_differences(lambda: loss_and_grads(features, centers, labels, kept, *args)[0], array)
        np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


def test_reference_loss_by_hand():
    # Two classes, one sample exactly on class 0's center: cos = (1, 0); ArcFace target cos(0 + 0.5).
    features = np.array([[2.0, 0.0]])
    centers = np.array([[3.0, 0.0], [0.0, 1.0]])
    with np.errstate(divide="ignore", invalid="ignore"):  # θ = 0: the (unused) gradient is undefined
        loss, _, _ = loss_and_grads(features, centers, np.array([0]), np.array([0, 1]), 1.0, 0.5, 0.0, 4.0)
    target = 4.0 * np.cos(0.5)
    assert np.isclose(loss, np.log(np.exp(target) + np.exp(0.0)) - target)
