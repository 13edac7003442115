"""Collective face-recognition training: backbone -> LargeScaleClassifier -> minimize, per rank.

One static program per rank; every rank runs the same steps on its own part of the data. The
global step and the data position are pure functions of (seed, epoch, step), and the random ops
of step k are re-seeded from (seed, k, rank), so a resumed run repeats an uninterrupted one.
"""
from __future__ import annotations

import json
import logging
import math
import sys
import time
from pathlib import Path

import numpy as np
import paddle

import paddle_pfc
from paddle_pfc.engine import checkpoint as ckpt
from paddle_pfc.backbones import bind_parameters, build_backbone
from paddle_pfc.engine.barrier import StoreBarrier
from paddle_pfc.engine.config import Config, dump_config, resolve_lr, resolve_validation_sets
from paddle_pfc.data.loader import BatchLoader, DistributedBatchSampler, build_dataset
from paddle_pfc.engine.distributed import all_gather_rows, current_place, on_gpu
from paddle_pfc.engine.lr import build_schedule
from paddle_pfc.head.registry import NONFINITE_PARTS, nonfinite_flags
from paddle_pfc.engine.progress import Progress

log = logging.getLogger("paddle_pfc.train")


class OutputDirError(RuntimeError):
    """A fresh run was pointed at an output folder that already holds checkpoints."""


class NonFiniteTrainingError(FloatingPointError):
    """``train.max_bad_steps`` consecutive steps were skipped as non-finite."""


class ValidationSetError(ValueError):
    """A verification set of ``validation.sets`` cannot be used (names the set and file)."""


def setup_logging(output_dir: Path, rank: int) -> None:
    """Rank 0 logs to stdout and ``output_dir/train.log``; other ranks log warnings only."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stdout)]
    if rank == 0:
        output_dir.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(output_dir / "train.log"))
    logging.basicConfig(level=logging.INFO if rank == 0 else logging.WARNING, force=True,
                        format="%(asctime)s %(message)s", datefmt="%H:%M:%S", handlers=handlers)


class MetricsWriter:
    """Scalars to ``metrics.jsonl`` and, when VisualDL is installed, to ``output_dir/vdl`` (rank 0)."""

    def __init__(self, output_dir: Path, enabled: bool) -> None:
        self.enabled, self._vdl = enabled, None
        if not enabled:
            return
        output_dir.mkdir(parents=True, exist_ok=True)
        self._file = open(output_dir / "metrics.jsonl", "a", buffering=1)
        try:
            from visualdl import LogWriter
            self._vdl = LogWriter(logdir=str(output_dir / "vdl"))
        except ImportError:
            log.warning("visualdl is not installed: scalars go to metrics.jsonl only")

    def add(self, step: int, **scalars: float) -> None:
        if not self.enabled:
            return
        self._file.write(json.dumps({"step": step, **scalars}) + "\n")
        if self._vdl is not None:
            for tag, value in scalars.items():
                self._vdl.add_scalar(tag=tag, value=float(value), step=step)

    def close(self) -> None:
        if self.enabled:
            self._file.close()
            if self._vdl is not None:
                self._vdl.close()


AMP_LEVELS = {"bf16": ("O1", "bfloat16"), "fp16_o1": ("O1", "float16"), "fp16_o2": ("O2", "float16")}


def check_supported(cfg: Config, gpu: bool | None = None) -> None:
    """Reject config values this build cannot run, naming the key (never ignore them)."""
    from paddle_pfc.engine.config import ConfigError

    gpu = on_gpu() if gpu is None else gpu
    if cfg.data.skip_bad and cfg.data.kind != "folder":
        raise ConfigError("data.skip_bad: only supported for data.kind=folder (a corrupt .rec record "
                          "is an error naming its index and offset)")
    for key, value in (("classifier.dtype", cfg.classifier.dtype),
                       ("classifier.center_dtype", cfg.classifier.center_dtype)):
        if value == "float16" and not gpu:
            raise ConfigError(f"{key}: float16 needs a GPU (Paddle's CPU kernels have no float16 "
                              "matmul / gather); use bfloat16 on CPU")
    if cfg.train.amp != "none" and not gpu:
        raise ConfigError(f"train.amp: {cfg.train.amp!r} needs a GPU. Paddle {paddle.__version__}'s CPU build "
                          "registers no bfloat16 or float16 kernel for conv2d, batch_norm or matmul (whatever "
                          "the CPU: also with AVX512_BF16), and with FLAGS_use_onednn=1 the autocast program "
                          "fails at its first cast; for memory on CPU use classifier.dtype / center_dtype: "
                          "bfloat16 (docs/paddle-notes.md)")


def loss_scaling_setting(cfg: Config):
    """What :func:`paddle_pfc.minimize` gets for ``train.loss_scaling`` (auto: on with float16)."""
    t = cfg.train
    on = t.loss_scaling == "on" or (t.loss_scaling == "auto" and (
        t.amp.startswith("fp16") or cfg.classifier.dtype == "float16"))
    return paddle_pfc.LossScaling(init_loss_scaling=t.init_loss_scaling) if on else False


class Trainer:
    """Builds the programs of one rank from a validated :class:`~paddle_pfc.engine.config.Config` and trains."""

    def __init__(self, cfg: Config, rank: int, world_size: int) -> None:
        """Checks the output folder (resume / overwrite), indexes the data, opens and checks every
        verification set, builds and initialises the programs — everything that can fail on bad
        input fails here, before the first step. Ranks meet at a barrier after every phase in
        which they may diverge (see :meth:`sync`)."""
        check_supported(cfg)
        self.cfg, self.rank, self.world_size = cfg, rank, world_size
        self.output_dir = Path(cfg.train.output_dir)
        self.place = current_place()
        self.exe = paddle.static.Executor(self.place)
        self.scope = paddle.static.global_scope()
        self._barrier = StoreBarrier(rank, world_size, cfg.train.collective_timeout)
        self.epoch, self.step_in_epoch, self.global_step = 0, 0, 0
        self.best_accuracy = -1.0
        self.bad_steps = self.skipped_steps = 0
        self._frozen: dict[str, np.ndarray] | None = None  # backbone kept during the frozen steps
        self._resumed = False
        self.resume_path = self._resume_decision()
        self._build_data()
        self.sync("data indexed")
        self.validation_sets = self._validation_sets()
        self.base_lr = resolve_lr(cfg, world_size)
        self._build_programs()
        self.metrics = MetricsWriter(self.output_dir, rank == 0)
        self.writer = ckpt.CheckpointWriter(self.output_dir / "checkpoints", rank, world_size,
                                            keep=cfg.train.keep_checkpoints,
                                            wait_timeout=cfg.train.collective_timeout)

    def sync(self, phase: str) -> float:
        """Barrier of every rank after ``phase`` (on the TCP store, ``train.collective_timeout``),
        so no rank waits inside a gloo collective (30 s limit) while another works alone."""
        return self._barrier.wait(phase)

    # ----------------------------------------------------------------------------- output folder
    def _resume_decision(self) -> str | None:
        """The checkpoint to resume from (``train.resume``: a path, ``auto`` or null), or None.

        ``auto``: the newest complete checkpoint of ``output_dir/checkpoints`` (by the step in its
        meta.json), else a fresh start. A fresh run into a folder that holds checkpoints is an
        :class:`OutputDirError` unless ``train.overwrite`` (then rank 0 deletes them).
        """
        root = self.output_dir / "checkpoints"
        resume = self.cfg.train.resume
        newest = ckpt.latest_checkpoint(root)
        if resume == "auto":
            if newest is None:
                log.info("resume auto: no complete checkpoint in %s, starting fresh", root)
            return None if newest is None else str(newest)
        if resume:
            return str(ckpt.resolve_checkpoint(resume))  # a wrong path fails now, naming it
        leftovers = sorted(p.name for p in root.glob("step_*")) if root.is_dir() else []
        if leftovers:
            if not self.cfg.train.overwrite:
                found = f"newest complete: {newest.name}" if newest else f"{len(leftovers)} unfinished"
                raise OutputDirError(
                    f"{root} already holds checkpoints ({found}). To continue that run, add "
                    "--resume auto (or -o train.resume=auto); to start over and delete them, add "
                    "--overwrite (-o train.overwrite=true); or choose another train.output_dir")
            self.sync("output folder checked")
            if self.rank == 0:
                removed = ckpt.remove_checkpoints(root)
                log.warning("train.overwrite: deleted %d checkpoints of an earlier run in %s", removed, root)
            self.sync("old checkpoints deleted")
        return None

    # ----------------------------------------------------------------------------- building
    def _build_data(self) -> None:
        d, t = self.cfg.data, self.cfg.train
        size = self.cfg.model.input_size
        extra = {"synthetic": {"samples_per_class": d.samples_per_class, "seed": d.seed},
                 "folder": {"skip_bad": d.skip_bad}, "rec": {}}[d.kind]
        self.dataset = build_dataset(d.kind, d.root, d.num_classes, size, **extra)
        self.sampler = DistributedBatchSampler(len(self.dataset), t.batch_size, self.rank, self.world_size,
                                               seed=d.seed, shuffle=True, drop_last=True)
        self.loader = BatchLoader(self.dataset, self.sampler, size, num_workers=d.num_workers,
                                  flip=d.flip, seed=d.seed)
        self.steps_per_epoch = self.sampler.steps_per_epoch
        self.num_skipped = getattr(self.dataset, "num_skipped", 0)
        self.total_steps = t.epochs * self.steps_per_epoch
        if t.max_steps is not None:
            self.total_steps = min(self.total_steps, t.max_steps)

    def _build_programs(self) -> None:
        # Fresh name counters: variable names (and so checkpoint keys) do not depend on what else
        # this process built before.
        with paddle.utils.unique_name.guard():
            self._build_programs_named()

    def _build_programs_named(self) -> None:
        m, loss_cfg, c, t = self.cfg.model, self.cfg.loss, self.cfg.classifier, self.cfg.train
        size = m.input_size
        paddle.seed(t.seed)
        self.main, self.startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(self.main, self.startup):
            images = paddle.static.data("images", [t.batch_size, 3, size, size], "float32")
            labels = paddle.static.data("labels", [t.batch_size], "int64")
            self.backbone = build_backbone(m.backbone, m.embedding_size, size, m.dropout)
            self.backbone.train()
            embedding = self._backbone_forward(images)
            self.head = paddle_pfc.LargeScaleClassifier(
                embedding, labels, self.rank, self.world_size, self.cfg.data.num_classes,
                loss_cfg.margin1, loss_cfg.margin2, loss_cfg.margin3, loss_cfg.scale,
                sample_ratio=c.sample_ratio, embedding_size=m.embedding_size, name="pfc_centers",
                seed=t.seed, dtype=c.dtype, center_dtype=c.center_dtype, kernels=c.kernels)
            self.loss = self.head.output_dict["loss"]
            self.schedule = build_schedule(t, self.base_lr, self.steps_per_epoch)
            clip = paddle.nn.ClipGradByGlobalNorm(t.grad_clip) if t.grad_clip else None
            optimizer = paddle.optimizer.Momentum(self.schedule, momentum=t.momentum,
                                                  weight_decay=t.weight_decay, grad_clip=clip,
                                                  multi_precision=t.amp == "fp16_o2")
            self.loss_scaling = loss_scaling_setting(self.cfg)
            paddle_pfc.minimize(optimizer, self.loss, loss_scaling=self.loss_scaling, skip_nonfinite=True)
            self.lr_name = paddle_pfc.head.optimizer.learning_rate_value(optimizer).name
        # Evaluation program: the same layer in eval mode, reading the training parameters.
        self.eval_main = paddle.static.Program()
        self.backbone.eval()
        with paddle.static.program_guard(self.eval_main, paddle.static.Program()), \
                bind_parameters(self.backbone, self.startup):
            eval_images = paddle.static.data("images", [-1, 3, size, size], "float32")
            self.eval_embedding = self.backbone(eval_images)
        self.backbone.train()
        self.nonfinite = nonfinite_flags(self.main)
        self.sync("programs built")  # the startup program broadcasts rank 0's parameters (gloo)
        self.exe.run(self.startup)
        self.backbone_names = {key: value.name for key, value in self.backbone.state_dict().items()}
        center_names = {self.head.weight.name, *(v.name for v in self.head.states())}
        skip = center_names | set(self.backbone_names.values()) | {self.lr_name}
        self.state_names = [n for n in ckpt.persistable_names(self.main) if n not in skip]
        # Written by the forward pass (outside the finite check): restored after a skipped step.
        self.bn_stat_names = [name for key, name in self.backbone_names.items()
                              if key.endswith(("._mean", "._variance"))]

    def _backbone_forward(self, images):
        """float32 [B, D] embeddings; with ``train.amp`` under Paddle's autocast (GPU; O2 also
        casts the backbone's weights to float16, the optimizer keeps float32 master weights)."""
        amp = self.cfg.train.amp
        if amp == "none":
            return self.backbone(images)
        level, dtype = AMP_LEVELS[amp]
        if level == "O2":
            self.backbone = paddle.amp.decorate(models=self.backbone, level="O2", dtype=dtype,
                                                master_weight=True)
        with paddle.amp.auto_cast(enable=True, level=level, dtype=dtype):
            embedding = self.backbone(images)
        return paddle.cast(embedding, "float32") if embedding.dtype != paddle.float32 else embedding

    def _validation_sets(self) -> dict[str, tuple]:
        """``{name: (path, this rank's images, issame, number of images)}``: every set opened and
        checked now (a wrong path or a broken file is an error before the first step, naming
        them); each rank decodes only its share of the images."""
        sets = list(resolve_validation_sets(self.cfg))
        pairs = self.cfg.validation.synthetic_pairs
        if pairs:
            from paddle_pfc.evaluation.bin_set import write_bin
            from paddle_pfc.data.synthetic import make_verification_set
            path = self.output_dir / "synthetic_val.bin"
            if self.rank == 0 and not path.exists():
                self.output_dir.mkdir(parents=True, exist_ok=True)
                bins, issame = make_verification_set(max(2, self.cfg.data.num_classes // 2), pairs,
                                                     self.cfg.model.input_size, seed=self.cfg.data.seed)
                write_bin(str(path) + ".tmp", bins, issame)
                Path(str(path) + ".tmp").replace(path)
            sets.append(("synthetic_val", str(path)))
            self.sync("synthetic verification set written")
        from paddle_pfc.evaluation.validation import load_bin_part
        loaded = {}
        for name, path in sets:
            started = time.perf_counter()
            try:
                images, issame, total = load_bin_part(path, self.cfg.model.input_size, self.rank, self.world_size)
            except (OSError, ValueError) as exc:
                raise ValidationSetError(f"validation.sets {name!r}: {exc}") from exc
            loaded[name] = (path, images, issame, total)
            log.info("verification set %s: %s, %d pairs (%d images on this rank, decoded in %.1f s)",
                     name, path, len(issame), len(images), time.perf_counter() - started)
        return loaded

    # ----------------------------------------------------------------------------- checkpoints
    def _meta(self) -> dict:
        return {"global_step": self.global_step, "epoch": self.epoch, "step_in_epoch": self.step_in_epoch,
                "num_classes": self.cfg.data.num_classes, "embedding_size": self.cfg.model.embedding_size,
                "backbone": self.cfg.model.backbone, "best_accuracy": self.best_accuracy,
                "config": self.cfg.to_dict()}

    def save_checkpoint(self) -> None:
        """Every rank writes its part (nothing non-finite is ever written), then all meet."""
        path = self.writer.save(self.scope, self._meta(), self.backbone_names, self.state_names, [self.head])
        if path is not None:
            log.info("checkpoint %s", path)
        self.sync(f"checkpoint {self.global_step} written")

    def resume(self, path: str) -> None:
        self._resumed = True
        meta = ckpt.load_checkpoint(
            path, self.scope, self.place, self.backbone_names, self.state_names, [self.head],
            expect={"num_classes": self.cfg.data.num_classes,
                    "embedding_size": self.cfg.model.embedding_size, "backbone": self.cfg.model.backbone})
        self.epoch, self.step_in_epoch = meta["epoch"], meta["step_in_epoch"]
        self.global_step, self.best_accuracy = meta["global_step"], meta.get("best_accuracy", -1.0)
        if meta["world_size"] != self.world_size:  # the data split changed: restart the epoch's data
            log.info("resharded checkpoint from %d to %d ranks", meta["world_size"], self.world_size)
        if self.step_in_epoch >= self.steps_per_epoch:
            self.epoch, self.step_in_epoch = self.epoch + 1, 0
        self.schedule.last_epoch = self.global_step
        self.schedule.last_lr = self.schedule.get_lr()
        log.info("resumed from %s at epoch %d step %d (global step %d)", path, self.epoch,
                 self.step_in_epoch, self.global_step)

    # ----------------------------------------------------------------------------- validation
    def embed(self, images: np.ndarray) -> np.ndarray:
        return self.exe.run(self.eval_main, feed={"images": images}, fetch_list=[self.eval_embedding])[0]

    def _share_bn_statistics(self) -> None:
        """Give every rank rank 0's BatchNorm running statistics (what checkpoints and ``best/``
        hold), so every rank's share of a validation is embedded by the same model. Training
        is unaffected: the forward pass in train mode normalises with batch statistics."""
        if self.world_size == 1 or not self.bn_stat_names:
            return
        values = [ckpt.read_tensor(self.scope, n) for n in self.bn_stat_names]
        flat = np.concatenate([v.ravel() for v in values]).astype(np.float32)[None]
        self.sync("batch-norm statistics")
        rank0 = all_gather_rows(flat, self.exe, self.world_size)[0]
        offset = 0
        for name, value in zip(self.bn_stat_names, values):
            ckpt.write_tensor(self.scope, name, rank0[offset:offset + value.size].reshape(value.shape)
                              .astype(value.dtype), self.place)
            offset += value.size

    def validate(self) -> dict[str, float]:
        """Every rank embeds its share of each verification set (with flips), the embeddings are
        gathered, and every rank computes the same accuracy; rank 0 logs and saves ``best/``."""
        if not self.validation_sets:
            return {}
        from paddle_pfc.evaluation.validation import embed_pairs, evaluate_embeddings, shard_range
        self._share_bn_statistics()
        dim, world = self.cfg.model.embedding_size, self.world_size
        results = {}
        for name, (path, images, issame, total) in self.validation_sets.items():
            started = time.perf_counter()
            with Progress(f"validate {name} (rank {self.rank}: {len(images)} of {total} images)",
                          total=len(images), unit="images", write=log, enabled=self.rank == 0) as progress:
                if len(images):
                    _, both = embed_pairs(self.embed, images, self.cfg.validation.batch_size,
                                          on_batch=progress.update)
                else:
                    both = np.zeros((0, dim), np.float32)
            counts = [shard_range(total, r, world) for r in range(world)]
            rows = max(stop - start for start, stop in counts)
            local = np.zeros((rows, 2 * dim), np.float32)
            local[:len(images), :dim], local[:len(images), dim:] = both[:len(images)], both[len(images):]
            self.sync(f"validation {name} embedded")
            gathered = all_gather_rows(local, self.exe, world)
            full = np.concatenate([gathered[r * rows:r * rows + stop - start]
                                   for r, (start, stop) in enumerate(counts)])
            result = evaluate_embeddings(full[:, :dim], full[:, dim:], issame,
                                         nrof_folds=self.cfg.validation.nrof_folds)
            results[name] = result.accuracy
            log.info("[%s][%d] accuracy %.5f +- %.5f  threshold %.3f  xnorm %.3f  (%.1f s on %d ranks)",
                     name, self.global_step, result.accuracy, result.accuracy_std, result.threshold,
                     result.xnorm, time.perf_counter() - started, world)
            self.metrics.add(self.global_step, **{f"val/{name}": result.accuracy})
        mean = float(np.mean(list(results.values())))
        if mean > self.best_accuracy:
            self.best_accuracy = mean
            if self.rank == 0:
                self._save_best(results)
        self.sync(f"validation {self.global_step} done")
        return results

    def _save_best(self, results: dict[str, float]) -> None:
        best = self.output_dir / "best"
        best.mkdir(parents=True, exist_ok=True)
        ckpt.write_backbone(best, self.scope, self.backbone_names)
        ckpt.write_meta(best, dict(self._meta(), accuracy=results), self.world_size, num_heads=1)
        log.info("best model (mean accuracy %.5f) saved to %s", self.best_accuracy, best)

    # ----------------------------------------------------------------------------- fine-tuning
    def init_from_pretrained(self) -> None:
        """``model.pretrained`` into the backbone and, with ``classifier.center_init:
        mean_embedding``, this rank's centers from its classes' mean embeddings (a fresh run only:
        a resumed run takes everything from its checkpoint)."""
        from paddle_pfc.engine import pretrained

        path = self.cfg.model.pretrained
        if not path:
            return
        pre = pretrained.load_into_scope(path, self.cfg.model, self.scope, self.place, self.backbone_names)
        log.info("backbone initialised from %s (%s)", pre.source, pre.kind)
        if self.cfg.classifier.center_init == "mean_embedding":
            from paddle_pfc.engine.progress import Progress

            head, c = self.head, self.cfg.classifier
            total = min(len(self.dataset), head.num_local * c.center_init_images)
            with Progress(f"center init rank {self.rank}", total, "images", every_seconds=10.0,
                          write=log) as progress:
                centers = pretrained.mean_embedding_centers(
                    self.embed, self.dataset, head.class_start, head.num_local, c.center_init_images,
                    self.cfg.model.input_size, 1.0, self.cfg.validation.batch_size, progress)
            from paddle_pfc.head.dtypes import convert
            ckpt.write_tensor(self.scope, head.weight.name, convert(centers.astype(np.float32),
                                                                    head.center_dtype), self.place)

    def _keep_backbone_frozen(self, before_step: bool) -> None:
        """``train.freeze_backbone_steps``: the backbone's parameters, BatchNorm statistics and
        optimizer state are snapshotted before the first frozen step and written back after each
        one, so only the head learns and the backbone is bit-identical when the freeze ends (a
        resume inside the freeze reloads that same backbone)."""
        if self.global_step >= self.cfg.train.freeze_backbone_steps:
            self._frozen = None
            return
        names = list(self.backbone_names.values()) + [
            n for n in self.state_names if not n.startswith(ckpt.OPTIONAL_STATE_PREFIX)]
        if before_step:
            if self._frozen is None:
                self._frozen = {n: ckpt.read_tensor(self.scope, n) for n in names}
        else:
            for n in names:
                ckpt.write_tensor(self.scope, n, self._frozen[n], self.place)

    # ----------------------------------------------------------------------------- training
    def _seed_step(self) -> None:
        """Random ops of this step (sampling, dropout) depend on (seed, global step, rank) only."""
        paddle.seed((self.cfg.train.seed * 1_000_003 + self.global_step * 4099 + self.rank) % (2**31 - 1))

    def _step(self, images: np.ndarray, labels: np.ndarray) -> float:
        """One optimizer step on this rank's batch; returns the global loss.

        A step whose loss or any gradient is inf/NaN on any rank changes nothing (the program
        skips every update; the BatchNorm statistics its forward pass moved are restored here)
        and is counted and logged; ``train.max_bad_steps`` such steps in a row stop training
        with :class:`NonFiniteTrainingError`. The step counter and data position move on either way.
        """
        self._seed_step()
        self._keep_backbone_frozen(before_step=True)
        bn_before = [ckpt.read_tensor(self.scope, n) for n in self.bn_stat_names]
        loss, flags = paddle_pfc.run(self.exe, self.main, feed={"images": images, "labels": labels},
                                     fetch_list=[self.loss, self.nonfinite])
        self._keep_backbone_frozen(before_step=False)
        loss = float(loss)
        bad = [part for part, flag in zip(NONFINITE_PARTS, np.ravel(flags)) if flag > 0]
        if bad:
            for name, value in zip(self.bn_stat_names, bn_before):
                ckpt.write_tensor(self.scope, name, value, self.place)
            self._count_bad_step(loss, bad)
        elif not math.isfinite(loss):  # cannot happen: the loss is part of the check
            raise FloatingPointError(f"loss is {loss} at step {self.global_step} but the step was applied")
        else:
            self.bad_steps = 0
        self.schedule.step()
        self.global_step += 1
        self.step_in_epoch += 1
        return loss

    def _count_bad_step(self, loss: float, bad: list[str]) -> None:
        """Log a skipped step; stop after ``train.max_bad_steps`` in a row. With loss scaling a
        gradient overflow is how the scale finds its level: it counts only at the scale's floor."""
        self.skipped_steps += 1
        scale = None
        if self.loss_scaling:
            scale = float(ckpt.read_tensor(self.scope, "loss_scaling@scale")[0])
        counts = not self.loss_scaling or "loss" in bad or scale <= 1.0
        self.bad_steps = self.bad_steps + 1 if counts else 0
        what = ", ".join(bad)
        limit = self.cfg.train.max_bad_steps
        if self.rank == 0:
            log.warning("step %d skipped (nothing updated): inf/NaN in %s (loss %s)%s; %d skipped in a "
                        "row, %d in this run", self.global_step + 1, what, loss,
                        f", loss scale now {scale:g}" if scale is not None else "", self.bad_steps,
                        self.skipped_steps)
        if self.bad_steps >= limit:
            raise NonFiniteTrainingError(
                f"step {self.global_step + 1}: {self.bad_steps} consecutive steps skipped, the last with "
                f"inf/NaN in: {what} (train.max_bad_steps={limit}); nothing was updated by them and the last "
                "checkpoint is intact. Lower train.lr, check the data, or raise train.max_bad_steps")

    def train(self) -> dict:
        """Run until ``train.epochs`` (or ``train.max_steps``); returns the losses and validations."""
        t, v = self.cfg.train, self.cfg.validation
        if self.rank == 0:
            dump_config(self.cfg, self.output_dir / "config.yaml")
            log.info("config:\n%s", self.cfg.to_yaml())
            log.info("world_size %d, %d images, %d steps/epoch, %d steps, global batch %d, lr %.4g",
                     self.world_size, len(self.dataset), self.steps_per_epoch, self.total_steps,
                     t.batch_size * self.world_size, self.base_lr)
        if self.resume_path and not self._resumed:
            self.resume(self.resume_path)
        self.sync("training starts")
        history = {"loss": [], "val": []}
        if self.global_step == 0 and self.cfg.model.pretrained:
            self.init_from_pretrained()
            self.sync("pretrained backbone loaded")  # center init takes each rank its own time
        if self.global_step == 0 and self.validation_sets:  # the untrained model, for reference
            history["val"].append((0, self.validate()))
        started = window_start = time.perf_counter()
        steps_this_run = window_steps = 0
        try:
            while self.global_step < self.total_steps and self.epoch < t.epochs:
                if self.num_skipped and self.rank == 0:
                    log.warning("epoch %d: %d images skipped by data.skip_bad (listed at start-up)",
                                self.epoch, self.num_skipped)
                for images, labels in self.loader.epoch(self.epoch, self.step_in_epoch):
                    lr = self.schedule()
                    history["loss"].append(self._step(images, labels))
                    steps_this_run += 1
                    window_steps += 1
                    done = self.global_step >= self.total_steps
                    epoch_end = self.step_in_epoch >= self.steps_per_epoch
                    if self.global_step % t.log_every == 0 or done:
                        now = time.perf_counter()
                        speed = window_steps * t.batch_size * self.world_size / (now - window_start)
                        eta = (self.total_steps - self.global_step) * (now - started) / steps_this_run
                        log.info("step %d/%d epoch %d loss %.4f lr %.5f %.1f samples/s eta %s",
                                 self.global_step, self.total_steps, self.epoch, history["loss"][-1], lr,
                                 speed, time.strftime("%H:%M:%S", time.gmtime(eta)))
                        self.metrics.add(self.global_step, loss=history["loss"][-1], lr=lr,
                                         samples_per_second=speed)
                        window_start, window_steps = now, 0
                    if (v.every_steps and self.global_step % v.every_steps == 0) or \
                            (epoch_end and not v.every_steps) or done:
                        history["val"].append((self.global_step, self.validate()))
                    if (t.checkpoint_every_steps and self.global_step % t.checkpoint_every_steps == 0) \
                            or epoch_end or done:
                        self.save_checkpoint()
                    if done:
                        break
                if self.step_in_epoch >= self.steps_per_epoch:
                    self.epoch, self.step_in_epoch = self.epoch + 1, 0
        finally:
            self.loader.close()
            self.metrics.close()
        if self.rank == 0:
            log.info("finished: %d steps in %.1f s (%d skipped as non-finite)", steps_this_run,
                     time.perf_counter() - started, self.skipped_steps)
        return history
