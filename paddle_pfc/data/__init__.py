"""Data layer: image folders, MXNet RecordIO, synthetic identities, .bin verification sets, batch loading.

Pure numpy / OpenCV; batches are numpy arrays fed to a Paddle static program:
``images`` float32 ``[B, 3, H, W]`` RGB normalized ``(x - 127.5) / 128`` and
``labels`` int64 ``[B]``.
"""
from .bin_set import VerificationSet, load_bin, read_bin, write_bin
from .image_folder import ImageFolderDataset, parse_label_file
from .loader import BatchLoader, DistributedBatchSampler, build_dataset, flip_mask, load_batch
from .recordio import (IRHeader, RecordDataset, RecordIOWriter, pack, read_idx_file, unpack,
                       write_insightface_rec)
from .synthetic import SyntheticFaces, make_verification_set

__all__ = [
    "BatchLoader", "DistributedBatchSampler", "ImageFolderDataset", "IRHeader", "RecordDataset",
    "RecordIOWriter", "SyntheticFaces", "VerificationSet", "build_dataset", "flip_mask", "load_batch",
    "load_bin", "make_verification_set", "pack", "parse_label_file", "read_bin", "read_idx_file", "unpack",
    "write_bin", "write_insightface_rec",
]
