"""Loader workers against the main process: the batches of ``fork`` and ``spawn`` workers equal the
ones read inline."""
from __future__ import annotations

import numpy as np

from paddle_pfc.data import BatchLoader, DistributedBatchSampler


def assert_workers_read_as_inline(dataset, image_size: int, batches: int,
                                  contexts: tuple[str, ...] = ("fork", "spawn")) -> None:
    """Batches of 4 (seed 3) read with 2 workers of each context equal those read with none."""
    sampler = DistributedBatchSampler(len(dataset), 4, seed=3)
    with BatchLoader(dataset, sampler, image_size, num_workers=0, seed=1) as inline:
        expected = list(inline.epoch(0))
    for context in contexts:
        with BatchLoader(dataset, sampler, image_size, num_workers=2, seed=1, mp_context=context) as loader:
            got = list(loader.epoch(0))
        assert len(got) == len(expected) == batches
        for (images, labels), (ref_images, ref_labels) in zip(got, expected):
            np.testing.assert_array_equal(images, ref_images)
            np.testing.assert_array_equal(labels, ref_labels)
