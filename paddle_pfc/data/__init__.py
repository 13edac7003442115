"""Data layer: image folders, MXNet RecordIO, synthetic identities (one row each in
:data:`~paddle_pfc.data.formats.FORMATS`, each a :class:`~paddle_pfc.data.dataset.Dataset`), batch
loading (.bin verification sets: paddle_pfc.evaluation.bin_set).

Pure numpy / OpenCV; batches are numpy arrays fed to a Paddle static program:
``images`` float32 ``[B, 3, H, W]`` RGB normalized ``(x - 127.5) / 128`` and
``labels`` int64 ``[B]``.
"""
from .dataset import Dataset
from .formats import FORMATS, DataFormat, data_format
from .image_folder import ImageFolderDataset, parse_label_file
from .loader import BatchLoader, DistributedBatchSampler, build_dataset, flip_mask, load_batch
from .recordio import IRHeader, RecordDataset, RecordIOWriter, pack, read_idx_file, unpack, write_insightface_rec
from .synthetic import SyntheticFaces, make_verification_set, write_synthetic_rec

__all__ = [
    "BatchLoader", "DataFormat", "Dataset", "DistributedBatchSampler", "FORMATS", "ImageFolderDataset", "IRHeader",
    "RecordDataset", "RecordIOWriter", "SyntheticFaces", "build_dataset", "data_format", "flip_mask", "load_batch",
    "make_verification_set", "pack", "parse_label_file", "read_idx_file", "unpack", "write_insightface_rec",
    "write_synthetic_rec",
]
