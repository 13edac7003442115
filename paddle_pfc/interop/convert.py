"""Models the field already has, as paddle_pfc backbones.

Sources (:func:`convert`): arcface_torch ``model.pt`` / ``.pth`` state dicts (torch's zip format or
its legacy pickle format, read without torch and without running the pickle:
:mod:`~paddle_pfc.interop.torch_reader`), ONNX recognition models (arcface_torch ``torch2onnx.py``
exports, insightface's released models: :mod:`~paddle_pfc.interop.onnx_reader`) and PLSC
``.pdparams`` (:mod:`~paddle_pfc.interop.plsc_reader`). Architectures: the rows of the backbone table
with an interop module (:mod:`~paddle_pfc.interop.architectures`: IResNet 18/34/50/100/200 in
:mod:`~paddle_pfc.interop.iresnet_map`, MobileFaceNet in :mod:`~paddle_pfc.interop.mobilefacenet_map`,
arcface_torch's and PLSC's ViTs in :mod:`~paddle_pfc.interop.vit_map`, their ONNX graphs read by
:mod:`~paddle_pfc.interop.vit_graph`).

The backbone, embedding size and input size are read from the tensors; a given ``backbone`` that
disagrees is an error naming both. Every conversion is checked tensor by tensor
(:mod:`~paddle_pfc.interop.mapping`). The sources feed ``(x / 255 - 0.5) / 0.5``; the converted
state takes paddle_pfc's ``(x - 127.5) / 128`` (the factor is folded into the first convolution), so
it trains, validates and exports like any paddle_pfc backbone and embeds an image as the source does.
"""
from __future__ import annotations

import os
from pathlib import Path

from paddle_pfc.interop.architectures import SUPPORTED, detect_tensors, interop_module
from paddle_pfc.interop.common import SOURCE_NORMALIZATION, ConversionError, Converted, SourceTensors, strip_prefix

__all__ = ["ConversionError", "Converted", "SourceTensors", "convert", "read_source", "detect_format",
           "SUPPORTED", "SOURCE_FORMATS"]

SOURCE_FORMATS = ("torch", "onnx", "plsc")
TORCH_SUFFIXES = (".pt", ".pth", ".tar", ".ckpt", ".bin")


def detect_format(path: str | os.PathLike) -> str:
    """``torch``, ``onnx`` or ``plsc`` from the file's extension and first bytes; ``ConversionError``
    when it is none of them."""
    from paddle_pfc.interop.torch_reader import is_torch_legacy

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".onnx":
        return "onnx"
    if suffix == ".pdparams":
        return "plsc"
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError as error:
        raise FileNotFoundError(f"{path}: cannot read ({error.strerror or error})") from error
    if head[:2] == b"PK" or is_torch_legacy(path) or suffix in TORCH_SUFFIXES:
        return "torch"
    if head[:1] == b"\x80":
        return "plsc"
    if head[:1] in (b"\x08", b"\x0a", b"\x12", b"\x1a", b"\x22", b"\x3a"):  # protobuf field tags
        return "onnx"
    raise ConversionError(f"{path}: not a torch (.pt/.pth), ONNX (.onnx) or PLSC (.pdparams) model file")


def read_source(path: str | os.PathLike, source_format: str = "auto") -> SourceTensors:
    """The tensors of ``path`` as its format names them (``module.`` prefix of DDP saves dropped)."""
    from paddle_pfc.interop.plsc_reader import read_plsc
    from paddle_pfc.interop.torch_reader import read_torch_state

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such file")
    fmt = detect_format(path) if source_format == "auto" else source_format
    if fmt not in SOURCE_FORMATS:
        raise ConversionError(f"unknown source format {fmt!r}; one of {', '.join(SOURCE_FORMATS)}")
    if fmt == "onnx":
        from paddle_pfc.interop.onnx_reader import read_onnx

        return read_onnx(path)
    if fmt == "torch":
        source = SourceTensors(path, "torch", "torch", read_torch_state(path))
    else:
        source = read_plsc(path)
    source.tensors, prefix = strip_prefix(source.tensors, path)
    if prefix:
        source.ignored[f"{prefix}*"] = f"prefix {prefix!r} of every key dropped (a DDP / wrapper save)"
    return source


def _describe_unsupported(tensors: dict, path: str) -> str:
    keys = list(tensors)
    text = " ".join(keys[:400]).lower()
    if "patch_embed" in text or ".attn." in text or "blocks.0." in text and "mlp" in text:
        what = "a vision transformer (ViT: patch_embed / attention blocks)"
    elif any(k.endswith("conv3.weight") for k in keys):
        what = "a bottleneck ResNet (conv3 in its blocks)"
    elif any(k.startswith("layer1.") for k in keys):
        what = "a ResNet-like network that is not an arcface_torch IResNet"
    else:
        what = f"{len(keys)} tensors, e.g. " + ", ".join(keys[:5])
    return f"{path}: found {what}; supported: {SUPPORTED}"


def _sha256(path: str | os.PathLike) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def convert(path: str | os.PathLike, backbone: str | None = None, source_format: str = "auto",
            embedding_size: int | None = None, input_size=None) -> Converted:
    """Read ``path`` and map it onto a paddle_pfc backbone (see the module doc)."""
    from paddle_pfc.backbones.table import find_row, row_of
    from paddle_pfc.interop.mapping import map_state

    source = read_source(path, source_format)
    row = find_row(backbone) if backbone else None
    wanted = (row.name if row else backbone.lower()) if backbone else None
    if source.format == "onnx":
        from paddle_pfc.interop.onnx_reader import map_onnx

        found = map_onnx(source, wanted)
        state, ignored = found.state, dict(source.ignored)
        name, dim, size = found.backbone, found.embedding_size, found.input_size
    else:
        detected = detect_tensors(source)
        if detected is None:
            raise ConversionError(_describe_unsupported(source.tensors, source.path))
        name, dim, size, first_conv = detected
    if wanted is not None and wanted != name:
        raise ConversionError(f"{source.path}: holds a {name} backbone, but --backbone {backbone} was given")
    if embedding_size is not None and int(embedding_size) != dim:
        raise ConversionError(f"{source.path}: embedding size {dim}, but {embedding_size} was given")
    if input_size is not None:
        from paddle_pfc.backbones.common import normalize_input_size

        given = normalize_input_size(input_size, row_of(name).input_multiple)
        reconcile = getattr(interop_module(name), "reconcile_input_size", None)
        if source.format != "onnx" and reconcile is not None:
            size = reconcile(size, given)
        if given != tuple(size):
            raise ConversionError(f"{source.path}: input size {list(size)}, but {list(given)} was given")
    if source.format != "onnx":
        state, ignored = map_state(source, name, dim, size, first_conv)
    info = {"format": source.format, "file": os.path.basename(source.path), "sha256": _sha256(source.path),
            "normalization": dict(SOURCE_NORMALIZATION),
            "converted": "source input scale (x - 127.5) / 127.5 folded into the first convolution "
                         "(weights x 128/127.5): the model takes paddle_pfc's (x - 127.5) / 128",
            "tensors": len(state), "ignored": ignored}
    if source.format == "onnx":
        info["batch_norm"] = found.note
    return Converted(name, dim, tuple(size), state, info)
