"""Independent float64 numpy reference of the Partial FC loss, its gradients and the update rule (and of
bfloat16 rounding)."""
from __future__ import annotations

import numpy as np


def margin_target(cos: np.ndarray, m1: float, m2: float, m3: float) -> np.ndarray:
    return np.cos(m1 * np.arccos(np.clip(cos, -1.0, 1.0)) + m2) - m3


def loss_and_grads(features: np.ndarray, centers: np.ndarray, labels: np.ndarray, kept: np.ndarray,
                   m1: float, m2: float, m3: float, scale: float):
    """Loss over the kept classes and its exact gradients (float64), with the combined margin.

    features [N, D]; centers [C, D] (all classes); labels [N] global ids; kept: sorted class ids
    taking part (must contain every label). Returns (loss, dL/dfeatures [N, D], dL/dcenters [C, D]
    with zeros outside ``kept``).
    """
    def combined(cos):
        theta = np.arccos(np.clip(cos, -1, 1))
        return margin_target(cos, m1, m2, m3), m1 * np.sin(m1 * theta + m2) / np.sin(theta)

    return target_loss_and_grads(features, centers, labels, kept, scale, combined)


def target_loss_and_grads(features: np.ndarray, centers: np.ndarray, labels: np.ndarray, kept: np.ndarray,
                          scale: float, target):
    """:func:`loss_and_grads` with any margin: ``target(cos [N]) -> (target cosine [N], its slope [N])``
    (held fixed: the margin's own inputs other than the cosine take no gradient)."""
    x = features.astype(np.float64)
    w = centers[kept].astype(np.float64)
    col = np.searchsorted(kept, labels)
    assert np.all(kept[col] == labels), "every label must be kept"
    x_norm = np.linalg.norm(x, axis=1, keepdims=True)
    w_norm = np.linalg.norm(w, axis=1, keepdims=True)
    xu, wu = x / x_norm, w / w_norm
    cos = xu @ wu.T
    rows = np.arange(len(x))
    logits = scale * cos
    target_cos, slope = target(cos[rows, col])
    logits[rows, col] = scale * target_cos
    shift = logits.max(axis=1, keepdims=True)
    exp = np.exp(logits - shift)
    denom = exp.sum(axis=1, keepdims=True)
    loss = np.mean(np.log(denom[:, 0]) + shift[:, 0] - logits[rows, col])
    prob = exp / denom
    # dL/dlogits, then through the margin at the target and the scale to dL/dcos.
    grad_logits = prob.copy()
    grad_logits[rows, col] -= 1.0
    grad_logits /= len(x)
    grad_cos = scale * grad_logits
    grad_cos[rows, col] *= slope
    # cos = xu wu^T; d xu / d x = (I - xu xu^T) / |x|.
    grad_xu = grad_cos @ wu
    grad_wu = grad_cos.T @ xu
    grad_x = (grad_xu - np.sum(grad_xu * xu, axis=1, keepdims=True) * xu) / x_norm
    grad_w = (grad_wu - np.sum(grad_wu * wu, axis=1, keepdims=True) * wu) / w_norm
    grad_centers = np.zeros(centers.shape, np.float64)
    grad_centers[kept] = grad_w
    return loss, grad_x, grad_centers


ADAFACE_EPS = 1e-3


def adaface_statistics(features: np.ndarray, batch_mean: float, batch_std: float, t_alpha: float):
    """``(norms [N], batch_mean, batch_std)``: AdaFace's clipped feature norms and its moving
    averages after this batch (unbiased std), float64."""
    norms = np.clip(np.linalg.norm(features.astype(np.float64), axis=1), 0.001, 100.0)
    return (norms, norms.mean() * t_alpha + (1 - t_alpha) * batch_mean,
            norms.std(ddof=1) * t_alpha + (1 - t_alpha) * batch_std)


def adaface_target(norms: np.ndarray, batch_mean: float, batch_std: float, m: float, h: float):
    """AdaFace's ``target(cos) -> (target cosine, slope)`` for the samples of ``norms``."""
    eps = ADAFACE_EPS
    scaler = np.clip((norms - batch_mean) / (batch_std + eps) * h, -1, 1)

    def target(cos):
        clipped = np.clip(cos, -1 + eps, 1 - eps)
        unclipped = np.arccos(clipped) - m * scaler
        theta = np.clip(unclipped, eps, np.pi - eps)
        inside = (np.abs(cos) <= 1 - eps) & (unclipped >= eps) & (unclipped <= np.pi - eps)
        slope = np.where(inside, np.sin(theta) / np.sqrt(1 - clipped * clipped), 0.0)
        return np.cos(theta) - (m + m * scaler), slope

    return target


def central_differences(loss_of, array: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d loss_of() / d array by central differences, ``array`` perturbed in place one element at a
    time (and restored)."""
    numeric = np.zeros_like(array)
    for index in np.ndindex(array.shape):
        saved = array[index]
        array[index] = saved + eps
        plus = loss_of()
        array[index] = saved - eps
        minus = loss_of()
        array[index] = saved
        numeric[index] = (plus - minus) / (2 * eps)
    return numeric


def momentum_step(param, grad, velocity, lr, momentum, weight_decay, nesterov=False):
    """Paddle's Momentum with L2 decay: v = mu v + (g + wd p); p -= lr v (float64)."""
    g = grad + weight_decay * param
    v = momentum * velocity + g
    step = g + momentum * v if nesterov else v
    return param - lr * step, v


def balanced_split(num_classes: int, world_size: int) -> list[tuple[int, int]]:
    """(start, count) per rank, written independently of the package."""
    out, start = [], 0
    for r in range(world_size):
        count = num_classes // world_size + (1 if r < num_classes % world_size else 0)
        out.append((start, count))
        start += count
    return out


def round_bfloat16(a) -> np.ndarray:
    """float32 ``a`` rounded to bfloat16 (nearest, ties to even), as float64."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def adamw_step(param, grad, moment1, moment2, steps, lr, beta1, beta2, eps, weight_decay):
    """torch.optim.AdamW's documented step (float64): ``steps`` the step number t (this step
    included: a scalar, or one a row as [rows, 1]). Returns (param, moment1, moment2)."""
    param = param * (1.0 - lr * weight_decay)
    moment1 = beta1 * moment1 + (1.0 - beta1) * grad
    moment2 = beta2 * moment2 + (1.0 - beta2) * grad * grad
    corrected1 = moment1 / (1.0 - beta1 ** steps)
    corrected2 = moment2 / (1.0 - beta2 ** steps)
    return param - lr * corrected1 / (np.sqrt(corrected2) + eps), moment1, moment2
