"""Independent float64 numpy reference of the Partial FC loss, its gradients and the update rule (and of
bfloat16 rounding)."""
from __future__ import annotations

import numpy as np


def margin_target(cos: np.ndarray, m1: float, m2: float, m3: float) -> np.ndarray:
    return np.cos(m1 * np.arccos(np.clip(cos, -1.0, 1.0)) + m2) - m3


def loss_and_grads(features: np.ndarray, centers: np.ndarray, labels: np.ndarray, kept: np.ndarray,
                   m1: float, m2: float, m3: float, scale: float):
    """Loss over the kept classes and its exact gradients (float64).

    features [N, D]; centers [C, D] (all classes); labels [N] global ids; kept: sorted class ids
    taking part (must contain every label). Returns (loss, dL/dfeatures [N, D], dL/dcenters [C, D]
    with zeros outside ``kept``).
    """
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
    theta = np.arccos(np.clip(cos[rows, col], -1, 1))
    logits[rows, col] = scale * margin_target(cos[rows, col], m1, m2, m3)
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
    slope = m1 * np.sin(m1 * theta + m2) / np.sin(theta)
    grad_cos[rows, col] *= slope
    # cos = xu wu^T; d xu / d x = (I - xu xu^T) / |x|.
    grad_xu = grad_cos @ wu
    grad_wu = grad_cos.T @ xu
    grad_x = (grad_xu - np.sum(grad_xu * xu, axis=1, keepdims=True) * xu) / x_norm
    grad_w = (grad_wu - np.sum(grad_wu * wu, axis=1, keepdims=True) * wu) / w_norm
    grad_centers = np.zeros(centers.shape, np.float64)
    grad_centers[kept] = grad_w
    return loss, grad_x, grad_centers


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
