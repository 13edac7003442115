"""How exported models are compared with what they were exported from: a relative difference.

``relative_difference(actual, reference) = max|actual - reference| / max|reference|``. An
absolute tolerance fails a correct model whose embeddings are large (a random-init iresnet50
reaches ~600, where float32 rounding alone differs by ~3e-3) and passes a wrong one whose
embeddings are tiny; scaled by the reference's largest magnitude, the check holds every model to
the same float32 rounding. Tolerances:

* :data:`PADDLE_RTOL` -- Paddle Inference (batch norm folded, oneDNN) vs the eval program
  (``paddle_pfc.deploy.export.EvalProgram``, Paddle's kernels, norms kept): measured 2e-6..6e-6;
* :data:`ONNX_RTOL` -- onnxruntime vs Paddle Inference on the same export: measured ~2e-6;
* :data:`SOURCE_COSINE` / :data:`SOURCE_RTOL` -- a converted model vs its source framework running
  the source (:func:`agreement`; each side with its own input normalization);
* :data:`BFLOAT16_COSINE` -- a bfloat16 export run with bfloat16 products vs the float32 eval program:
  the smallest cosine of an image's two embeddings (bfloat16 rounds every product's operands).
"""
from __future__ import annotations

import numpy as np

__all__ = ["agreement", "relative_difference", "BFLOAT16_COSINE", "ONNX_RTOL", "PADDLE_RTOL", "SOURCE_COSINE",
           "SOURCE_RTOL"]

#: onnxruntime vs Paddle Inference: different kernels (and summation orders) on the same float32 model
ONNX_RTOL = 1e-4
#: Paddle Inference (batch norm folded, oneDNN) vs the eval program it was exported from
PADDLE_RTOL = 1e-4
#: a converted model vs its source framework: the smallest cosine of an image's two embeddings ...
SOURCE_COSINE = 0.99999
#: ... and the largest relative difference (:func:`relative_difference`)
SOURCE_RTOL = 1e-4
#: a bfloat16 export's embeddings (bfloat16 products) vs the float32 eval program's: the smallest cosine
BFLOAT16_COSINE = 0.999


def relative_difference(actual: np.ndarray, reference: np.ndarray) -> float:
    """``max|actual - reference| / max|reference|`` (float64; inf when the reference is all zero
    but ``actual`` is not, nan when either holds a non-finite value)."""
    a = np.asarray(actual, dtype=np.float64)
    b = np.asarray(reference, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {b.shape}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return float("nan")
    diff = float(np.abs(a - b).max()) if a.size else 0.0
    scale = float(np.abs(b).max()) if b.size else 0.0
    if scale == 0.0:
        return 0.0 if diff == 0.0 else float("inf")
    return diff / scale


def agreement(actual: np.ndarray, reference: np.ndarray) -> tuple[float, float]:
    """``(min cosine, relative difference)`` of two ``[images, embedding]`` arrays: the smallest
    cosine between an image's two embeddings, and :func:`relative_difference` (float64)."""
    a = np.asarray(actual, dtype=np.float64)
    b = np.asarray(reference, dtype=np.float64)
    cosine = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return float(cosine.min()), relative_difference(a, b)
