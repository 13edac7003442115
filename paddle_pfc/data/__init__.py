"""Data layer: image folders, MXNet RecordIO, synthetic identities (one row each in
:data:`~paddle_pfc.data.formats.FORMATS`, each a :class:`~paddle_pfc.data.dataset.Dataset`), batch
loading (.bin verification sets: paddle_pfc.evaluation.bin_set).

Pure numpy / OpenCV; batches are numpy arrays fed to a Paddle static program:
``images`` float32 ``[B, 3, H, W]`` RGB normalized ``(x - 127.5) / 128`` and
``labels`` int64 ``[B]``.
"""
from __future__ import annotations

from paddle_pfc.utils.lazy import lazy_getattr

__all__ = [
    "BatchLoader", "DataFormat", "Dataset", "DistributedBatchSampler", "FORMATS", "ImageFolderDataset", "IRHeader",
    "RecordDataset", "RecordIOWriter", "SyntheticFaces", "build_dataset", "data_format", "flip_mask", "load_batch",
    "make_verification_set", "pack", "parse_label_file", "read_idx_file", "unpack", "write_insightface_rec",
    "write_synthetic_rec",
]

#: Where each public name lives (imported on first use: importing the package loads no OpenCV).
_LAZY = {
    **dict.fromkeys(("Dataset",), "dataset"),
    **dict.fromkeys(("FORMATS", "DataFormat", "data_format"), "formats"),
    **dict.fromkeys(("ImageFolderDataset", "parse_label_file"), "image_folder"),
    **dict.fromkeys(("BatchLoader", "DistributedBatchSampler", "build_dataset", "flip_mask", "load_batch"), "loader"),
    **dict.fromkeys(("IRHeader", "RecordDataset", "RecordIOWriter", "pack", "read_idx_file", "unpack",
                     "write_insightface_rec"), "recordio"),
    **dict.fromkeys(("SyntheticFaces", "make_verification_set", "write_synthetic_rec"), "synthetic"),
}


__getattr__ = lazy_getattr(__name__, {name: f"paddle_pfc.data.{module}" for name, module in _LAZY.items()}, globals())
