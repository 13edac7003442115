"""An exported model loaded for running: raw embeddings of already normalized batches, through
Paddle Inference or onnxruntime (``.onnx``).

:class:`EmbeddingModel` is the part of :class:`paddle_pfc.deploy.inference.FaceEmbedder` that needs
no images (FaceEmbedder adds decoding, resizing and normalization);
:func:`paddle_pfc.deploy.onnx_export.check_onnx` compares two of them. Paddle is imported when a
Paddle model is loaded, not at import.

Errors: a missing model file -> ``FileNotFoundError`` naming it; a corrupted one -> ``ValueError``
naming it. CPU: Paddle Inference runs an export whose batch norms are folded (``export.json``
``"batch_norm": "folded"``, what :mod:`paddle_pfc.deploy.export` writes) with oneDNN and its IR
passes (throughput: docs/deploy.md); an older export, which still holds
batch-norm ops, runs without oneDNN (Paddle 3.3.1's oneDNN batch-norm kernel crashes on a norm
without a scale, as iresnet's last one is).
"""
from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import numpy as np

from paddle_pfc.deploy.model_format import (
    FIELD_NORMALIZATION,
    META_FILE,
    PRECISIONS,
    PathLike,
    locate_model,
    read_export_meta,
)
from paddle_pfc.runtime.process import choose_mkl_kernels

__all__ = ["EmbeddingModel"]


def _bfloat16_precision(onednn: bool, model_dir: Path) -> str:
    """``"bfloat16"`` where a bfloat16 export can run so (oneDNN on, a CPU with native bfloat16
    products), else ``"float32"`` with one warning saying why."""
    from paddle_pfc.kernels.onednn_ops import bfloat16_isa_missing

    missing = bfloat16_isa_missing() if onednn else "it runs without oneDNN here"
    if missing is None:
        return "bfloat16"
    warnings.warn(f"{model_dir}: a bfloat16 export, run in float32 ({missing})", stacklevel=3)
    return "float32"


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


class EmbeddingModel:
    """An exported model (see :func:`paddle_pfc.deploy.model_format.locate_model` for ``model``).

    ``device``: ``"cpu"``, ``"gpu"`` or ``"gpu:N"``.  ``batch_size``: images per model call.
    ``input_size``: only needed when the model has no ``export.json`` and its input size cannot be
    read from the model (Paddle models).  Attributes: ``backend`` ("paddle" | "onnxruntime"),
    ``input_size`` (H, W), ``embedding_size``, ``meta`` (``export.json`` dict or None),
    ``model_files``, ``model_dir``, ``onednn`` (Paddle on CPU: whether oneDNN runs it).
    ``onednn``: None picks it from ``export.json`` (see the module doc); True / False forces it.
    ``ir_optim``: Paddle Inference's IR optimization passes (default on).
    ``precision``: ``"float32"`` or ``"bfloat16"`` (None: ``export.json``'s, else float32); bfloat16
    runs a Paddle model on CPU with oneDNN's bfloat16 products where the CPU has them (AVX512_BF16 /
    AMX) and in float32 elsewhere, saying so once; :attr:`precision` is what runs.
    :meth:`forward` (also ``self(batch)``) is an ``embed_fn`` for
    :mod:`paddle_pfc.evaluation.validation`. A Paddle model on CPU sets ``MKL_DEBUG_CPU_TYPE`` for
    the running CPU where the user has not
    (:func:`~paddle_pfc.runtime.process.choose_mkl_kernels`).
    """

    def __init__(self, model: PathLike, device: str = "cpu", batch_size: int = 64,
                 num_threads: int | None = None, input_size=None, *, onednn: bool | None = None,
                 ir_optim: bool = True, precision: str | None = None):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
        self.batch_size = batch_size
        self.device = str(device).lower()
        if not (self.device == "cpu" or self.device == "gpu" or
                (self.device.startswith("gpu:") and self.device[4:].isdigit())):
            raise ValueError(f"device must be 'cpu', 'gpu' or 'gpu:N', got {device!r}")
        self.num_threads = num_threads or max(1, min(os.cpu_count() or 1, 8))
        files = locate_model(model)
        self.model_dir = files.model_dir
        self.meta = read_export_meta(files.model_dir)
        self.onednn, self.ir_optim = False, bool(ir_optim)
        requested = precision or (self.meta or {}).get("precision", "float32")
        if requested not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {requested!r}")
        self.precision = "float32"
        if files.onnx is not None:
            self.backend = "onnxruntime"
            self._init_onnx(files.onnx)
        else:
            self.backend = "paddle"
            folded = (self.meta or {}).get("batch_norm") == "folded" and files.program.suffix.lower() == ".json"
            self.onednn = self.device == "cpu" and (folded if onednn is None else bool(onednn))
            if requested == "bfloat16":
                self.precision = _bfloat16_precision(self.onednn, files.model_dir)
            self._init_paddle(files.program, files.program.with_suffix(".pdiparams"))
        self._init_io(input_size)

    # ------------------------------------------------------------------ backends
    def _init_paddle(self, json_file: Path, params_file: Path) -> None:
        import paddle.inference as pi

        for f in (json_file, params_file):
            if not f.is_file():
                raise FileNotFoundError(f"{f}: model file not found")
        if json_file.suffix.lower() == ".json":
            try:
                with open(json_file, encoding="utf-8") as fh:
                    json.load(fh)
            except (OSError, UnicodeDecodeError, ValueError) as e:
                raise ValueError(f"{json_file}: corrupted model program (not valid JSON: {e})") from e
        self.model_files = [str(json_file), str(params_file)]
        if self.device == "cpu":
            choose_mkl_kernels()  # MKL's fast kernels on AMD CPUs, where MKL has not run yet in this process
        config = pi.Config(str(json_file), str(params_file))
        config.disable_glog_info()
        config.switch_ir_optim(self.ir_optim)
        if self.device == "cpu":
            config.disable_gpu()
            if self.onednn:
                config.enable_onednn()
                if self.precision == "bfloat16":
                    config.enable_onednn_bfloat16()
            else:
                config.disable_onednn()  # see the module doc
            config.set_cpu_math_library_num_threads(self.num_threads)
        else:
            import paddle

            if not paddle.is_compiled_with_cuda():
                raise ValueError(f"device {self.device!r}: this Paddle build has no CUDA support")
            config.enable_use_gpu(256, int(self.device[4:] or 0) if ":" in self.device else 0)
        try:
            self._predictor = pi.create_predictor(config)
        except Exception as e:  # Paddle raises RuntimeError/ValueError/...
            msg = _first_line(e)
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
        except Exception as e:
            raise ValueError(f"{onnx_file}: corrupted or unsupported ONNX model ({_first_line(e)})") from e
        inp = self._session.get_inputs()[0]
        self._input_name = inp.name
        self._output_name = self._session.get_outputs()[0].name
        self._model_input_shape = list(inp.shape)

    def _init_io(self, input_size) -> None:
        meta = self.meta or {}
        if input_size is not None:
            from paddle_pfc.backbones.common import normalize_input_size

            size = normalize_input_size(input_size)
        elif meta.get("input_size"):
            size = tuple(int(v) for v in meta["input_size"])
        elif self._model_input_shape and all(isinstance(v, int) for v in self._model_input_shape[2:]):
            size = (int(self._model_input_shape[2]), int(self._model_input_shape[3]))
        else:
            raise ValueError(f"{self.model_dir / META_FILE} not found and the input size cannot be "
                             "read from the model: pass input_size=")
        self.input_size: tuple[int, int] = (int(size[0]), int(size[1]))
        norm = meta.get("normalization", FIELD_NORMALIZATION)
        if self.meta is None:  # a model of the field (paddle_pfc's exports always write export.json)
            warnings.warn(f"{self.model_files[0]}: no {META_FILE} beside it: assuming RGB input normalized "
                          f"{FIELD_NORMALIZATION['formula']}, as insightface's released models", UserWarning,
                          stacklevel=3)
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
        batch, run in chunks of ``batch_size``."""
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

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(backend={self.backend!r}, model={self.model_files[0]!r}, "
                f"input_size={self.input_size}, embedding_size={self.embedding_size}, device={self.device!r})")
