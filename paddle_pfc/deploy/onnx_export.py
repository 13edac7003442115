"""ONNX: convert an exported Paddle model with paddle2onnx, and check it against Paddle Inference.

Needs the ``onnx`` extra (``pip install 'paddle_pfc[onnx]'``: paddle2onnx >= 2.0, onnx, onnxruntime),
imported on use. The ONNX model has the Paddle model's contract
(:mod:`paddle_pfc.deploy.model_format`).

The conversion installs nothing and needs no network: paddle2onnx's default post-processing
(``optimize_tool="polygraphy"``) imports polygraphy with ``POLYGRAPHY_AUTOINSTALL_DEPS=1`` set in
the process environment, and polygraphy then pip-installs what it misses (onnx-graphsurgeon from
NVIDIA's index, ...) into the running environment. :func:`export_onnx` turns that step off
(``optimize_tool="None"``; onnxruntime folds constants itself when it loads the model) and leaves
the environment variable as it found it.

:func:`check_onnx` compares onnxruntime with Paddle Inference with a relative tolerance
(:mod:`paddle_pfc.deploy.parity`): the largest absolute difference over the largest
magnitude of the reference, so a model whose embeddings reach hundreds is held to the same
float32 rounding as one whose embeddings stay near 1.
"""
from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from paddle_pfc.deploy.model_format import (
    ONNX_FILE,
    PARAMS_FILE,
    PathLike,
    program_file,
    read_export_meta,
    write_export_meta,
)
from paddle_pfc.deploy.parity import relative_difference
from paddle_pfc.deploy.predictor import EmbeddingModel
from paddle_pfc.utils.launch_env import verbose

_AUTOINSTALL = "POLYGRAPHY_AUTOINSTALL_DEPS"

__all__ = ["export_onnx", "check_onnx"]

@contextlib.contextmanager
def _output_kept(said: list[str]) -> Iterator[None]:
    """Keep what the process writes to its stdout / stderr (file descriptors 1 and 2: C++ and
    Python alike) while the block runs, appended to ``said`` at its end; nothing kept with
    ``PADDLE_PFC_VERBOSE``."""
    if verbose():
        yield
        return
    import ctypes
    import io

    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    printed = io.StringIO()  # Python's prints, wherever sys.stdout / sys.stderr point
    with tempfile.TemporaryFile() as kept:
        try:
            os.dup2(kept.fileno(), 1)
            os.dup2(kept.fileno(), 2)
            with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
                yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            ctypes.CDLL(None).fflush(None)  # C/C++ buffered output written before the descriptors return
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            kept.seek(0)
            said.append(kept.read().decode("utf-8", "replace") + printed.getvalue())


def export_onnx(model_dir: PathLike, save_file: PathLike | None = None,
                opset_version: int = 11) -> Path:
    """Convert the Paddle model in ``model_dir`` to ONNX with paddle2onnx (>= 2.0, which reads
    Paddle 3 PIR ``.json`` programs).  Same input/output contract; default file
    ``model_dir/model.onnx`` (then recorded in ``export.json["files"]["onnx"]``).
    ``ImportError`` without paddle2onnx, ``FileNotFoundError`` for a missing model file,
    ``RuntimeError`` when paddle2onnx fails."""
    try:
        import paddle2onnx
    except ImportError as e:
        raise ImportError("ONNX export needs paddle2onnx>=2.0 (and onnxruntime to run it): "
                          "pip install 'paddle_pfc[onnx]' or pip install paddle2onnx onnxruntime") from e
    model_dir = Path(model_dir)
    model = program_file(model_dir)
    params = model_dir / PARAMS_FILE
    for f in (model, params):
        if not f.is_file():
            raise FileNotFoundError(f"{f}: Paddle inference model file not found")
    target = Path(save_file) if save_file is not None else model_dir / ONNX_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    autoinstall = os.environ.get(_AUTOINSTALL)
    said: list[str] = []
    try:
        with _output_kept(said):  # paddle2onnx's banner lines; shown with an error
            # optimize_tool="None": no polygraphy, so nothing is pip-installed (see the module doc)
            paddle2onnx.export(str(model), str(params), save_file=str(target),
                               opset_version=opset_version, enable_onnx_checker=True,
                               enable_optimize=False, optimize_tool="None")  # onnxruntime optimizes at load time
    except Exception as e:  # paddle2onnx raises assorted errors
        output = "".join(said).strip()
        raise RuntimeError(f"paddle2onnx {getattr(paddle2onnx, '__version__', '?')} could not "
                           f"convert {model}: {e}" + (f"\npaddle2onnx said:\n{output}" if output else "")) from e
    finally:
        if autoinstall is None:
            os.environ.pop(_AUTOINSTALL, None)
        else:
            os.environ[_AUTOINSTALL] = autoinstall
    if not target.is_file():
        raise RuntimeError(f"paddle2onnx did not write {target}")
    meta = read_export_meta(model_dir)
    if meta is not None and target.parent.resolve() == model_dir.resolve():
        meta.setdefault("files", {})["onnx"] = target.name
        meta["onnx"] = {"opset_version": opset_version,
                        "paddle2onnx_version": getattr(paddle2onnx, "__version__", "unknown")}
        write_export_meta(model_dir, meta)
    return target


def check_onnx(model_dir: PathLike, onnx_file: PathLike | None = None, batch: int = 4,
               seed: int = 0) -> float:
    """:func:`paddle_pfc.deploy.parity.relative_difference` of onnxruntime's raw embeddings to
    Paddle Inference's in float32 (a bfloat16 export too: the ONNX model is float32), of the model
    in ``model_dir`` on a random normalized batch (CPU); the check passes at most
    :data:`paddle_pfc.deploy.parity.ONNX_RTOL` (``ONNX_RTOL`` here too)."""
    onnx_file = Path(onnx_file) if onnx_file is not None else Path(model_dir) / ONNX_FILE
    pd = EmbeddingModel(model_dir, device="cpu", precision="float32")
    ox = EmbeddingModel(onnx_file, device="cpu")
    h, w = pd.input_size
    x = np.random.RandomState(seed).uniform(-1.0, 1.0, (batch, 3, h, w)).astype(np.float32)
    return relative_difference(ox.forward(x), pd.forward(x))
