"""The training dataset contract: what the batch loader and the trainer ask of a dataset.

Every format of :mod:`paddle_pfc.data.formats` opens to a :class:`Dataset`; a dataset is
random access, picklable (loader workers receive it) and holds no open file at pickling (it reopens
its files in the process that reads them).
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Dataset(Protocol):
    """A random-access training dataset.

    * ``len(ds)``: the number of samples; ``ds[i]`` for ``0 <= i < len(ds)`` ->
      ``(rgb uint8 [H, W, 3], label int)``, the label in ``[0, num_classes)`` (a label outside is a
      ``ValueError`` naming the sample's file or record).
    * ``image_size``: ``(H, W)`` every image is brought to, or None (each image at its own size);
      the trainer sets None for a moment to read the first image as stored.
    * ``non_square``: how an image that is not square becomes the square input (``pad`` | ``crop`` |
      ``stretch``, :mod:`paddle_pfc.data.shape_policy`).
    * ``num_classes``: the identity count the labels are checked against.
    * ``num_skipped``: samples dropped at opening (``data.skip_bad``), 0 for formats that drop none.
    * ``read_labels()``: every sample's label, int64 ``[len(ds)]``, without decoding an image.
    """

    image_size: tuple[int, int] | None
    non_square: str
    num_classes: int

    def __len__(self) -> int: ...

    def __getitem__(self, index: int) -> tuple[np.ndarray, int]: ...

    @property
    def num_skipped(self) -> int: ...

    def read_labels(self) -> np.ndarray: ...
