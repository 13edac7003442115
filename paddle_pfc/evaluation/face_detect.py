"""Face detection with a user-supplied SCRFD ONNX model (insightface's ``scrfd_*_bnkps.onnx``).

The model takes a float32 NCHW RGB image normalized ``(x - 127.5) / 128`` (any size that its
strides divide) and returns nine outputs in insightface's order: a score per anchor at strides
8, 16, 32, then the box distances (left, top, right, bottom) of each stride, then the five
landmarks' offsets (x, y) of each stride; two anchors per feature-map cell, row-major; with or
without a leading batch dimension. Distances and offsets are in units of the stride, from the
cell's corner ``(x * stride, y * stride)``.

:class:`FaceDetector` letterboxes an image into at most ``input_size`` (shrunk to fit, never
enlarged -- a face filling a small crop is too large for the strides once enlarged --, top-left,
black padding to a multiple of 32), decodes every anchor scoring at least ``score_threshold``, keeps the best of boxes
that overlap more than ``nms_threshold`` (IoU), and maps boxes and landmarks back to the
image's pixels. Nothing of the model runs but its ONNX graph, in onnxruntime.
"""
from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from paddle_pfc.utils.errors import InputDataError, UsageError

__all__ = ["Face", "FaceDetector", "decode_stride", "non_max_suppression", "STRIDES", "ANCHORS"]

STRIDES = (8, 16, 32)
ANCHORS = 2


class Face(NamedTuple):
    """One detected face: ``box`` (x1, y1, x2, y2), ``score``, ``landmarks`` [5, 2] (x, y)."""

    box: np.ndarray
    score: float
    landmarks: np.ndarray


def decode_stride(scores: np.ndarray, boxes: np.ndarray, points: np.ndarray, stride: int,
                  height: int, width: int, threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(scores [k], boxes [k, 4], landmarks [k, 5, 2])`` of the anchors of one stride scoring at
    least ``threshold``, in the network input's pixels (see the module doc)."""
    rows, cols = height // stride, width // stride
    ys, xs = np.mgrid[:rows, :cols]
    centers = np.repeat(np.stack([xs, ys], axis=-1).reshape(-1, 2) * stride, ANCHORS, axis=0).astype(np.float32)
    keep = np.nonzero(scores >= threshold)[0]
    c = centers[keep]
    d = boxes[keep] * stride
    box = np.stack([c[:, 0] - d[:, 0], c[:, 1] - d[:, 1], c[:, 0] + d[:, 2], c[:, 1] + d[:, 3]], axis=-1)
    kps = points[keep].reshape(-1, 5, 2) * stride + c[:, None, :]
    return scores[keep], box, kps


def non_max_suppression(boxes: np.ndarray, scores: np.ndarray, iou: float) -> list[int]:
    """Indices of the boxes kept, best score first: each drops the lower-scored boxes that overlap
    it by more than ``iou`` (areas counted in whole pixels, ``x2 - x1 + 1``, as insightface)."""
    x1, y1, x2, y2 = boxes.T
    areas = (x2 - x1 + 1) * (y2 - y1 + 1)
    order = np.argsort(-scores, kind="stable")
    kept = []
    while order.size:
        i = int(order[0])
        kept.append(i)
        rest = order[1:]
        w = np.maximum(0.0, np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]) + 1)
        h = np.maximum(0.0, np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]) + 1)
        overlap = w * h / (areas[i] + areas[rest] - w * h)
        order = rest[overlap <= iou]
    return kept


class FaceDetector:
    """Faces of RGB images with the SCRFD ONNX model at ``path`` (see the module doc)."""

    def __init__(self, path: str | os.PathLike, input_size: tuple[int, int] = (640, 640),
                 score_threshold: float = 0.5, nms_threshold: float = 0.4) -> None:
        import onnxruntime as ort

        self.path = os.fspath(path)
        if not os.path.isfile(self.path):
            raise UsageError(f"{self.path}: face detector model not found")
        if any(side % max(STRIDES) for side in input_size):
            raise UsageError(f"detector input size {input_size}: each side must be a multiple of {max(STRIDES)}")
        try:
            options = ort.SessionOptions()
            options.log_severity_level = 3  # onnxruntime's warnings are not ours to print
            self.session = ort.InferenceSession(self.path, options, providers=["CPUExecutionProvider"])
        except Exception as e:  # onnxruntime raises its own classes for a file that is no model
            raise InputDataError(self.path, f"not a readable ONNX model ({str(e).splitlines()[0]})") from e
        outputs = self.session.get_outputs()
        if len(outputs) != 3 * len(STRIDES):
            raise InputDataError(self.path, f"has {len(outputs)} outputs; an SCRFD detector with landmarks "
                                 f"(*_bnkps.onnx) has {3 * len(STRIDES)}: scores, boxes and landmarks at strides "
                                 f"{', '.join(map(str, STRIDES))}")
        self.input_name = self.session.get_inputs()[0].name
        self.input_size = (int(input_size[0]), int(input_size[1]))  # (height, width)
        self.score_threshold, self.nms_threshold = float(score_threshold), float(nms_threshold)

    def _letterbox(self, rgb: np.ndarray) -> tuple[np.ndarray, float]:
        """The network input of ``rgb`` and the scale from image pixels to input pixels."""
        import cv2

        scale = min(1.0, self.input_size[0] / rgb.shape[0], self.input_size[1] / rgb.shape[1])
        nh, nw = max(1, int(rgb.shape[0] * scale)), max(1, int(rgb.shape[1] * scale))
        step = max(STRIDES)
        h, w = -(-nh // step) * step, -(-nw // step) * step
        canvas = np.zeros((h, w, 3), np.uint8)
        canvas[:nh, :nw] = rgb if (nh, nw) == rgb.shape[:2] else cv2.resize(rgb, (nw, nh))
        blob = (canvas.astype(np.float32).transpose(2, 0, 1)[None] - 127.5) / 128.0
        return blob, nh / rgb.shape[0]

    def _outputs(self, blob: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """``(scores [n], boxes [n, 4], points [n, 10])`` per stride, shapes checked."""
        outs = self.session.run(None, {self.input_name: blob})
        h, w = blob.shape[2:]
        per_stride = []
        for k, stride in enumerate(STRIDES):
            n = (h // stride) * (w // stride) * ANCHORS
            arrays = [np.asarray(outs[k + j * len(STRIDES)], np.float32) for j in range(3)]
            for arr, cols, what in zip(arrays, (1, 4, 10), ("scores", "boxes", "landmarks")):
                if arr.size != n * cols:
                    raise InputDataError(self.path, f"{what} at stride {stride} hold {arr.size} values, expected "
                                         f"{n} anchors x {cols} for a {w}x{h} input")
            per_stride.append((arrays[0].reshape(n), arrays[1].reshape(n, 4), arrays[2].reshape(n, 10)))
        return per_stride

    def detect(self, rgb: np.ndarray) -> list[Face]:
        """The faces of ``rgb`` (HWC uint8), best score first, in the image's pixels."""
        blob, scale = self._letterbox(rgb)
        h, w = blob.shape[2:]
        decoded = [decode_stride(s, b, p, stride, h, w, self.score_threshold)
                   for (s, b, p), stride in zip(self._outputs(blob), STRIDES)]
        scores = np.concatenate([d[0] for d in decoded])
        boxes = np.concatenate([d[1] for d in decoded]) / scale
        points = np.concatenate([d[2] for d in decoded]) / scale
        kept = non_max_suppression(boxes, scores, self.nms_threshold)
        return [Face(boxes[i], float(scores[i]), points[i]) for i in kept]
