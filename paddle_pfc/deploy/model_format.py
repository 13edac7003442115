"""The exported-model format: file names, the ``export.json`` schema, reading and writing it.

Shared by :mod:`paddle_pfc.deploy.export` (writes models) and :mod:`paddle_pfc.deploy.inference`
(reads them); imports neither, nor Paddle. Layout of an exported model directory::

    out_dir/model.json        PIR program (paddle.static.save_inference_model)
    out_dir/model.pdmodel     instead of model.json: float16 exports (legacy program format)
    out_dir/model.pdiparams   parameters
    out_dir/export.json       how to feed it (below)
    out_dir/model.onnx        only after paddle_pfc.deploy.onnx_export.export_onnx

Model contract: input ``images`` float32 ``[N, 3, H, W]`` (dynamic ``N``), RGB, ALREADY NORMALIZED
``(x - 127.5) / 128`` (NOT inside the model); output one float32 ``[N, embedding_size]`` raw
embedding (not L2-normalized).

``export.json`` keys: ``format`` ("paddle_pfc.face_embedding"), ``version`` (1), ``backbone``,
``embedding_size``, ``input_size`` ``[H, W]``, ``dtype``, ``precision`` (:data:`PRECISIONS`: how Paddle
Inference runs it on CPU; absent in older exports, read as "float32"), ``input`` {name, shape, dtype, layout
"NCHW", color "RGB"}, ``normalization`` {inside_model false, formula "(x - 127.5) / 128", mean
127.5, std 128.0}, ``output`` {shape, dtype, l2_normalized false}, ``files`` {model, params[,
onnx]}, ``serving`` (one line on where it runs), ``paddle_version``, ``paddle_pfc_version``,
``batch_norm`` ("folded": the program holds no batch-norm op, see :mod:`paddle_pfc.deploy.fold`;
"kept"; absent in older exports, read as "kept"); ``non_square`` (how training made non-square
images square, ``pad`` | ``crop`` | ``stretch``: what serving applies by default; absent when not
known); after an ONNX conversion also ``onnx``
{opset_version, paddle2onnx_version}; a model converted from another framework
(``paddle-pfc-convert``, :mod:`paddle_pfc.interop`) also ``source`` {format, file, normalization
(the source's own input normalization), converted (how it was folded into the model: the model
contract above still holds), tensors, ignored, [batch_norm]}.
"""
from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from paddle_pfc.utils.atomic import write_text_atomic
from paddle_pfc.utils.version import VERSION

__all__ = [
    "EXPORT_FORMAT", "EXPORT_VERSION", "NORMALIZATION", "FIELD_NORMALIZATION", "INPUT_NAME", "MODEL_FILE",
    "LEGACY_MODEL_FILE", "PARAMS_FILE", "ONNX_FILE", "META_FILE", "DTYPES", "PRECISIONS", "PathLike", "ModelFiles",
    "export_meta", "write_export_meta", "read_export_meta", "program_file", "locate_model",
]

EXPORT_FORMAT = "paddle_pfc.face_embedding"
EXPORT_VERSION = 1
NORMALIZATION = {"inside_model": False, "formula": "(x - 127.5) / 128", "mean": 127.5, "std": 128.0}
#: What a model without ``export.json`` is fed: the field's convention (insightface's released models,
#: arcface_torch and PLSC exports), ``(x / 255 - 0.5) / 0.5``.
FIELD_NORMALIZATION = {"inside_model": False, "formula": "(x - 127.5) / 127.5", "mean": 127.5, "std": 127.5}
INPUT_NAME = "images"
MODEL_FILE = "model.json"
LEGACY_MODEL_FILE = "model.pdmodel"  # float16 exports (see paddle_pfc.deploy.export)
PARAMS_FILE = "model.pdiparams"
ONNX_FILE = "model.onnx"
META_FILE = "export.json"
#: the backbone state as training names it (unfolded batch norms): what fine-tuning from an export reads
TRAINING_STATE_FILE = "backbone.npz"
DTYPES = ("float32", "float16")
#: How Paddle Inference runs a float32 export on CPU: float32, or bfloat16 products (oneDNN, on CPUs
#: with AVX512_BF16 / AMX; float32 elsewhere)
PRECISIONS = ("float32", "bfloat16")

PathLike = str | os.PathLike


def export_meta(backbone: str, embedding_size: int, input_size: Sequence[int], dtype: str,
                model_file: str, paddle_version: str, precision: str = "float32",
                normalization: dict | None = None, options: dict | None = None,
                non_square: str | None = None) -> dict:
    """The ``export.json`` content of a freshly exported model (key order is the file's);
    ``normalization``: what its input takes (default :data:`NORMALIZATION`); ``options``: the
    backbone row's build options (recorded only when there are any); ``non_square``: the policy
    training made images square by (recorded when known)."""
    h, w = input_size
    serving = ("float32: CPU and GPU" if dtype == "float32" else
               "float16 weights for GPU serving (Paddle has no float16 CPU kernels for "
               "conv/matmul: may not run on CPU); input/output are float32")
    if precision == "bfloat16":
        serving = ("bfloat16 products on CPUs with AVX512_BF16 / AMX (oneDNN), float32 elsewhere and on GPU; "
                   "float32 weights, input and output")
    meta = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "backbone": backbone,
        "embedding_size": embedding_size,
        "input_size": [h, w],
        "dtype": dtype,
        "precision": precision,
        "input": {"name": INPUT_NAME, "shape": [-1, 3, h, w], "dtype": "float32",
                  "layout": "NCHW", "color": "RGB"},
        "normalization": dict(normalization or NORMALIZATION),
        "output": {"shape": [-1, embedding_size], "dtype": "float32", "l2_normalized": False},
        "files": {"model": model_file, "params": PARAMS_FILE},
        "serving": serving,
        "paddle_version": paddle_version,
        "paddle_pfc_version": VERSION,
    }
    if options:
        meta["options"] = dict(options)
    if non_square:
        meta["non_square"] = non_square
    return meta


def write_export_meta(model_dir: PathLike, meta: dict) -> None:
    """Write ``meta`` as ``model_dir/export.json`` (atomically: a temporary file, then a rename)."""
    write_text_atomic(Path(model_dir) / META_FILE, json.dumps(meta, indent=2) + "\n")


def read_export_meta(model_dir: PathLike) -> dict | None:
    """``export.json`` of ``model_dir`` as a dict, ``None`` when absent; ``ValueError`` naming it if corrupt."""
    path = Path(model_dir) / META_FILE
    if not path.is_file():
        return None
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: cannot read export metadata ({e})") from e
    if not isinstance(meta, dict) or meta.get("format") != EXPORT_FORMAT:
        raise ValueError(f"{path}: not a paddle_pfc export.json (format != {EXPORT_FORMAT!r})")
    return meta


def program_file(model_dir: PathLike) -> Path:
    """The program file of ``model_dir``: ``model.json``, else ``model.pdmodel`` when only that
    exists (``model.json`` when neither does)."""
    model_dir = Path(model_dir)
    return next((model_dir / n for n in (MODEL_FILE, LEGACY_MODEL_FILE) if (model_dir / n).is_file()),
                model_dir / MODEL_FILE)


class ModelFiles(NamedTuple):
    """Where a model given by path lives: its folder (``export.json`` is read there) and either
    its ONNX file (run with onnxruntime) or its Paddle program file (``None`` for the other)."""
    model_dir: Path
    program: Path | None
    onnx: Path | None


def locate_model(model: PathLike) -> ModelFiles:
    """Resolve a model path: a ``.onnx`` file; an export directory (Paddle program, or
    ``model.onnx`` when the directory holds no Paddle files); or a ``.json`` / ``.pdmodel``
    program file. Anything else: ``FileNotFoundError`` naming it. Files are not checked here."""
    path = Path(model)
    if path.suffix.lower() == ".onnx":
        return ModelFiles(path.parent, None, path)
    if path.is_dir():
        training_files = any((path / n).exists() for n in ("backbone.npz", "backbone.pdparams", "meta.json"))
        if not (path / META_FILE).exists() and (training_files or (path / "checkpoints").is_dir()):
            raise FileNotFoundError(f"{path}: a training checkpoint or run folder, not an exported model: export "
                                    f"it first (python tools/export.py --checkpoint {path} --out MODEL_DIR), or "
                                    "give it as --checkpoint where the tool takes one")
        program = next((path / n for n in (MODEL_FILE, LEGACY_MODEL_FILE) if (path / n).exists()),
                       path / MODEL_FILE)
        if not program.exists() and not (path / PARAMS_FILE).exists() and (path / ONNX_FILE).exists():
            return ModelFiles(path, None, path / ONNX_FILE)
        return ModelFiles(path, program, None)
    if path.suffix.lower() in (".json", ".pdmodel") and path.name != META_FILE:
        return ModelFiles(path.parent, path, None)
    raise FileNotFoundError(f"{path}: model directory or .onnx file not found")
