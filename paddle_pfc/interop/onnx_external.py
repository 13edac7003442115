"""ONNX tensors stored outside the model file (``external_data``), read only from where they may be.

A tensor's external data must be a regular file inside the model's folder (its location relative,
symbolic links resolved before the check), its ``[offset, offset + length)`` within the file and
``length`` the size the tensor's dims and type declare; anything else is a
:class:`~paddle_pfc.interop.common.ConversionError` naming the model and tensor, before a byte of
the file is read. ``onnx.load`` would follow a link out of the folder (``w.bin -> ~/.ssh/id_rsa``).
"""
from __future__ import annotations

import os
import stat
from typing import Any

import numpy as np

from paddle_pfc.interop.common import ConversionError

__all__ = ["load_external_data"]


def load_external_data(model: Any, path: str) -> None:
    """Read the external data of every initializer and ``Constant`` value of ``model`` (loaded
    from ``path`` with ``load_external_data=False``) into it, each checked (see the module doc)."""
    from onnx import TensorProto

    for tensor in _stored_tensors(model):
        if tensor.data_location == TensorProto.EXTERNAL:
            _load_external(tensor, path)


def _stored_tensors(model: Any) -> list:
    """The initializers and ``Constant`` values of ``model``'s graph."""
    tensors = list(model.graph.initializer)
    for node in model.graph.node:
        for attr in node.attribute:
            tensors += ([attr.t] if attr.HasField("t") else []) + list(attr.tensors)
    return tensors


def _declared_bytes(tensor: Any, where: str) -> int:
    from onnx.helper import tensor_dtype_to_np_dtype

    try:
        itemsize = np.dtype(tensor_dtype_to_np_dtype(tensor.data_type)).itemsize
    except (KeyError, TypeError, ValueError) as error:
        raise ConversionError(f"{where}: data type {tensor.data_type} is not a tensor type") from error
    if any(d < 0 for d in tensor.dims):
        raise ConversionError(f"{where}: negative dimension in {list(tensor.dims)}")
    return int(np.prod(list(tensor.dims), dtype=object)) * itemsize


def _load_external(tensor: Any, path: str) -> None:
    """Read ``tensor``'s external data into it: the file must be a regular file inside the model's
    folder (symbolic links resolved) holding ``offset + length`` bytes, and ``length`` must be the
    tensor's declared size; :class:`ConversionError` naming the model and tensor otherwise."""
    from onnx import TensorProto

    where = f"{path} (tensor {tensor.name!r})"
    info = {entry.key: entry.value for entry in tensor.external_data}
    location = info.get("location", "")
    folder = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    target = os.path.realpath(os.path.join(folder, location))
    if not location or os.path.isabs(location) or os.path.commonpath([folder, target]) != folder \
            or target == folder:
        raise ConversionError(f"{where}: external data {location!r} is not a file inside the model's folder "
                              f"{folder} (symbolic links resolved: {target})")
    try:
        status = os.stat(target)
        offset, length = int(info.get("offset", 0)), info.get("length")
    except (OSError, ValueError) as error:
        raise ConversionError(f"{where}: external data {location!r}: {error}") from error
    if not stat.S_ISREG(status.st_mode):
        raise ConversionError(f"{where}: external data {location!r} is not a regular file")
    length = status.st_size - offset if length is None else int(length)
    declared = _declared_bytes(tensor, where)
    if offset < 0 or length < 0 or offset + length > status.st_size:
        raise ConversionError(f"{where}: external data {location!r} bytes [{offset}, {offset + length}) lie "
                              f"outside the file's {status.st_size}")
    if length != declared:
        raise ConversionError(f"{where}: external data {location!r} holds {length} bytes, the tensor's dims "
                              f"{list(tensor.dims)} declare {declared}")
    with open(target, "rb") as f:
        f.seek(offset)
        tensor.raw_data = f.read(length)
    del tensor.external_data[:]
    tensor.data_location = TensorProto.DEFAULT
