"""Face embeddings from an exported model (Paddle Inference, or onnxruntime for ``.onnx``).

``FaceEmbedder(model, device="cpu", batch_size=64).embed(images)`` returns
L2-normalized float32 embeddings ``[n, D]`` (cosine similarity = dot product).

``model``: a directory written by :func:`paddle_pfc.deploy.export.export_backbone`
(``model.json`` -- or ``model.pdmodel`` for float16 exports -- + ``model.pdiparams``
+ ``export.json``; a directory holding only
``model.onnx`` is run with onnxruntime), or a path to a ``.onnx`` file (its
``export.json`` is read from the same directory when present).

``images`` may be:

* a file path, a folder path (its image files, non-recursive, sorted by name;
  see :func:`expand_image_paths`), or a list mixing paths and arrays;
* a list of HWC ``uint8`` RGB arrays (or a single one), or a ``uint8`` NHWC batch;
* a float ``[n, 3, H, W]`` array: ALREADY normalized model input, used as is
  (must have the model's ``H, W``; nothing is resized).

Decoded / array images are converted to 3-channel RGB (grayscale is repeated
over 3 channels, alpha is dropped), resized to the model's input size when
they differ -- with a ``UserWarning`` naming the first such image, because a
face-recognition model expects ALIGNED crops and a plain resize is no
alignment -- and normalized as ``export.json`` says (``(x - 127.5) / 128``).

Errors: a missing model file -> ``FileNotFoundError`` naming it; a corrupted
one -> ``ValueError`` naming it; a missing image -> ``FileNotFoundError``, an
undecodable one -> ``ValueError``, both naming the file.

CPU note: Paddle Inference runs with oneDNN disabled; with oneDNN enabled, Paddle
3.3.1's oneDNN BatchNorm kernel segfaulted on these models (measured).
"""
from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from paddle_pfc.data._image import decode_rgb, fit_size
from paddle_pfc.deploy.export import (LEGACY_MODEL_FILE, META_FILE, MODEL_FILE, NORMALIZATION, ONNX_FILE, PARAMS_FILE,
                               read_export_meta)

__all__ = ["FaceEmbedder", "IMAGE_EXTENSIONS", "expand_image_paths", "l2_normalize", "read_image"]

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".ppm", ".pgm")

PathLike = Union[str, os.PathLike]


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalization (zero rows stay zero)."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return x / norms


def expand_image_paths(paths: Union[PathLike, Sequence[PathLike]]) -> List[str]:
    """Files as given, folders replaced by their image files (extensions
    ``IMAGE_EXTENSIONS``, case-insensitive, non-recursive, sorted by name).
    ``FileNotFoundError`` for a path that does not exist, ``ValueError`` for a folder with no image."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out = []
    for p in paths:
        p = os.fspath(p)
        if os.path.isdir(p):
            files = sorted(f for f in os.listdir(p)
                           if f.lower().endswith(IMAGE_EXTENSIONS) and os.path.isfile(os.path.join(p, f)))
            if not files:
                raise ValueError(f"{p}: folder contains no image files ({', '.join(IMAGE_EXTENSIONS)})")
            out.extend(os.path.join(p, f) for f in files)
        elif os.path.isfile(p):
            out.append(p)
        else:
            raise FileNotFoundError(f"{p}: image file or folder not found")
    return out


def read_image(path: PathLike) -> np.ndarray:
    """Decode an image file to RGB ``uint8 [H, W, 3]`` (grayscale -> 3 channels, alpha dropped)."""
    path = os.fspath(path)
    try:
        data = np.fromfile(path, dtype=np.uint8)
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: image file not found") from None
    except OSError as e:
        raise ValueError(f"{path}: cannot read image file ({e})") from e
    return decode_rgb(data, path)


def _as_rgb(arr: np.ndarray, name: str) -> np.ndarray:
    if arr.dtype != np.uint8:
        raise ValueError(f"{name}: expected a uint8 HWC RGB image, got dtype {arr.dtype} "
                         "(pass a float [n, 3, H, W] array for already normalized input)")
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.ndim != 3 or arr.shape[2] not in (1, 3, 4) or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name}: expected an image [H, W], [H, W, 1], [H, W, 3] or [H, W, 4], "
                         f"got shape {arr.shape}")
    if arr.shape[2] == 1:
        arr = np.repeat(arr, 3, axis=2)
    elif arr.shape[2] == 4:
        arr = arr[:, :, :3]
    return arr


class FaceEmbedder:
    """Embeds faces with an exported model; see the module docstring.

    ``device``: ``"cpu"``, ``"gpu"`` or ``"gpu:N"``.  ``batch_size``: images per
    model call.  ``input_size``: only needed when the model has no ``export.json``
    and its input size cannot be read from the model (Paddle models).
    Attributes: ``backend`` ("paddle" | "onnxruntime"), ``input_size`` (H, W),
    ``embedding_size``, ``meta`` (``export.json`` dict or None), ``model_files``.
    """

    def __init__(self, model: PathLike, device: str = "cpu", batch_size: int = 64,
                 num_threads: Optional[int] = None, input_size=None):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
        self.batch_size = batch_size
        self.device = str(device).lower()
        if not (self.device == "cpu" or self.device == "gpu" or
                (self.device.startswith("gpu:") and self.device[4:].isdigit())):
            raise ValueError(f"device must be 'cpu', 'gpu' or 'gpu:N', got {device!r}")
        self.num_threads = num_threads or max(1, min(os.cpu_count() or 1, 8))
        path = Path(model)
        if path.suffix.lower() == ".onnx":
            model_dir, onnx_path = path.parent, path
        elif path.is_dir():
            model_dir = path
            program = next((path / n for n in (MODEL_FILE, LEGACY_MODEL_FILE) if (path / n).exists()),
                           path / MODEL_FILE)
            onnx_path = (path / ONNX_FILE
                         if not program.exists() and not (path / PARAMS_FILE).exists()
                         and (path / ONNX_FILE).exists() else None)
        elif path.suffix.lower() in (".json", ".pdmodel") and path.name != META_FILE:
            model_dir, onnx_path, program = path.parent, None, path
        else:
            raise FileNotFoundError(f"{path}: model directory or .onnx file not found")
        self.model_dir = model_dir
        self.meta = read_export_meta(model_dir)
        if onnx_path is not None:
            self.backend = "onnxruntime"
            self._init_onnx(onnx_path)
        else:
            self.backend = "paddle"
            self._init_paddle(program, program.with_suffix(".pdiparams"))
        self._init_io(input_size)

    # ------------------------------------------------------------------ backends
    def _init_paddle(self, json_file: Path, params_file: Path) -> None:
        import paddle.inference as pi

        for f in (json_file, params_file):
            if not f.is_file():
                raise FileNotFoundError(f"{f}: model file not found")
        if json_file.suffix.lower() == ".json":
            try:
                with open(json_file, "r", encoding="utf-8") as fh:
                    json.load(fh)
            except (OSError, UnicodeDecodeError, ValueError) as e:
                raise ValueError(f"{json_file}: corrupted model program (not valid JSON: {e})") from e
        self.model_files = [str(json_file), str(params_file)]
        config = pi.Config(str(json_file), str(params_file))
        config.disable_glog_info()
        if self.device == "cpu":
            config.disable_gpu()
            config.disable_onednn()  # Paddle 3.3.1 oneDNN batch_norm segfaults on these models
            config.set_cpu_math_library_num_threads(self.num_threads)
        else:
            import paddle

            if not paddle.is_compiled_with_cuda():
                raise ValueError(f"device {self.device!r}: this Paddle build has no CUDA support")
            config.enable_use_gpu(256, int(self.device[4:] or 0) if ":" in self.device else 0)
        try:
            self._predictor = pi.create_predictor(config)
        except Exception as e:  # noqa: BLE001 - Paddle raises RuntimeError/ValueError/...
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            low = msg.lower()
            if any(w in low for w in ("tensor", "load_combine", "deserialize", "param", "partial data")):
                raise ValueError(f"{params_file}: corrupted or mismatched model parameters ({msg})") from e
            raise ValueError(f"cannot load model {json_file} / {params_file}: {msg}") from e
        self._input_name = self._predictor.get_input_names()[0]
        self._output_name = self._predictor.get_output_names()[0]
        self._model_input_shape = None

    def _init_onnx(self, onnx_file: Path) -> None:
        try:
            import onnxruntime as ort
        except ImportError as e:
            raise ImportError("running a .onnx model needs onnxruntime: pip install onnxruntime") from e
        if not onnx_file.is_file():
            raise FileNotFoundError(f"{onnx_file}: model file not found")
        self.model_files = [str(onnx_file)]
        available = ort.get_available_providers()
        if self.device == "cpu":
            providers = ["CPUExecutionProvider"]
        else:
            if "CUDAExecutionProvider" not in available:
                raise ValueError(f"device {self.device!r}: onnxruntime has no CUDAExecutionProvider "
                                 "(install onnxruntime-gpu)")
            dev_id = int(self.device[4:]) if ":" in self.device else 0
            providers = [("CUDAExecutionProvider", {"device_id": dev_id}), "CPUExecutionProvider"]
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.num_threads
        opts.log_severity_level = 3
        try:
            self._session = ort.InferenceSession(str(onnx_file), sess_options=opts, providers=providers)
        except Exception as e:  # noqa: BLE001
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise ValueError(f"{onnx_file}: corrupted or unsupported ONNX model ({msg})") from e
        inp = self._session.get_inputs()[0]
        self._input_name = inp.name
        self._output_name = self._session.get_outputs()[0].name
        self._model_input_shape = list(inp.shape)

    def _init_io(self, input_size) -> None:
        meta = self.meta or {}
        if input_size is not None:
            from paddle_pfc.backbones.iresnet import normalize_input_size

            size = normalize_input_size(input_size)
        elif meta.get("input_size"):
            size = tuple(int(v) for v in meta["input_size"])
        elif self._model_input_shape and all(isinstance(v, int) for v in self._model_input_shape[2:]):
            size = (int(self._model_input_shape[2]), int(self._model_input_shape[3]))
        else:
            raise ValueError(f"{self.model_dir / META_FILE} not found and the input size cannot be "
                             "read from the model: pass input_size=")
        self.input_size: Tuple[int, int] = (int(size[0]), int(size[1]))
        norm = meta.get("normalization", NORMALIZATION)
        if self.meta is None:
            warnings.warn(f"{self.model_dir / META_FILE} not found: assuming RGB input normalized "
                          f"{NORMALIZATION['formula']}", UserWarning, stacklevel=3)
        if norm.get("inside_model"):
            self._mean, self._std = 0.0, 1.0
        else:
            self._mean, self._std = float(norm.get("mean", 127.5)), float(norm.get("std", 128.0))
        self.embedding_size = int(meta["embedding_size"]) if "embedding_size" in meta else None

    # ------------------------------------------------------------------ running
    def _run(self, batch: np.ndarray) -> np.ndarray:
        if self.backend == "paddle":
            handle = self._predictor.get_input_handle(self._input_name)
            handle.reshape(list(batch.shape))
            handle.copy_from_cpu(batch)
            self._predictor.run()
            out = self._predictor.get_output_handle(self._output_name).copy_to_cpu()
        else:
            out = self._session.run([self._output_name], {self._input_name: batch})[0]
        out = np.asarray(out, dtype=np.float32)
        if self.embedding_size is None:
            self.embedding_size = int(out.shape[1])
        return out

    def forward(self, batch_nchw: np.ndarray) -> np.ndarray:
        """Raw (un-normalized) embeddings of an already normalized float ``[n, 3, H, W]``
        batch, run in chunks of ``batch_size``.  An ``embed_fn`` for :mod:`paddle_pfc.evaluation.validation`."""
        x = np.asarray(batch_nchw)
        h, w = self.input_size
        if x.ndim != 4 or x.shape[1:] != (3, h, w):
            raise ValueError(f"expected a float [n, 3, {h}, {w}] batch, got shape {x.shape}")
        if x.dtype.kind != "f":
            raise ValueError(f"expected a float [n, 3, {h}, {w}] batch, got dtype {x.dtype}")
        x = np.ascontiguousarray(x, dtype=np.float32)
        outs = [self._run(x[i:i + self.batch_size]) for i in range(0, x.shape[0], self.batch_size)]
        if not outs:
            return np.zeros((0, self.embedding_size or 0), np.float32)
        return np.concatenate(outs, axis=0)

    __call__ = forward

    def _normalize(self, rgb_batch: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(rgb_batch.transpose(0, 3, 1, 2)).astype(np.float32)
        x -= self._mean
        x *= 1.0 / self._std
        return x

    def _items(self, images) -> List[Tuple[str, object]]:
        """(name, path-or-array) per image."""
        if isinstance(images, (str, os.PathLike)):
            return [(p, p) for p in expand_image_paths(images)]
        if isinstance(images, np.ndarray):
            if images.ndim == 4:
                return [(f"images[{i}]", images[i]) for i in range(images.shape[0])]
            return [("images", images)]
        if not isinstance(images, Iterable):
            raise TypeError(f"images: expected paths, a folder, arrays or an NCHW array, "
                            f"got {type(images).__name__}")
        items = []
        for i, item in enumerate(images):
            if isinstance(item, (str, os.PathLike)):
                items.extend((p, p) for p in expand_image_paths(item))
            elif isinstance(item, np.ndarray):
                items.append((f"images[{i}]", item))
            else:
                raise TypeError(f"images[{i}]: expected a path or a uint8 HWC array, got "
                                f"{type(item).__name__}")
        return items

    def preprocess(self, images) -> np.ndarray:
        """Model input (float32 ``[n, 3, H, W]``, normalized) for ``images`` (see module doc)."""
        if isinstance(images, np.ndarray) and images.ndim == 4 and images.dtype.kind == "f":
            h, w = self.input_size
            if images.shape[1:] != (3, h, w):
                raise ValueError(f"float NCHW input must be [n, 3, {h}, {w}] (already normalized; "
                                 f"not resized), got shape {images.shape}")
            return np.ascontiguousarray(images, dtype=np.float32)
        items = self._items(images)
        if not items:
            h, w = self.input_size
            return np.zeros((0, 3, h, w), np.float32)
        return self._preprocess_items(items)

    def _preprocess_items(self, items) -> np.ndarray:
        h, w = self.input_size
        rgb = np.empty((len(items), h, w, 3), np.uint8)
        resized = []
        for i, (name, item) in enumerate(items):
            img = read_image(item) if isinstance(item, (str, os.PathLike)) else _as_rgb(item, name)
            if img.shape[:2] != (h, w):
                resized.append(f"{name} ({img.shape[0]}x{img.shape[1]})")
                img = fit_size(img, (h, w))
            rgb[i] = img
        if resized:
            warnings.warn(f"FaceEmbedder: resized {len(resized)} image(s) to {h}x{w} (first: {resized[0]}); "
                          "the model expects aligned face crops of that size", UserWarning, stacklevel=4)
        return self._normalize(rgb)

    def embed(self, images, normalize: bool = True, flip: bool = False) -> np.ndarray:
        """Embeddings ``[n, D]`` float32 of ``images`` (order kept; folders sorted by name).

        ``normalize``: L2-normalize the rows (default).  ``flip``: use
        ``emb(x) + emb(flipped x)`` as in validation (twice the compute).
        """
        if isinstance(images, np.ndarray) and images.ndim == 4 and images.dtype.kind == "f":
            chunks = [self.preprocess(images)]
        else:
            items = self._items(images)
            chunks = [self._preprocess_items(items[i:i + self.batch_size])
                      for i in range(0, len(items), self.batch_size)]
        outs = []
        for x in chunks:
            if x.shape[0] == 0:
                continue
            e = self.forward(x)
            if flip:
                e = e + self.forward(np.ascontiguousarray(x[:, :, :, ::-1]))
            outs.append(e)
        if not outs:
            return np.zeros((0, self.embedding_size or 0), np.float32)
        emb = np.concatenate(outs, axis=0)
        return l2_normalize(emb) if normalize else emb

    def __repr__(self) -> str:
        return (f"FaceEmbedder(backend={self.backend!r}, model={self.model_files[0]!r}, "
                f"input_size={self.input_size}, embedding_size={self.embedding_size}, device={self.device!r})")
