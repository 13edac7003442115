"""Export a trained backbone as a Paddle Inference model; backbone states for it.

The exported directory, its model contract and ``export.json`` are described in
:mod:`paddle_pfc.deploy.model_format`. The backbone is built in eval mode: BatchNorm uses its
running statistics, dropout is off. No face detection/alignment is part of the model: feed
aligned crops.

``dtype="float16"`` writes a float16 model for GPU serving (conv/linear/PReLU
weights float16, BatchNorm parameters float32, input and output stay float32:
the casts are inside the model).  Paddle has no float16 CPU kernels for these
ops, so such a model is written on CPU but only runs on GPU.  It is written in
Paddle's legacy program format, ``model.pdmodel`` + ``model.pdiparams`` (Paddle
Inference 3.x loads it): the PIR program builder of a CPU Paddle build refuses
float16 conv2d at build time, and ``paddle.inference.convert_to_mixed_precision``
neither reads PIR ``.json`` nor converts anything on a CPU build (measured, 3.3.1).
``export.json["files"]["model"]`` names the program file actually written.

Main entry points: :func:`export_backbone`, :class:`EvalProgram` (an in-memory
eval program; also an ``embed_fn`` for :mod:`paddle_pfc.evaluation.validation`),
backbone states in :mod:`paddle_pfc.backbones.state`.
The format's names (``META_FILE``, :func:`read_export_meta`, ...) are in
:mod:`paddle_pfc.deploy.model_format`, ONNX in :mod:`paddle_pfc.deploy.onnx_export`.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import paddle

from paddle_pfc.backbones import build_backbone
from paddle_pfc.backbones.common import normalize_input_size
from paddle_pfc.backbones.native_layers import bfloat16_serving, native_inference
from paddle_pfc.backbones.spec import ModelSpec
from paddle_pfc.backbones.state import backbone_state_from_scope
from paddle_pfc.backbones.table import find_row
from paddle_pfc.deploy.model_format import (
    DTYPES,
    INPUT_NAME,
    LEGACY_MODEL_FILE,
    MODEL_FILE,
    ONNX_FILE,
    PARAMS_FILE,
    PRECISIONS,
    TRAINING_STATE_FILE,
    PathLike,
    export_meta,
    write_export_meta,
)
from paddle_pfc.utils.atomic import write_bytes_atomic
from paddle_pfc.utils.npz_state import state_bytes

__all__ = ["EvalProgram", "export_backbone"]

InputSize = int | Sequence[int]  # S or (H, W)


@contextlib.contextmanager
def _static_mode() -> Iterator[None]:
    """Static (PIR) mode inside the block; the caller's mode is restored after."""
    was_dynamic = paddle.in_dynamic_mode()
    if was_dynamic:
        paddle.enable_static()
    try:
        yield
    finally:
        if was_dynamic:
            paddle.disable_static()


@contextlib.contextmanager
def _default_dtype(dtype: str) -> Iterator[None]:
    old = paddle.get_default_dtype()
    paddle.set_default_dtype(dtype)
    try:
        yield
    finally:
        paddle.set_default_dtype(old)


def _to_numpy(value, key: str) -> np.ndarray:
    try:
        arr = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
    except Exception as e:  # report which entry is bad
        raise ValueError(f"state[{key!r}]: cannot convert to a numpy array ({e})") from e
    if arr.dtype.kind not in "fiub":
        raise ValueError(f"state[{key!r}]: expected a numeric array, got dtype {arr.dtype}")
    return arr


class EvalProgram:
    """The backbone in eval mode as a standalone static PIR program with its own scope.

    ``state`` maps the layer's structured ``state_dict()`` names (``conv1.weight``,
    ``bn1._mean``, ``features.weight``, ...) to arrays (numpy or Paddle tensors).
    Strict: a missing, unexpected or wrongly-shaped entry raises ``ValueError``
    naming every such key.  Values are cast to the parameter dtype.

    The program does not touch the caller's global scope or default programs, and
    works whether the caller is in dynamic or static mode (e.g. inside a trainer).
    ``prog(batch)`` runs float32 NCHW normalized images -> raw embeddings
    ``[n, D]`` float32, so an ``EvalProgram`` is an ``embed_fn`` for
    :mod:`paddle_pfc.evaluation.validation`.  ``save(out_dir)`` writes the inference model.
    ``native=True`` (float32 on CPU) builds the program on the native forward kernels
    (:func:`paddle_pfc.backbones.native_layers.native_inference`; the same embeddings up to float32
    rounding, several times faster) for embedding in this process: such a program uses custom ops,
    so :meth:`save` refuses it.
    ``fold_batch_norm=True`` (float32, not native) folds every batch norm of the program
    (:func:`paddle_pfc.deploy.fold.fold_batch_norms`): what :meth:`save` writes by default.
    ``precision="bfloat16"`` (float32, not native) builds the program for bfloat16 serving
    (:func:`paddle_pfc.backbones.native_layers.bfloat16_serving`: the same values here) and records
    it in ``export.json``: Paddle Inference then runs it with oneDNN's bfloat16 products on CPUs
    with AVX512_BF16 / AMX (:mod:`paddle_pfc.deploy.predictor`).
    ``options``: the backbone row's extra build keywords (:mod:`paddle_pfc.backbones.table`).
    :meth:`from_spec` builds one from a :class:`~paddle_pfc.backbones.spec.ModelSpec`.
    """

    def __init__(self, backbone_name: str, embedding_size: int, input_size: InputSize,
                 state: Mapping[str, object], dropout: float = 0.0, dtype: str = "float32",
                 place=None, native: bool = False, fold_batch_norm: bool = False,
                 precision: str = "float32", options: Mapping[str, object] | None = None) -> None:
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
        if precision != "float32" and (native or dtype != "float32"):
            raise ValueError(f"precision={precision!r} is for a float32 program built with native=False")
        if native and dtype != "float32":
            raise ValueError(f"native=True builds a float32 program, got dtype {dtype!r}")
        if fold_batch_norm and (native or dtype != "float32"):
            raise ValueError("fold_batch_norm=True folds a float32 program built with native=False")
        if not isinstance(state, Mapping):
            raise ValueError(f"state must be a mapping name -> array, got {type(state).__name__}")
        self.backbone = backbone_name
        self.normalization: dict | None = None  # what the input takes, for export.json (None: NORMALIZATION)
        self.non_square: str | None = None  # how training made images square, for export.json (None: unknown)
        self.embedding_size = int(embedding_size)
        row = find_row(backbone_name)
        self.input_size = tuple(normalize_input_size(input_size, row.input_multiple if row else 16))
        self.dropout = float(dropout)
        self.options = dict(options or {})
        self.dtype = dtype
        self.precision = precision
        self.native = bool(native)
        self.place = place if place is not None else paddle.CPUPlace()
        self.scope = paddle.static.Scope()
        self.legacy_ir = dtype == "float16"
        h, w = self.input_size
        with _static_mode(), self._ir_guard():
            # Programs are made inside the IR guard: a float16 export is a legacy-IR program.
            self.main = paddle.static.Program()
            self._startup = paddle.static.Program()  # kept alive: PIR values dangle once freed
        with _static_mode(), self._ir_guard(), paddle.utils.unique_name.guard():
            with paddle.static.program_guard(self.main, self._startup):
                self.images = paddle.static.data(INPUT_NAME, [-1, 3, h, w], "float32")
                with _default_dtype(dtype):
                    # BatchNorm keeps float32 parameters under a float16 default dtype.
                    self.layer = build_backbone(backbone_name, embedding_size, self.input_size,
                                                dropout, **self.options)
                self.layer.eval()
                x = self.images if dtype == "float32" else paddle.cast(self.images, dtype)
                with (native_inference() if native else
                      bfloat16_serving() if precision == "bfloat16" else contextlib.nullcontext()):
                    emb = self.layer(x)
                self.embedding = emb if dtype == "float32" else paddle.cast(emb, "float32")
            self._values = dict(self.layer.state_dict())
            self._set_state(state)
            self._exe = paddle.static.Executor(self.place)
        self.batch_norm_folded = False
        self.fold_counts: dict[str, int] = {}  # how the norms were folded (fold_batch_norms)
        if fold_batch_norm:
            from paddle_pfc.deploy.fold import fold_batch_norms

            with _static_mode(), paddle.utils.unique_name.guard():
                self.fold_counts, (self.embedding,) = fold_batch_norms(self.main, self._startup, self.scope, self.place,
                                                        [self.embedding])
            self.batch_norm_folded = True

    @classmethod
    def from_spec(cls, spec: ModelSpec, state: Mapping[str, object], **kwargs) -> EvalProgram:
        """The eval program of ``spec`` with parameters ``state``; ``kwargs`` as for the constructor
        (``dtype``, ``place``, ``native``, ``fold_batch_norm``, ``precision``)."""
        return cls(spec.backbone, spec.embedding_size, spec.input_size, state, spec.dropout,
                   options=spec.options, **kwargs)

    @property
    def spec(self) -> ModelSpec:
        """The model this program runs."""
        return ModelSpec(self.backbone, self.embedding_size, self.input_size, self.dropout, self.options)

    def _ir_guard(self) -> contextlib.AbstractContextManager:
        return paddle.pir_utils.OldIrGuard() if self.legacy_ir else contextlib.nullcontext()

    @property
    def model_file(self) -> str:
        """Program file name written by :meth:`save`."""
        return LEGACY_MODEL_FILE if self.legacy_ir else MODEL_FILE

    # ------------------------------------------------------------------ state
    def variable_names(self) -> dict[str, str]:
        """Structured parameter names -> the names of their variables in :attr:`main` and :attr:`scope`."""
        return {k: v.name for k, v in self._values.items()}

    def expected_shapes(self) -> dict[str, tuple]:
        """Structured parameter names -> expected shape."""
        return {k: tuple(int(d) for d in v.shape) for k, v in self._values.items()}

    def _set_state(self, state: Mapping[str, object]) -> None:
        expected = self.expected_shapes()
        missing = [k for k in expected if k not in state]
        unexpected = sorted(str(k) for k in state if k not in expected)
        arrays, problems = {}, []
        for k, shape in expected.items():
            if k not in state:
                continue
            arr = _to_numpy(state[k], k)
            if tuple(arr.shape) != shape:
                problems.append(f"{k}: expected shape {list(shape)}, got {list(arr.shape)}")
            else:
                arrays[k] = arr
        if missing or unexpected or problems:
            parts = []
            if missing:
                parts.append("missing: " + ", ".join(missing))
            if unexpected:
                parts.append("unexpected: " + ", ".join(unexpected))
            if problems:
                parts.append("wrong shape: " + "; ".join(problems))
            raise ValueError(f"state does not match {self.backbone}(embedding_size="
                             f"{self.embedding_size}, input_size={list(self.input_size)}): "
                             + " | ".join(parts))
        for k, arr in arrays.items():
            value = self._values[k]
            np_dtype = np.float16 if value.dtype == paddle.float16 else np.float32
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"state[{k!r}] contains NaN/Inf")
            tensor = self.scope.var(value.name).get_tensor()
            tensor.set(np.ascontiguousarray(arr, dtype=np_dtype), self.place)

    def state(self) -> dict[str, np.ndarray]:
        """``{structured name: numpy copy}`` of the program's parameters (the folded values once
        folded: then only for this program's own use)."""
        with _static_mode():
            return backbone_state_from_scope(self.layer, self.scope)

    # ------------------------------------------------------------------ run / save
    def __call__(self, batch: np.ndarray) -> np.ndarray:
        out, = self.fetch(batch, [self.embedding])
        return np.asarray(out, dtype=np.float32)

    def fetch(self, batch: np.ndarray, values: list) -> list[np.ndarray]:
        """``values`` (values of :attr:`main`, e.g. a layer's input) computed on ``batch`` (float32
        normalized ``[n, 3, H, W]``)."""
        batch = np.ascontiguousarray(batch, dtype=np.float32)
        h, w = self.input_size
        if batch.ndim != 4 or batch.shape[1:] != (3, h, w):
            raise ValueError(f"expected a float32 batch [n, 3, {h}, {w}], got shape {batch.shape}")
        with _static_mode(), self._ir_guard():
            return list(self._exe.run(self.main, feed={INPUT_NAME: batch}, fetch_list=list(values), scope=self.scope))

    def meta(self) -> dict:
        """The ``export.json`` content for this program."""
        meta = export_meta(self.backbone, self.embedding_size, self.input_size, self.dtype, self.model_file,
                           paddle.__version__, self.precision, self.normalization, self.options, self.non_square)
        meta["batch_norm"] = "folded" if self.batch_norm_folded else "kept"
        return meta

    def save(self, out_dir: PathLike, fold_batch_norm: bool = True) -> Path:
        """Write ``model.json``, ``model.pdiparams`` and ``export.json`` into ``out_dir``, and for a
        float32 program ``backbone.npz``: its state by structured name with the batch norms as
        built (what ``--pretrained`` reads; the served program may hold them folded).

        ``fold_batch_norm`` (float32 programs): write the program with its batch norms folded
        (:mod:`paddle_pfc.deploy.fold`; this program itself stays as it is), which Paddle
        Inference runs with oneDNN (:mod:`paddle_pfc.deploy.predictor`). float16 programs are
        written unfolded."""
        if self.native:
            raise ValueError("EvalProgram(native=True) runs custom ops and cannot be exported; build the "
                             "export with native=False")
        if self.precision == "bfloat16" and not (fold_batch_norm or self.batch_norm_folded):
            raise ValueError("a bfloat16 export needs its batch norms folded (Paddle Inference runs a model "
                             "holding batch-norm ops without oneDNN, so in float32)")
        if fold_batch_norm and self.dtype == "float32" and not self.batch_norm_folded:
            state = self.state()
            folded = EvalProgram.from_spec(self.spec, state, dtype=self.dtype, place=self.place,
                                           fold_batch_norm=True, precision=self.precision)
            folded.normalization = self.normalization  # what its input takes (export.json)
            folded.non_square = self.non_square
            out = folded.save(out_dir)
            write_bytes_atomic(out / TRAINING_STATE_FILE, state_bytes(state, str(out / TRAINING_STATE_FILE)))
            return out
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        # stale files of an earlier export would silently disagree with the new model
        for name in (ONNX_FILE, MODEL_FILE, LEGACY_MODEL_FILE, TRAINING_STATE_FILE):
            if (out / name).exists():
                (out / name).unlink()
        with _static_mode(), self._ir_guard(), paddle.static.scope_guard(self.scope):
            paddle.static.save_inference_model(str(out / "model"), [self.images], [self.embedding],
                                               self._exe, program=self.main)
        for name in (self.model_file, PARAMS_FILE):
            if not (out / name).is_file():
                raise RuntimeError(f"save_inference_model did not write {out / name}")
        if self.dtype == "float32" and not self.batch_norm_folded:
            write_bytes_atomic(out / TRAINING_STATE_FILE, state_bytes(self.state(), str(out / TRAINING_STATE_FILE)))
        write_export_meta(out, self.meta())
        return out


def export_backbone(backbone_name: str, embedding_size: int, input_size: InputSize, state: Mapping[str, object],
                    out_dir: PathLike, dropout: float = 0.0, dtype: str = "float32",
                    fold_batch_norm: bool = True, precision: str = "float32") -> Path:
    """Export a backbone with parameters ``state`` to ``out_dir`` (see the module doc).

    ``state``: ``{structured state_dict name: array}``, e.g. from
    :func:`~paddle_pfc.backbones.state.backbone_state_from_scope` or
    ``paddle_pfc.engine.checkpoint.load_backbone_state``.
    Strict matching (``ValueError`` naming missing / unexpected / wrongly-shaped keys).
    Returns ``Path(out_dir)``.
    ``fold_batch_norm``: see :meth:`EvalProgram.save` (float32 only); ``precision``: see :class:`EvalProgram`.
    """
    return EvalProgram(backbone_name, embedding_size, input_size, state, dropout, dtype,
                       precision=precision).save(out_dir, fold_batch_norm)
