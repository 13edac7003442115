"""The program one benchmark configuration times, built by the engine's builder as training builds it
(:func:`build_train_program` from :func:`step_config`), its optimizer, and its inputs: pre-generated
batches (:func:`make_feeds`) or the training loader (:class:`LoaderInput`)."""
from __future__ import annotations

import shutil
import tempfile
import time
import weakref

import numpy as np
import paddle

_DISTINCT_BATCHES = 16  # distinct synthetic batches cycled through the steps


def build_train_program(cfg: dict, args, rank: int, world_size: int, mode: str):
    """(main, startup, head, loss, input names) for one configuration, built by the engine's builder
    (:mod:`paddle_pfc.engine.builder`) from :func:`step_config`. ``mode``: ``head`` (the head on a
    feature input), ``e2e`` (backbone and head, as training builds them), or ``backbone`` (e2e's
    backbone alone: loss = mean(embedding * fixed weights), the same optimizer, no head and no
    collective; head None). Paddle's generator is seeded with ``--seed`` first (as ``tools/train.py``
    seeds it with ``train.seed``), so the kept centers, the backbone's initial weights and the
    losses repeat from one run to the next."""
    from paddle_pfc.engine.builder import append_head_training, build_embedding, build_optimizer

    paddle.seed(args.seed)
    b, d = cfg["batch_size"], cfg["embedding_size"]
    step_cfg = step_config(cfg, args)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        if mode == "backbone":
            image = paddle.static.data("image", [b, 3, args.input_size, args.input_size], "float32")
            weights = paddle.static.data("weights", [b, d], "float32")
            loss = paddle.mean(build_embedding(step_cfg, image)[1] * weights)
            build_optimizer(step_cfg, learning_rate(step_cfg, world_size)).minimize(loss)
            return main, startup, None, loss, "image"
        label = paddle.static.data("label", [b], "int64")
        if mode == "head":
            feature = paddle.static.data("feature", [b, d], "float32")
            feature.stop_gradient = False
            inputs = "feature"
        else:
            image = paddle.static.data("image", [b, 3, args.input_size, args.input_size], "float32")
            feature = build_embedding(step_cfg, image)[1]
            inputs = "image"
        trained = append_head_training(step_cfg, feature, label, rank, world_size,
                                       learning_rate(step_cfg, world_size), chunk_rows=args.chunk_rows)
    return main, startup, trained.head, trained.loss, inputs


def training_config(args, batch_size: int):
    """e2e mode: the training config (``--config``, default: the schema's defaults) at ``batch_size``.
    A config that names no ``data.num_classes`` (e.g. only ``train: {amp: bf16}``) gets
    ``--num-classes``' largest: the head's class count is ``--num-classes`` here. A config with
    ``train.accumulate_steps`` > 1 raises UsageError: the benchmark times steps of one batch."""
    from paddle_pfc.engine.config import config_from_dict, read_config_file
    from paddle_pfc.utils.errors import UsageError

    raw = read_config_file(args.config) if args.config is not None else {}
    overrides = [f"train.batch_size={batch_size}"]
    data = raw.get("data") if isinstance(raw, dict) else None
    if not isinstance(data, dict) or data.get("num_classes") is None:
        overrides.append(f"data.num_classes={max(args.num_classes)}")
    cfg = config_from_dict(raw, overrides)
    if cfg.train.accumulate_steps > 1:
        raise UsageError(f"{args.config}: train.accumulate_steps={cfg.train.accumulate_steps}: the benchmark times "
                         "steps of one batch (no gradient accumulation); benchmark the micro-batch with "
                         "train.accumulate_steps=1 (a step of K micro-batches runs K such steps' forward and "
                         "backward and one update)")
    return cfg


#: ``head`` mode's training settings: the head alone, Momentum(0.1, momentum 0.9, weight decay
#: 5e-4), no clip, no AMP.
HEAD_MODE_TRAIN = ("train.lr=0.1", "train.momentum=0.9", "train.weight_decay=0.0005", "train.grad_clip=null",
                   "train.amp=none")


def step_config(cfg: dict, args):
    """The config one configuration's step is built from: ``e2e`` / ``backbone``: the training
    config (:func:`training_config`), ``head``: the schema's defaults with :data:`HEAD_MODE_TRAIN`;
    with the configuration's head (classes, embedding size, sample ratio, dtypes), the command's
    backbone, input size, margins, scale and seed, and the kernels ``$PADDLE_PFC_KERNELS`` asks for."""
    from paddle_pfc.engine.config import config_from_dict
    from paddle_pfc.kernels import requested

    base = {} if args.mode == "head" else training_config(args, cfg["batch_size"]).to_dict()
    m1, m2, m3 = args.margins
    overrides = [*(HEAD_MODE_TRAIN if args.mode == "head" else ()),
                 f"train.batch_size={cfg['batch_size']}", f"train.seed={args.seed}",
                 f"data.num_classes={cfg['num_classes']}", f"data.image_size={args.input_size}",
                 f"model.backbone={args.backbone}", f"model.input_size={args.input_size}",
                 f"model.embedding_size={cfg['embedding_size']}", f"classifier.sample_ratio={cfg['sample_ratio']}",
                 f"classifier.dtype={cfg['dtype']}", f"classifier.center_dtype={cfg['center_dtype']}",
                 *([f"classifier.momentum_dtype={args.momentum_dtype}"] if args.momentum_dtype else []),
                 f"classifier.kernels={requested(None)[0]}",
                 f"loss.margin1={m1}", f"loss.margin2={m2}", f"loss.margin3={m3}", f"loss.scale={args.scale}"]
    return config_from_dict(base, overrides)


def learning_rate(step_cfg, world_size: int) -> float:
    """The base learning rate (``train.lr``, else ``0.1 * global_batch / 512``): constant, the
    schedule does not change a step's cost."""
    from paddle_pfc.engine.config import resolve_lr

    return resolve_lr(step_cfg, world_size)


def step_optimizer(cfg: dict, args, world_size: int) -> paddle.optimizer.Optimizer:
    """The optimizer of configuration ``cfg`` (the engine's
    :func:`~paddle_pfc.engine.builder.build_optimizer` of :func:`step_config`): ``head`` mode
    Momentum(0.1, 0.9, weight decay 5e-4), no clip; ``e2e`` the training config's."""
    from paddle_pfc.engine.builder import build_optimizer

    step_cfg = step_config(cfg, args)
    return build_optimizer(step_cfg, learning_rate(step_cfg, world_size))


def make_feeds(cfg: dict, args, rank: int, inputs: str) -> list[dict]:
    rng = np.random.default_rng(args.seed * 7919 + rank)
    b, d = cfg["batch_size"], cfg["embedding_size"]
    feeds = []
    for _ in range(min(_DISTINCT_BATCHES, args.warmup + args.steps)):
        shape = [b, d] if inputs == "feature" else [b, 3, args.input_size, args.input_size]
        feeds.append({inputs: rng.standard_normal(shape, dtype=np.float32),
                      "label": rng.integers(0, cfg["num_classes"], b, dtype=np.int64),
                      "weights": rng.standard_normal([b, d], dtype=np.float32)})
    return feeds


class LoaderInput:
    """e2e ``--input loader``: each step's images from the loader ``tools/train.py`` builds
    (:mod:`paddle_pfc.engine.input`: the config's ``data.num_workers``, ``flip``, ``seed``,
    ``batch_timeout``): over the config's data where its format reads files under ``data.root`` (its
    labels too, split over the ranks as training splits them), else over a temporary ``.rec`` of
    ``_DISTINCT_BATCHES`` batches of synthetic face JPEGs per rank (its labels replaced by the
    uniform ones of the pre-generated batches, so that the head's positives spread over the
    shards as in ``arrays`` mode). :meth:`next` returns ``(images, labels or None, seconds waited
    for the batch)``; the wait includes the consumer's share of the input (normalising the
    workers' uint8 batch)."""

    def __init__(self, cfg: dict, args, rank: int, world_size: int, train_cfg) -> None:
        from paddle_pfc.data.formats import data_format
        from paddle_pfc.data.recordio import RecordDataset
        from paddle_pfc.data.synthetic import write_synthetic_rec
        from paddle_pfc.engine.input import DataSizeError, dataset_from_config, loader_from_config

        d, batch = train_cfg.data, cfg["batch_size"]
        self._folder = None
        if data_format(d.kind).under_root:
            dataset = dataset_from_config(d, args.input_size)
            if dataset.num_classes > cfg["num_classes"]:
                raise SystemExit(f"--input loader: the config's data has {dataset.num_classes} classes, more than "
                                 f"--num-classes {cfg['num_classes']}")
            self.source, self.own_labels = f"{d.kind}:{d.root}", True
        else:
            self._folder = tempfile.mkdtemp(prefix="pfc_benchmark_")
            write_synthetic_rec(self._folder, _DISTINCT_BATCHES * batch, args.input_size, seed=args.seed + rank)
            dataset = RecordDataset(self._folder, image_size=args.input_size)
            rank, world_size = 0, 1  # every rank reads its own synthetic set
            self.source, self.own_labels = "synthetic jpeg", False
        try:
            self.loader = loader_from_config(d, dataset, batch, rank, world_size, args.input_size)
        except DataSizeError as exc:
            raise SystemExit(f"--input loader: {exc}") from None
        self._epoch, self._batches = 0, iter(())
        self._cleanup = weakref.finalize(self, LoaderInput._release, self.loader, self._folder)

    def next(self) -> tuple[np.ndarray, np.ndarray | None, float]:
        t0 = time.perf_counter()
        try:
            images, labels = next(self._batches)
        except StopIteration:
            self._batches = self.loader.epoch(self._epoch)
            self._epoch += 1
            images, labels = next(self._batches)
        return images, labels if self.own_labels else None, time.perf_counter() - t0

    def close(self) -> None:
        """Stop the workers and delete the synthetic set (also at garbage collection or exit)."""
        self._cleanup()

    @staticmethod
    def _release(loader, folder: str | None) -> None:
        loader.close()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
