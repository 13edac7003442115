"""The training input a config describes: its dataset and the loader over it.

One construction for ``tools/train.py`` (:class:`~paddle_pfc.engine.trainer.Trainer`) and the
benchmarks (``tools/benchmark.py --mode e2e``), so that a benchmark is fed as training is.
"""
from __future__ import annotations

import logging
import time

from paddle_pfc.data.dataset import Dataset
from paddle_pfc.data.formats import data_format
from paddle_pfc.data.loader import BatchLoader, DistributedBatchSampler
from paddle_pfc.utils.errors import UsageError

log = logging.getLogger("paddle_pfc.train")


class DataSizeError(UsageError):
    """One global batch (``train.batch_size`` × ranks) needs more images than the data holds."""


def dataset_from_config(data_cfg, image_size: int) -> Dataset:
    """The dataset of a config's ``data`` section (``kind``, ``root``, ``num_classes`` and the
    settings its row of :data:`~paddle_pfc.data.formats.FORMATS` reads), its images at
    ``image_size``. Logs a line before (what is read) and one after (what was found and how long
    it took); the dataset logs its own steps between."""
    d = data_cfg
    where = f" at {d.root}" if d.root else ""
    log.info("data: indexing the %s data%s", d.kind, where)
    started = time.perf_counter()
    dataset = data_format(d.kind).open(d, image_size)
    log.info("data: %d images of %d classes ready in %.1f s", len(dataset), dataset.num_classes,
             time.perf_counter() - started)
    return dataset


def loader_from_config(data_cfg, dataset: Dataset, batch_size: int, rank: int, world_size: int,
                       image_size: int) -> BatchLoader:
    """The training loader over ``dataset``: ``batch_size`` images a rank and step, shuffled per
    epoch with ``data.seed`` and split over ``world_size`` ranks (the last partial step dropped),
    with the section's ``num_workers``, ``flip`` and ``batch_timeout``. Raises
    :class:`DataSizeError` when the data holds fewer images than one step takes."""
    d = data_cfg
    per_step = batch_size * world_size
    if len(dataset) < per_step:
        where = f" at {d.root}" if d.root else ""
        raise DataSizeError(f"train.batch_size {batch_size} x {world_size} rank(s) = {per_step} images a step, more "
                            f"than the {len(dataset)} images of the {d.kind} data{where}: lower train.batch_size")
    sampler = DistributedBatchSampler(len(dataset), batch_size, rank, world_size, seed=d.seed, shuffle=True,
                                      drop_last=True)
    return BatchLoader(dataset, sampler, image_size, num_workers=d.num_workers, flip=d.flip, seed=d.seed,
                       timeout=d.batch_timeout)
