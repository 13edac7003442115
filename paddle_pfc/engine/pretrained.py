"""Fine-tuning support: a pretrained backbone read from any paddle_pfc artifact, and class centers
initialised from mean embeddings.

Sources :func:`read_pretrained` accepts (``model.pretrained`` / ``tools/train.py --pretrained``):

* a training checkpoint folder, a checkpoints root (its ``latest``) or a ``best/`` folder
  (``meta.json`` + ``backbone.npz``, or ``backbone.pdparams`` of format 1): the architecture
  comes from the saved config; the file is checked against its recorded checksum and its tensors
  for inf/NaN and implausible BatchNorm variances (:mod:`~paddle_pfc.engine.checkpoint`);
* an exported inference model folder (``tools/export.py`` output: ``export.json`` +
  ``model.json`` + ``model.pdiparams``): the architecture comes from ``export.json``. The
  parameter file stores variable names, not structured names; the mapping is rebuilt by
  building the same backbone under a fresh name guard (as export does) and is then VERIFIED:
  the embeddings of the rebuilt program with the mapped weights must equal Paddle Inference's
  on a random batch, otherwise the load is refused;
* a plain state dict file, ``.pdparams`` (``paddle.save(layer.state_dict())`` or a pickled
  ``{name: ndarray}``) or ``.npz``: no architecture is recorded, names and shapes are checked.
  Neither is unpickled beyond arrays and containers
  (:func:`~paddle_pfc.backbones.state.load_state_file`): a file that asks for anything else is
  refused, naming it and what it asked for, and nothing of it runs;
* a model of another framework, converted by :func:`paddle_pfc.interop.convert` (architecture read
  from its tensors): an arcface_torch ``.pt`` / ``.pth``, an ``.onnx``, or a PLSC ``.pdparams``
  with its ``head.*`` (PartialFC) tensors. A PLSC backbone saved without them is indistinguishable
  from a paddle_pfc state dict by its names: convert it with ``paddle-pfc-convert --source-format
  plsc`` (which folds PLSC's input normalization) and fine-tune from the converted folder.

Strict: another backbone or embedding size than the run's is an error naming both; then every
structured name must match (a missing or unexpected tensor, or one of another shape, is an error
naming it). Nothing happens at import.

:func:`init_from_pretrained` is what a fresh training run does with ``model.pretrained`` and
``classifier.center_init``.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from paddle_pfc.utils.errors import UsageError

__all__ = ["PretrainedError", "Pretrained", "read_pretrained", "read_pretrained_early", "check_architecture",
           "check_pretrained", "load_into_scope",
           "class_indices", "mean_embedding_centers", "calibrate_folded_batch_norms", "init_from_pretrained"]

#: Training images whose statistics the batch norms an exporter folded away are given (a random sample).
BATCH_NORM_IMAGES = 256

log = logging.getLogger("paddle_pfc.engine.pretrained")


class PretrainedError(UsageError):
    """A pretrained backbone that cannot initialise this run (names the file and the tensor)."""


@dataclass(frozen=True)
class Pretrained:
    """A backbone state read from ``source``; ``backbone`` / ``embedding_size`` / ``input_size``
    are ``None`` when the file does not record them (plain state dicts)."""

    source: str
    kind: str  # "checkpoint" | "export" | "state_dict" | "converted torch|onnx|plsc"
    state: Mapping[str, np.ndarray]
    backbone: str | None = None
    embedding_size: int | None = None
    input_size: int | None = None
    #: the input normalization of the model it came from, when not paddle_pfc's (x - 127.5) / 128:
    #: the state is brought to 128 here, and exports of the fine-tuned model take this one again
    normalization: dict | None = None


def _source_std(normalization) -> float | None:
    """The ``std`` of a ``(x - 127.5) / std`` normalization outside the model other than 128, else None."""
    if not isinstance(normalization, Mapping) or normalization.get("inside_model"):
        return None
    std, mean = normalization.get("std"), normalization.get("mean", 127.5)
    if not isinstance(std, (int, float)) or isinstance(std, bool) or not 1.0 <= std <= 1000.0 or mean != 127.5:
        return None
    return None if std == 128.0 else float(std)


def _input_side(value) -> int | None:
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        if len(value) == 2 and value[0] != value[1]:
            raise PretrainedError(f"non-square input size {list(value)} is not supported")
        return int(value[0])
    return int(value)


def _from_checkpoint(path: Path) -> Pretrained:
    from paddle_pfc.engine import checkpoint as ckpt

    try:
        config, state = ckpt.load_backbone_state(path)
    except ckpt.CheckpointError as exc:
        raise PretrainedError(f"pretrained {path}: {exc}") from exc
    model = config.get("model", {}) if isinstance(config, Mapping) else {}
    normalization = None
    if (path / "meta.json").is_file():
        normalization = ckpt.read_meta(path).get("input_normalization")
    return Pretrained(str(path), "checkpoint", state, model.get("backbone"),
                      model.get("embedding_size"), _input_side(model.get("input_size")),
                      normalization if _source_std(normalization) else None)


def _from_export(path: Path, meta: dict) -> Pretrained:
    """Parameters of an exported model, keyed by structured name (see the module doc)."""
    from paddle_pfc.deploy import export as pexport
    from paddle_pfc.deploy.inference import FaceEmbedder
    from paddle_pfc.deploy.model_format import META_FILE, TRAINING_STATE_FILE
    from paddle_pfc.deploy.parity import PADDLE_RTOL, relative_difference
    from paddle_pfc.utils.npz_state import StateFileError, load_state

    for key in ("backbone", "embedding_size", "input_size"):
        if key not in meta:
            raise PretrainedError(f"pretrained {path / META_FILE}: no {key!r}")
    if meta.get("dtype", "float32") != "float32":
        raise PretrainedError(f"pretrained {path}: a {meta['dtype']} export; fine-tune from a float32 "
                              "export, a checkpoint or a best/ folder")
    backbone, dim, size = meta["backbone"], int(meta["embedding_size"]), _input_side(meta["input_size"])
    if (path / TRAINING_STATE_FILE).is_file():
        try:
            state = load_state(path / TRAINING_STATE_FILE)
        except StateFileError as exc:
            raise PretrainedError(f"pretrained {exc}") from exc
    elif meta.get("batch_norm") == "folded":
        raise PretrainedError(f"pretrained {path}: the served model holds its batch norms folded into the "
                              f"convolutions and the folder has no {TRAINING_STATE_FILE} (the backbone as "
                              "training names it): fine-tune from the checkpoint it was exported from, or "
                              "export it again")
    else:
        state = _state_from_inference_model(path, backbone, dim, size, meta.get("options"))
    # The state is only trusted once it reproduces the exported model's output.
    try:
        check = pexport.EvalProgram(backbone, dim, size, state, options=meta.get("options"))
    except (KeyError, ValueError) as exc:
        raise PretrainedError(f"pretrained {path}: {exc}") from exc
    x = np.random.default_rng(0).uniform(-1, 1, (2, 3, size, size)).astype(np.float32)
    diff = relative_difference(check(x), FaceEmbedder(path).forward(x))
    if not diff <= PADDLE_RTOL:
        raise PretrainedError(f"pretrained {path}: its backbone state does not reproduce the exported model "
                              f"(embeddings differ by {diff:.3g} of their magnitude; tolerance {PADDLE_RTOL:g})")
    std = _source_std(meta.get("normalization"))
    if std is None:  # a converted model (paddle-pfc-convert) takes 128, but names its source's normalization
        source = meta.get("source", {}).get("normalization") if isinstance(meta.get("source"), Mapping) else None
        return Pretrained(str(path), "export", state, backbone, dim, size,
                          {"inside_model": False, **source} if _source_std(source) else None)
    from paddle_pfc.backbones.input_scale import TRAINING_STD, rescale_input

    return Pretrained(str(path), "export", rescale_input(state, std, TRAINING_STD), backbone, dim, size,
                      dict(meta["normalization"]))


def _state_from_inference_model(path: Path, backbone: str, dim: int, size: int,
                                options: dict | None = None) -> dict[str, np.ndarray]:
    """The parameters of an export written with its batch norms as built (no backbone.npz): read
    from the inference model by the variable names a freshly built backbone gives them."""
    import paddle

    from paddle_pfc.backbones.state import random_state
    from paddle_pfc.deploy import export as pexport
    from paddle_pfc.deploy.model_format import PARAMS_FILE
    from paddle_pfc.utils.paddle_compat import tensor_is_initialized

    prog = pexport.EvalProgram(backbone, dim, size, random_state(backbone, dim, size, options=options),
                               options=options)
    names = prog.variable_names()
    scope = paddle.static.Scope()
    was_dynamic = paddle.in_dynamic_mode()
    paddle.enable_static()
    try:
        exe = paddle.static.Executor(paddle.CPUPlace())
        with paddle.static.scope_guard(scope):
            paddle.static.load_inference_model(str(path / "model"), exe)
    except Exception as exc:  # Paddle raises assorted errors for bad files
        raise PretrainedError(f"pretrained {path}: cannot load the inference model ({exc})") from exc
    finally:
        if was_dynamic:
            paddle.disable_static()
    state = {}
    for key, name in names.items():
        var = scope.find_var(name)
        if var is None or not tensor_is_initialized(var.get_tensor()):
            raise PretrainedError(f"pretrained {path}: tensor {key!r} (variable {name}) is not in "
                                  f"{PARAMS_FILE}; was it exported by another paddle_pfc version?")
        state[key] = np.array(var.get_tensor())
    return state


def _from_file(path: Path) -> Pretrained:
    from paddle_pfc.backbones.state import load_state_file

    if path.suffix.lower() not in (".pdparams", ".npz"):
        return _from_other_framework(path)
    try:
        state = load_state_file(path)
    except (OSError, ValueError) as exc:
        raise PretrainedError(f"pretrained {exc}") from exc
    if any(key.startswith("head.") for key in state):  # PLSC saves its PartialFC next to the backbone
        return _from_other_framework(path)
    return Pretrained(str(path), "state_dict", state)


def _from_other_framework(path: Path) -> Pretrained:
    """An arcface_torch / ONNX / PLSC model converted by :func:`paddle_pfc.interop.convert`."""
    from paddle_pfc.interop.convert import convert

    try:
        converted = convert(path)
    except (OSError, ValueError) as exc:  # ConversionError, UnsafePickleError, MalformedPickleError
        raise PretrainedError(f"pretrained {exc}") from exc
    normalization = converted.source.get("normalization")
    return Pretrained(str(path), f"converted {converted.source['format']}", converted.state,
                      converted.backbone, converted.embedding_size, _input_side(converted.input_size),
                      {"inside_model": False, **normalization} if _source_std(normalization) else None)


def read_pretrained(path: str | Path) -> Pretrained:
    """Read a pretrained backbone from any source listed in the module doc."""
    from paddle_pfc.deploy.model_format import read_export_meta

    path = Path(path).expanduser()
    if path.is_file():
        return _from_file(path)
    if not path.is_dir():
        from paddle_pfc.engine.run_folder import missing_pretrained_message

        raise PretrainedError(missing_pretrained_message(path))
    try:
        export_meta = read_export_meta(path)
    except ValueError as exc:
        raise PretrainedError(f"pretrained {exc}") from exc
    if export_meta is not None:
        return _from_export(path, export_meta)
    if (path / "meta.json").exists() or (path / "latest").exists() or (path / "checkpoints").is_dir():
        return _from_checkpoint(path)
    raise PretrainedError(f"pretrained {path}: not a checkpoint (meta.json), a checkpoints root "
                          "(latest), a best/ folder or an export (export.json)")


_KEPT: dict[tuple[str, int], Pretrained] = {}  # read before the run started, until its first step takes it


def _source_key(path: str | Path) -> tuple[str, int]:
    resolved = Path(path).expanduser().resolve()
    return str(resolved), resolved.stat().st_mtime_ns


def read_pretrained_early(path: str | Path) -> Pretrained:
    """:func:`read_pretrained`, the result kept until :func:`load_into_scope` takes it (same path,
    unchanged file): a run checks its source before it starts and reads it once."""
    pre = read_pretrained(path)
    _KEPT.clear()
    _KEPT[_source_key(path)] = pre
    return pre


def check_architecture(pre: Pretrained, backbone: str, embedding_size: int, input_size: int) -> None:
    """``PretrainedError`` when ``pre`` records another backbone, embedding or input size than the
    run's (each named with both values)."""
    src = pre.source
    if pre.backbone is not None and pre.backbone != backbone:
        raise PretrainedError(f"pretrained {src} is a {pre.backbone} backbone, this run's "
                              f"model.backbone is {backbone} (-o model.backbone={pre.backbone})")
    if pre.embedding_size is not None and int(pre.embedding_size) != int(embedding_size):
        raise PretrainedError(f"pretrained {src} has embedding size {pre.embedding_size}, this run's model."
                              f"embedding_size is {embedding_size} (-o model.embedding_size={pre.embedding_size})")
    if pre.input_size is not None and int(pre.input_size) != int(input_size):
        raise PretrainedError(f"pretrained {src} was trained at input size {pre.input_size}, this "
                              f"run's model.input_size is {input_size} (-o model.input_size={pre.input_size})")


def check_pretrained(pre: Pretrained, backbone: str, embedding_size: int, input_size: int,
                     expected: Mapping[str, tuple[tuple[int, ...], np.dtype]]) -> dict[str, np.ndarray]:
    """``pre.state`` checked against this run's model; returns ``{structured name: array}`` cast
    to the expected dtypes. ``expected``: structured name -> (shape, dtype) of the program."""
    src = pre.source
    check_architecture(pre, backbone, embedding_size, input_size)
    missing = sorted(set(expected) - set(pre.state))
    unexpected = sorted(set(pre.state) - set(expected))
    hint = "" if pre.backbone else f" (is it a {backbone} state dict?)"
    if missing:
        raise PretrainedError(f"pretrained {src}: tensor {missing[0]!r} missing"
                              + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "") + hint)
    if unexpected:
        raise PretrainedError(f"pretrained {src}: unexpected tensor {unexpected[0]!r}"
                              + (f" (and {len(unexpected) - 1} more)" if len(unexpected) > 1 else "") + hint)
    out = {}
    for key, (shape, dtype) in expected.items():
        value = np.asarray(pre.state[key])
        if tuple(value.shape) != tuple(shape):
            raise PretrainedError(f"pretrained {src}: tensor {key!r} has shape {list(value.shape)}, "
                                  f"this run's {backbone} (embedding {embedding_size}) has {list(shape)}")
        if value.dtype.kind != "f" or not np.all(np.isfinite(value)):
            raise PretrainedError(f"pretrained {src}: tensor {key!r} is not finite floating point")
        out[key] = value.astype(dtype, copy=False)
    return out


def load_into_scope(path: str | Path, model_cfg, target) -> Pretrained:
    """Read ``path`` and write the backbone into ``target`` (a
    :class:`~paddle_pfc.engine.checkpoint.CheckpointTarget`: its ``scope``, ``place`` and
    ``backbone_names``), after :func:`check_pretrained` against ``model_cfg``."""
    from paddle_pfc.engine.checkpoint import read_tensor, write_tensor

    pre = _KEPT.pop(_source_key(path), None) or read_pretrained(path)
    expected = {}
    for key, name in target.backbone_names.items():
        current = read_tensor(target.scope, name)
        expected[key] = (current.shape, current.dtype)
    values = check_pretrained(pre, model_cfg.backbone, model_cfg.embedding_size, model_cfg.input_size,
                              expected)
    for key, name in target.backbone_names.items():
        write_tensor(target.scope, name, values[key], target.place)
    return pre


# ------------------------------------------------------------------------------ center init
def class_indices(dataset, class_start: int, num_local: int, per_class: int) -> list[np.ndarray]:
    """Dataset indices of the first ``per_class`` images of each class in
    ``[class_start, class_start + num_local)``, in index order (a class may have fewer)."""
    labels = np.asarray(dataset.read_labels(), dtype=np.int64)  # no image decoded
    local = (labels >= class_start) & (labels < class_start + num_local)
    idx = np.flatnonzero(local)
    order = np.argsort(labels[idx], kind="stable")
    idx, lab = idx[order], labels[idx][order]
    bounds = np.searchsorted(lab, np.arange(class_start, class_start + num_local + 1))
    return [idx[bounds[c]:bounds[c + 1]][:per_class] for c in range(num_local)]


def mean_embedding_centers(embed_fn: Callable[[np.ndarray], np.ndarray], dataset, class_start: int,
                           num_local: int, per_class: int, image_size: int,
                           row_norms: np.ndarray | float = 1.0, batch_size: int = 64,
                           progress=None) -> np.ndarray:
    """``[num_local, D]`` centers: per class the mean of its images' L2-normalised embeddings
    (``embed_fn``: normalized NCHW batch -> raw embeddings), normalised and scaled to
    ``row_norms`` (default unit rows). The head only uses the centers' directions, but their norm
    sets how far one update turns them: at the fresh init's norm (std 0.01, about 0.06 for
    D = 32) the first steps overwrite the initial directions completely (measured), at norm 1
    they are kept. A class without images is an error."""
    from paddle_pfc.data.loader import load_batch

    groups = class_indices(dataset, class_start, num_local, per_class)
    empty = [class_start + c for c, g in enumerate(groups) if len(g) == 0]
    if empty:
        raise PretrainedError(f"classifier.center_init: class {empty[0]} has no image "
                              f"(and {len(empty) - 1} more)" if len(empty) > 1 else
                              f"classifier.center_init: class {empty[0]} has no image")
    flat = np.concatenate(groups)
    owner = np.concatenate([np.full(len(g), c) for c, g in enumerate(groups)])
    sums = None
    for start in range(0, len(flat), batch_size):
        chunk = flat[start:start + batch_size]
        images, _ = load_batch(dataset, chunk, np.zeros(len(chunk), bool), (image_size, image_size))
        emb = np.asarray(embed_fn(images), dtype=np.float64)
        emb /= np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
        if sums is None:
            sums = np.zeros((num_local, emb.shape[1]))
        np.add.at(sums, owner[start:start + batch_size], emb)
        if progress is not None:
            progress.update(len(chunk))
    unit = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return unit * np.asarray(row_norms, dtype=np.float64).reshape(-1, 1)


def calibrate_folded_batch_norms(pre: Pretrained, cfg, target, dataset) -> int:
    """Give the batch norms of ``pre`` that its exporter folded into their convolutions (identity
    after conversion) the statistics of their inputs on :data:`BATCH_NORM_IMAGES` random images of
    ``dataset``, keeping the eval output (:mod:`paddle_pfc.interop.batch_norm_stats`), and write them
    into ``target``; every rank draws the same images. Returns how many were changed."""
    from paddle_pfc.data.loader import load_batch
    from paddle_pfc.engine.checkpoint import write_tensor
    from paddle_pfc.interop.batch_norm_stats import calibrate_identity_batch_norms, identity_batch_norms

    folded = identity_batch_norms(pre.state)
    if not folded or len(dataset) == 0:
        return 0
    size = (cfg.model.input_size, cfg.model.input_size)
    picks = np.sort(np.random.default_rng(cfg.train.seed).choice(
        len(dataset), size=min(len(dataset), BATCH_NORM_IMAGES), replace=False))
    log.info("%d batch norms folded into convolutions by the source's exporter: measuring their inputs' "
             "statistics on %d training images...", len(folded), len(picks))

    def batches():
        for start in range(0, len(picks), 16):
            chunk = picks[start:start + 16]
            yield load_batch(dataset, chunk, np.zeros(len(chunk), bool), size)[0]

    state, changed = calibrate_identity_batch_norms(pre.state, cfg.model.backbone, cfg.model.embedding_size,
                                                    size, batches, options=cfg.model.options)
    for key, name in target.backbone_names.items():
        if not np.array_equal(state[key], np.asarray(pre.state[key])):
            write_tensor(target.scope, name, state[key].astype(np.float32), target.place)
    log.info("%d batch norms folded into convolutions by the source's exporter: running statistics, scale and "
             "shift from %d training images (the eval-mode model unchanged)", changed, len(picks))
    return changed


def init_from_pretrained(cfg, programs, dataset, rank: int) -> dict | None:
    """``cfg.model.pretrained`` into the backbone of ``programs`` (a
    :class:`~paddle_pfc.engine.builder.TrainPrograms`) and, with ``classifier.center_init:
    mean_embedding``, this rank's centers from its classes' mean embeddings in ``dataset`` (for a
    fresh run: a resumed one takes everything from its checkpoint). Returns the source model's input
    normalization when it is not paddle_pfc's (:attr:`Pretrained.normalization`), else None."""
    from paddle_pfc.head.dtypes import convert
    from paddle_pfc.utils.progress import Progress

    pre = load_into_scope(cfg.model.pretrained, cfg.model, programs)
    log.info("backbone initialised from %s (%s)", pre.source, pre.kind)
    if pre.normalization is not None:
        log.info("the source model takes %s: trained on (x - 127.5) / 128 (folded into its first convolution), "
                 "its exports take %s again", pre.normalization.get("formula"), pre.normalization.get("formula"))
    calibrate_folded_batch_norms(pre, cfg, programs, dataset)
    if cfg.classifier.center_init != "mean_embedding":
        return pre.normalization
    head, c = programs.head, cfg.classifier
    total = min(len(dataset), head.num_local * c.center_init_images)
    with Progress(f"center init rank {rank}", total, "images", every_seconds=10.0, write=log) as progress:
        centers = mean_embedding_centers(programs.embed, dataset, head.class_start, head.num_local,
                                         c.center_init_images, cfg.model.input_size, 1.0,
                                         cfg.validation.batch_size, progress)
    programs.write(head.weight.name, convert(centers.astype(np.float32), head.center_dtype))
    return pre.normalization
