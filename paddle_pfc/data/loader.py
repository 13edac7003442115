"""Training input pipeline: distributed batch sampling + multi-process decoding to numpy batches.

Determinism contract (needed for exact mid-epoch resume): the global permutation
of epoch ``e`` depends only on ``(seed, e)``; sample ``j`` of that permutation
goes to step ``j // (B*W)`` and rank ``(j % (B*W)) // B``; the horizontal flip of
dataset index ``i`` in epoch ``e`` depends only on ``(loader seed, e, i)``.
"""
from __future__ import annotations

import collections
import concurrent.futures
import ctypes
import math
import multiprocessing as mp
import weakref
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from ._image import SizeLike, as_size, fit_size, normalize_nchw
from .dataset import Dataset
from .formats import data_format
from .shape_policy import DEFAULT_NON_SQUARE


# --------------------------------------------------------------------------- sampler
class DistributedBatchSampler:
    """Per-rank batches of dataset indices, identical global shuffle on every rank.

    Each epoch uses ``permutation(num_samples)`` from ``default_rng([seed, epoch])``
    (identity order if ``shuffle=False``). Global step ``s`` consumes permutation
    slice ``[s*B*W, (s+1)*B*W)`` and rank ``r`` takes its ``r``-th block of ``B``,
    so ranks are disjoint and all ranks get ``steps_per_epoch`` batches.
    ``drop_last=True``: ``steps = N // (B*W)`` (the tail is dropped);
    ``drop_last=False``: ``steps = ceil(N / (B*W))`` and the permutation is
    padded by wrapping around (a few samples are then seen twice).
    """

    def __init__(self, num_samples: int, batch_size: int, rank: int = 0, world_size: int = 1, seed: int = 0,
                 shuffle: bool = True, drop_last: bool = True):
        if num_samples <= 0 or batch_size <= 0 or world_size <= 0:
            raise ValueError("num_samples, batch_size and world_size must be positive")
        if not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} outside [0, {world_size})")
        if seed < 0:
            raise ValueError("seed must be >= 0")
        self.num_samples, self.batch_size = int(num_samples), int(batch_size)
        self.rank, self.world_size, self.seed = int(rank), int(world_size), int(seed)
        self.shuffle, self.drop_last = bool(shuffle), bool(drop_last)
        per_step = self.batch_size * self.world_size
        if self.drop_last:
            self.steps_per_epoch = self.num_samples // per_step
            if self.steps_per_epoch == 0:
                raise ValueError(f"{num_samples} samples < one global batch ({batch_size} x {world_size} ranks) "
                                 "with drop_last=True")
        else:
            self.steps_per_epoch = -(-self.num_samples // per_step)

    def __len__(self) -> int:
        return self.steps_per_epoch

    def epoch_permutation(self, epoch: int) -> np.ndarray:
        """The global (all-rank) order of epoch ``epoch``: int64 [steps*B*W]."""
        if self.shuffle:
            perm = np.random.default_rng([self.seed, int(epoch)]).permutation(self.num_samples)
        else:
            perm = np.arange(self.num_samples)
        need = self.steps_per_epoch * self.batch_size * self.world_size
        if need > perm.size:
            perm = np.resize(perm, need)  # wrap-around padding
        return perm[:need].astype(np.int64)

    def batches(self, epoch: int, start_step: int = 0) -> Iterator[np.ndarray]:
        """Yield this rank's index arrays (int64 [B]) for steps ``start_step .. steps_per_epoch-1``."""
        if not 0 <= start_step <= self.steps_per_epoch:
            raise ValueError(f"start_step {start_step} outside [0, {self.steps_per_epoch}]")
        perm = self.epoch_permutation(epoch).reshape(self.steps_per_epoch, self.world_size, self.batch_size)
        for s in range(start_step, self.steps_per_epoch):
            yield perm[s, self.rank].copy()


# --------------------------------------------------------------------------- flips
_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        x = (x + np.uint64(0x9E3779B97F4A7C15)) & _M64
        x = ((x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & _M64
        x = ((x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & _M64
        return x ^ (x >> np.uint64(31))


def flip_mask(seed: int, epoch: int, indices: np.ndarray) -> np.ndarray:
    """bool [len(indices)]: whether dataset index ``i`` is flipped in ``epoch`` (pure function of seed, epoch, i)."""
    base = _splitmix64(np.array([int(seed) & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64))
    base = _splitmix64(base ^ np.uint64(int(epoch) & 0xFFFFFFFFFFFFFFFF))
    h = _splitmix64(base ^ np.asarray(indices, dtype=np.int64).astype(np.uint64))
    return (h >> np.uint64(63)).astype(bool)


# --------------------------------------------------------------------------- batch assembly
def decode_batch_into(dataset, indices: np.ndarray, flips: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Decode ``dataset[indices]`` into ``out`` (uint8 ``[>=B, H, W, 3]``, RGB, resized to H x W,
    flipped where ``flips``); return the labels (int64 ``[B]``). Rows past ``B`` are untouched."""
    h, w = out.shape[1:3]
    labels = np.empty(len(indices), dtype=np.int64)
    num_classes = getattr(dataset, "num_classes", None)
    for j, (idx, fl) in enumerate(zip(indices.tolist(), flips.tolist())):
        img, lab = dataset[idx]
        if num_classes is not None and not 0 <= int(lab) < num_classes:
            raise ValueError(f"{type(dataset).__name__} sample {idx}: label {lab} outside [0, {num_classes})")
        img = fit_size(img, (h, w), getattr(dataset, "non_square", DEFAULT_NON_SQUARE))
        if img.ndim != 3 or img.shape[2] != 3:
            raise ValueError(f"{type(dataset).__name__} sample {idx}: expected HWC RGB, got shape {img.shape}")
        out[j] = img[:, ::-1] if fl else img
        labels[j] = lab
    return labels


def load_batch(dataset, indices: np.ndarray, flips: np.ndarray, image_size) -> tuple[np.ndarray, np.ndarray]:
    """Decode ``dataset[indices]`` -> ``(float32 [B, 3, H, W] normalized, int64 [B])``."""
    h, w = image_size
    imgs = np.empty((len(indices), h, w, 3), dtype=np.uint8)
    labels = decode_batch_into(dataset, indices, flips, imgs)
    return normalize_nchw(imgs), labels


# Set in each worker process by _worker_init: the dataset and the shared uint8 batch slots.
_WORKER_DATASET = None
_WORKER_SLOTS: np.ndarray | None = None


def _slots_view(shared, slot_shape: tuple[int, int, int, int]) -> np.ndarray:
    """``shared`` (a ``RawArray`` of bytes) as uint8 ``[slots, B, H, W, 3]``."""
    return np.frombuffer(shared, dtype=np.uint8).reshape(-1, *slot_shape)


def _stop_opencv_threads_before_fork() -> None:
    """Run OpenCV single-threaded in this process from now on (``cv2.setNumThreads(0)``, which
    also joins its pool's worker threads), before forking decode workers: a child forked while
    one of those threads held the pool's mutex hangs in its first parallel OpenCV call (e.g.
    ``cv2.warpAffine``; the observed case: docs/performance.md). The forked workers inherit the
    setting, so they never touch the pool; the consumer only normalizes (numpy)."""
    import cv2

    cv2.setNumThreads(0)


def _worker_init(dataset, shared, slot_shape) -> None:
    # NB: do not call cv2.setNumThreads here: in a forked child whose parent already used
    # OpenCV's thread pool it deadlocks (observed with opencv-python-headless 4.x); the parent
    # stops the pool before forking instead (_stop_opencv_threads_before_fork).
    global _WORKER_DATASET, _WORKER_SLOTS
    _WORKER_DATASET = dataset
    _WORKER_SLOTS = _slots_view(shared, slot_shape)


def _worker_decode(indices, flips, slot: int) -> np.ndarray:
    """Decode one batch into shared slot ``slot``; only the labels travel back through the pipe."""
    return decode_batch_into(_WORKER_DATASET, indices, flips, _WORKER_SLOTS[slot])


def _shutdown_executor(ex) -> None:
    try:
        ex.shutdown(wait=True, cancel_futures=True)
    except Exception:
        pass


class BatchLoader:
    """Yield ``(images float32 [B, 3, H, W] = (x-127.5)/128 RGB, labels int64 [B])`` batches.

    ``dataset``: a :class:`~paddle_pfc.data.dataset.Dataset`; the loader reads ``len``,
    ``ds[i] -> (rgb uint8 HWC, int label)`` and, when the dataset has them, ``num_classes`` (labels
    checked against it) and ``non_square``.
    Images are resized to ``image_size`` if needed, then flipped horizontally when
    ``flip`` and :func:`flip_mask` ``(seed, epoch, i)`` says so - so batches are a
    pure function of ``(sampler, seed, epoch, step)`` and a resumed run sees the
    same data. ``num_workers > 0`` decodes batches in worker processes
    (``mp_context``, default ``fork`` on Linux) with in-order results and at most
    ``prefetch`` batches in flight per worker. Workers decode straight into
    shared-memory uint8 slots (one per batch in flight) and send back only the labels;
    the consumer normalizes to float32, so the pipe carries a few bytes per batch
    instead of the float32 images. Workers are started lazily, reused across epochs
    and stopped by :meth:`close` (also on garbage collection and at interpreter exit);
    use as a context manager. A worker that dies raises ``BrokenProcessPool``;
    ``timeout`` (seconds per batch, default None = wait forever; training passes
    ``data.batch_timeout``) kills the workers and raises ``TimeoutError`` naming the epoch and step
    instead of hanging on a stuck worker. Fork workers switch OpenCV to one thread in this process
    first (a fork of a running OpenCV thread pool can hang the child).
    With ``spawn``/``forkserver``
    the dataset is pickled to each worker and the worker imports ``paddle_pfc`` (the
    main script needs an ``if __name__ == "__main__":`` guard).
    """

    def __init__(self, dataset, sampler: DistributedBatchSampler, image_size: SizeLike = 112, num_workers: int = 0,
                 flip: bool = True, seed: int = 0, prefetch: int = 2, mp_context: str | None = None,
                 timeout: float | None = None):
        self.dataset, self.sampler = dataset, sampler
        self.image_size = as_size(image_size)
        if self.image_size is None:
            raise ValueError("BatchLoader needs an image_size")
        if sampler.num_samples != len(dataset):
            raise ValueError(f"sampler.num_samples={sampler.num_samples} != len(dataset)={len(dataset)}")
        self.num_workers, self.flip, self.seed = int(num_workers), bool(flip), int(seed)
        self.prefetch = max(1, int(prefetch))
        if mp_context is None:
            mp_context = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
        self.mp_context = mp_context
        self.timeout = timeout
        self._executor = None
        self._finalizer = None
        self._slots: np.ndarray | None = None

    def __len__(self) -> int:
        return self.sampler.steps_per_epoch

    @property
    def steps_per_epoch(self) -> int:
        return self.sampler.steps_per_epoch

    @property
    def in_flight(self) -> int:
        """Batches decoded ahead at most (= shared slots) with workers."""
        return self.prefetch * self.num_workers

    def _flips(self, epoch: int, idx: np.ndarray) -> np.ndarray:
        if not self.flip:
            return np.zeros(len(idx), dtype=bool)
        return flip_mask(self.seed, epoch, idx)

    def _get_executor(self):
        if self._executor is None:
            ctx = mp.get_context(self.mp_context)
            if self.mp_context == "fork":
                _stop_opencv_threads_before_fork()
            slot_shape = (self.sampler.batch_size, *self.image_size, 3)
            shared = ctx.RawArray(ctypes.c_uint8, self.in_flight * math.prod(slot_shape))
            self._slots = _slots_view(shared, slot_shape)
            self._executor = ProcessPoolExecutor(self.num_workers, mp_context=ctx, initializer=_worker_init,
                                                 initargs=(self.dataset, shared, slot_shape))
            self._finalizer = weakref.finalize(self, _shutdown_executor, self._executor)
        return self._executor

    def epoch(self, epoch: int, start_step: int = 0) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Batches of ``epoch`` from step ``start_step`` (see class docstring)."""
        batches = self.sampler.batches(epoch, start_step)
        if self.num_workers <= 0:
            for idx in batches:
                yield load_batch(self.dataset, idx, self._flips(epoch, idx), self.image_size)
            return
        ex = self._get_executor()
        pending: collections.deque = collections.deque()  # (future, slot, batch size, step), oldest first

        def finished() -> tuple[np.ndarray, np.ndarray]:
            future, slot, size, step = pending.popleft()
            try:
                labels = future.result(self.timeout)
            except TimeoutError:
                if future.done():  # the worker's own error
                    raise
                pending.clear()
                self._kill_workers()
                raise TimeoutError(f"loader: no batch from its workers within {self.timeout:g} s (epoch {epoch}, "
                                   f"step {step}): a worker is stuck (a hung file system or decoder?)") from None
            return normalize_nchw(self._slots[slot, :size]), labels  # the slot is free again after this

        try:
            for k, idx in enumerate(batches):
                # Slot k mod in_flight: the batch that used it last was normalized before this submit.
                slot = k % self.in_flight
                pending.append((ex.submit(_worker_decode, idx, self._flips(epoch, idx), slot), slot, len(idx),
                                start_step + k))
                if len(pending) >= self.in_flight:
                    yield finished()
            while pending:
                yield finished()
        finally:
            # Early exit or error: drop queued work, and let running batches finish before their
            # slots can be handed out again by the next epoch.
            for future, _, _, _ in pending:
                if not future.cancel():
                    concurrent.futures.wait([future], timeout=self.timeout)

    __call__ = epoch

    def _kill_workers(self) -> None:
        """Kill the worker processes (one of them is stuck) and drop the pool without waiting for
        it; the next epoch starts new workers."""
        executor, self._executor = self._executor, None
        if self._finalizer is not None:
            self._finalizer.detach()
        self._finalizer = None
        processes = list((getattr(executor, "_processes", None) or {}).values())
        for process in processes:
            process.kill()
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.join(10)

    def close(self) -> None:
        """Stop worker processes (idempotent)."""
        if self._finalizer is not None:
            self._finalizer()
        self._executor = None
        self._finalizer = None
        self._slots = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# --------------------------------------------------------------------------- factory
def build_dataset(kind: str, root: str | None = None, num_classes: int | None = None,
                  image_size: SizeLike = 112, **kwargs) -> Dataset:
    """The dataset of the format ``kind`` (a name or alias of :data:`~paddle_pfc.data.formats.FORMATS`:
    ``synthetic``, ``folder``, ``rec``) over ``root``, ``kwargs`` passed to its class:

    * ``folder``: :class:`ImageFolderDataset` ``(root, label_file='label.txt', skip_bad=False,
      allow_outside_root=False, non_square=...)``
    * ``rec``: :class:`RecordDataset` over ``root/train.rec`` + ``train.idx`` ``(non_square=...)``
    * ``synthetic``: :class:`SyntheticFaces` ``(num_classes, samples_per_class=20, seed=0, ...)``; ``root`` ignored

    An unknown ``kind`` is an :class:`~paddle_pfc.data.formats.UnknownFormatError` listing the names.
    """
    return data_format(kind).construct(root, num_classes, image_size, **kwargs)
