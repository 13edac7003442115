"""One rank's programs, built from a validated config: what the training loop runs.

:func:`build_programs` builds the training program (backbone -> ``LargeScaleClassifier`` ->
``minimize`` with the finite check), runs its startup program (parameters initialised, rank 0's
broadcast to the others) and builds the evaluation program (the same backbone in eval mode,
reading the training parameters). It returns them as one :class:`TrainPrograms`, which is also
the :class:`~paddle_pfc.engine.checkpoint.CheckpointTarget` checkpoints are saved from and
loaded into. Building is deterministic: fresh name counters (so variable names, and with them
checkpoint keys, do not depend on what the process built before) and ``paddle.seed(train.seed)``.
"""
from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

import numpy as np
import paddle

from paddle_pfc.backbones import bind_parameters
from paddle_pfc.backbones.native_layers import native_inference, use_bfloat16_convolutions
from paddle_pfc.backbones.spec import ModelSpec
from paddle_pfc.engine import checkpoint as ckpt
from paddle_pfc.engine.config import Config, ConfigError
from paddle_pfc.engine.lr import WarmupDecay, build_schedule
from paddle_pfc.head.accumulation import accumulation_of, is_buffer
from paddle_pfc.head.adaface import AdaFace
from paddle_pfc.head.classifier import LargeScaleClassifier
from paddle_pfc.head.dtypes import CPU_REFUSALS
from paddle_pfc.head.loss_scaling import LossScaling
from paddle_pfc.head.margin import CombinedMargin, Margin
from paddle_pfc.head.optimizer import minimize
from paddle_pfc.head.registry import nonfinite_flags
from paddle_pfc.head.startup_log import center_initialisation
from paddle_pfc.kernels import extensions
from paddle_pfc.runtime.distributed import current_place
from paddle_pfc.utils.launch_env import local_world_size
from paddle_pfc.utils.paddle_compat import learning_rate_value, on_gpu

#: ``train.amp`` -> (Paddle AMP level, dtype).
AMP_LEVELS = {"bf16": ("O1", "bfloat16"), "fp16_o1": ("O1", "float16"), "fp16_o2": ("O2", "float16")}


def check_supported(cfg: Config, gpu: bool | None = None) -> None:
    """Reject config values this build cannot run, naming the key (never ignore them)."""
    gpu = on_gpu() if gpu is None else gpu
    from paddle_pfc.data.formats import data_format, formats_reading

    data = data_format(cfg.data.kind)
    if cfg.data.skip_bad and "skip_bad" not in data.settings:
        raise ConfigError(f"data.skip_bad: only supported for data.kind={'/'.join(formats_reading('skip_bad'))} "
                          f"({data.corrupt})")
    for key, value in (("classifier.dtype", cfg.classifier.dtype),
                       ("classifier.center_dtype", cfg.classifier.center_dtype),
                       ("classifier.momentum_dtype", cfg.classifier.momentum_dtype)):
        if value in CPU_REFUSALS and not gpu:
            raise ConfigError(f"{key}: {CPU_REFUSALS[value]}")
    if cfg.classifier.momentum_dtype == "int8" and gpu:
        raise ConfigError("classifier.momentum_dtype: 'int8' is implemented for CPU training only; use a float "
                          "momentum_dtype (or leave it out) on GPU")
    if cfg.train.amp.startswith("fp16") and not gpu:
        raise ConfigError(f"train.amp: {cfg.train.amp!r} needs a GPU (Paddle {paddle.__version__}'s CPU build "
                          "registers no float16 kernel for conv2d, batch_norm or matmul); on a CPU with "
                          "AVX512_BF16 use train.amp: bf16")
    if cfg.train.amp == "bf16" and not gpu:
        from paddle_pfc.kernels import onednn_ops

        reason = onednn_ops.bfloat16_unsupported()
        if reason is not None:
            raise ConfigError(f"train.amp: 'bf16' on CPU multiplies the backbone's convolutions in bfloat16 "
                              f"through oneDNN, but {reason}. Paddle {paddle.__version__}'s CPU build has no "
                              "bfloat16 conv2d / batch_norm / matmul kernel of its own (docs/paddle-notes.md); "
                              "use train.amp: none here")


def loss_scaling_setting(cfg: Config) -> LossScaling | bool:
    """What :func:`paddle_pfc.minimize` gets for ``train.loss_scaling`` (auto: on with float16)."""
    t = cfg.train
    on = t.loss_scaling == "on" or (t.loss_scaling == "auto" and (
        t.amp.startswith("fp16") or cfg.classifier.dtype == "float16"))
    return LossScaling(init_loss_scaling=t.init_loss_scaling) if on else False


@dataclass(eq=False)
class TrainPrograms:
    """The initialised programs of one rank and the names the loop and checkpoints need.

    ``main`` takes the feeds ``feed_names`` (images float32 [B, 3, H, W], labels int64 [B]; with
    ``accumulate_steps`` K > 1 also the labels of the step's K micro-batches, int64 [K * B], and the
    micro-step, int64 [1]: :mod:`paddle_pfc.head.accumulation`) and fetches ``loss`` (the global
    loss; with K > 1 the step's so far) and ``nonfinite`` (the finite check's flags); ``eval_main``
    takes ``images`` ([N, 3, H, W]) and fetches ``eval_embedding``. ``backbone_names``: structured
    name -> variable name of the backbone's parameters and BatchNorm statistics; ``state_names``:
    every other persistable of ``main`` except class centers and the learning rate (optimizer
    states, the loss scale); ``bn_stat_names``: the BatchNorm statistics' variables (written by
    the forward pass, outside the finite check). Accumulation buffers are in none of them (no
    checkpoint keeps them).
    """

    main: paddle.static.Program
    startup: paddle.static.Program
    eval_main: paddle.static.Program
    exe: paddle.static.Executor
    scope: object
    place: object
    backbone: paddle.nn.Layer
    head: LargeScaleClassifier
    loss: object
    nonfinite: object
    eval_embedding: object
    schedule: WarmupDecay
    loss_scaling: LossScaling | bool
    backbone_names: dict[str, str]
    state_names: list[str]
    bn_stat_names: list[str]
    feed_names: tuple[str, ...] = ("images", "labels")
    accumulate_steps: int = 1

    @property
    def heads(self) -> list[LargeScaleClassifier]:
        return [self.head]

    def read(self, name: str) -> np.ndarray:
        """The value of variable ``name`` (a copy on the host)."""
        return ckpt.read_tensor(self.scope, name)

    def write(self, name: str, value: np.ndarray) -> None:
        """Set variable ``name`` to ``value`` (same shape and dtype)."""
        ckpt.write_tensor(self.scope, name, value, self.place)

    def embed(self, images: np.ndarray) -> np.ndarray:
        """Raw embeddings [N, D] of a normalised NCHW batch (eval mode: BatchNorm statistics)."""
        return self.exe.run(self.eval_main, feed={"images": images}, fetch_list=[self.eval_embedding])[0]


def build_programs(cfg: Config, rank: int, world_size: int, base_lr: float, steps_per_epoch: int,
                   sync: Callable[[str], float], centers_written: bool = False) -> TrainPrograms:
    """Build and initialise this rank's programs (see the module doc). ``sync(phase)``: the ranks'
    barrier, met before the startup program's broadcast (a gloo collective). ``centers_written``:
    every class center is written before the first step (a checkpoint is loaded, or the centers
    are computed): the startup program fills them with zeros instead of drawing them."""
    with paddle.utils.unique_name.guard():
        return _build(cfg, rank, world_size, base_lr, steps_per_epoch, sync, centers_written)


def backbone_forward(backbone: paddle.nn.Layer, images, amp: str):
    """``(backbone, float32 [B, D] embeddings)``; with ``train.amp`` under Paddle's autocast (GPU;
    O2 also casts the backbone's weights to float16 — the returned backbone is the decorated one
    — and the optimizer keeps float32 master weights). ``bf16`` on CPU: the backbone's oneDNN
    convolutions multiply in bfloat16 and hand their native batch norms bfloat16 activations;
    weights, gradients, the optimizer and the residual stream stay float32
    (:func:`~paddle_pfc.backbones.native_layers.use_bfloat16_convolutions`)."""
    if amp == "none":
        return backbone, backbone(images)
    if amp == "bf16" and not on_gpu():
        use_bfloat16_convolutions(backbone)
        return backbone, backbone(images)
    level, dtype = AMP_LEVELS[amp]
    if level == "O2":
        backbone = paddle.amp.decorate(models=backbone, level="O2", dtype=dtype, master_weight=True)
    with paddle.amp.auto_cast(enable=True, level=level, dtype=dtype):
        embedding = backbone(images)
    return backbone, paddle.cast(embedding, "float32") if embedding.dtype != paddle.float32 else embedding


#: Structured parameter names (their last part) exempt from decay under ``norms_biases`` besides the
#: 1-D parameters: position embeddings and class tokens (timm's ``no_weight_decay``).
EXEMPT_NAMES = ("pos_embed", "pos_embedding", "position_embedding", "position_embeddings", "cls_token",
                "class_token")


def decay_exempt_names(backbone: paddle.nn.Layer, exempt: str) -> frozenset[str]:
    """Variable names of ``backbone``'s parameters that ``train.weight_decay_exempt`` = ``exempt``
    leaves undecayed: none for ``none``; for ``norms_biases`` every trainable parameter of at most one
    dimension (norm weights and biases, every bias, PReLU slopes) and those of :data:`EXEMPT_NAMES`."""
    if exempt == "none":
        return frozenset()
    return frozenset(p.name for key, p in backbone.named_parameters()
                     if not p.stop_gradient and (len(p.shape) <= 1 or key.rsplit(".", 1)[-1] in EXEMPT_NAMES))


def build_optimizer(cfg: Config, learning_rate, exempt: Collection[str] = ()) -> paddle.optimizer.Optimizer:
    """The training optimizer of ``cfg`` (``train.optimizer``): Momentum with ``train.momentum`` and
    L2 decay ``train.weight_decay``, SGD with that decay, or AdamW with ``train.betas``, ``train.eps``
    and decoupled decay ``train.weight_decay`` of every parameter but the variables named in
    ``exempt`` (:func:`decay_exempt_names`); the backbone's gradients clipped by global norm
    ``train.grad_clip`` (none at 0), float32 master weights under ``fp16_o2``. ``learning_rate``: a
    float or the schedule (an ``LRScheduler``). The class centers take the same rule
    (:func:`paddle_pfc.minimize`)."""
    t = cfg.train
    clip = paddle.nn.ClipGradByGlobalNorm(t.grad_clip) if t.grad_clip else None
    multi_precision = t.amp == "fp16_o2"
    if t.optimizer == "adamw":
        exempt = frozenset(exempt)
        return paddle.optimizer.AdamW(learning_rate, beta1=t.betas[0], beta2=t.betas[1], epsilon=t.eps,
                                      weight_decay=t.weight_decay, grad_clip=clip, multi_precision=multi_precision,
                                      apply_decay_param_fun=(lambda name: name not in exempt) if exempt else None)
    if t.optimizer == "sgd":
        return paddle.optimizer.SGD(learning_rate, weight_decay=t.weight_decay, grad_clip=clip,
                                    multi_precision=multi_precision)
    return paddle.optimizer.Momentum(learning_rate, momentum=t.momentum, weight_decay=t.weight_decay,
                                     grad_clip=clip, multi_precision=multi_precision)


def build_margin(loss_cfg) -> Margin:
    """The margin ``loss.name`` names: :class:`AdaFace` of ``loss.adaface_*`` and ``loss.scale``, or the
    :class:`CombinedMargin` of ``loss.margin1..3`` and ``loss.scale``."""
    if loss_cfg.name == "adaface":
        return AdaFace(loss_cfg.adaface_m, loss_cfg.adaface_h, loss_cfg.scale, loss_cfg.adaface_t_alpha)
    return CombinedMargin(loss_cfg.margin1, loss_cfg.margin2, loss_cfg.margin3, loss_cfg.scale)


def build_head(cfg: Config, embedding, labels, rank: int, world_size: int,
               chunk_rows: int | None = None, init_centers: bool = True, sample_label=None) -> LargeScaleClassifier:
    """The ``LargeScaleClassifier`` of ``cfg`` (``loss.*``, ``classifier.*``, ``data.num_classes``,
    seeded by ``train.seed``) on ``embedding`` [B, D] and ``labels`` [B], named ``pfc_centers``.
    ``chunk_rows``: rows per block of kept centers (default: the head's rule); ``init_centers``:
    the head's random initial centers (False: zeros, see ``LargeScaleClassifier``); ``sample_label``:
    the labels its kept centers are drawn from (gradient accumulation; default ``labels``)."""
    m, c, t = cfg.model, cfg.classifier, cfg.train
    return LargeScaleClassifier(
        embedding, labels, rank, world_size, cfg.data.num_classes, margin=build_margin(cfg.loss),
        sample_ratio=c.sample_ratio, embedding_size=m.embedding_size, name="pfc_centers",
        seed=t.seed, dtype=c.dtype, center_dtype=c.center_dtype, chunk_rows=chunk_rows, kernels=c.kernels,
        momentum_dtype=c.momentum_dtype, init_centers=init_centers, sample_label=sample_label)


def build_embedding(cfg: Config, images) -> tuple[paddle.nn.Layer, object]:
    """``(backbone, float32 [B, D] embeddings)``: ``model.*``'s backbone in train mode on ``images``
    [B, 3, H, W], under ``train.amp`` (:func:`backbone_forward`)."""
    backbone = ModelSpec.from_config(cfg.model).build()
    backbone.train()
    return backbone_forward(backbone, images, cfg.train.amp)


@dataclass(eq=False)
class HeadTraining:
    """What :func:`append_head_training` appended to the current main program."""

    head: LargeScaleClassifier
    loss: object
    optimizer: paddle.optimizer.Optimizer
    loss_scaling: LossScaling | bool


def append_head_training(cfg: Config, embedding, labels, rank: int, world_size: int, learning_rate,
                         chunk_rows: int | None = None, check_memory: bool = True,
                         init_centers: bool = True, decay_exempt: Collection[str] = (),
                         sample_label=None) -> HeadTraining:
    """The head (:func:`build_head`) on ``embedding`` and ``labels``, and :func:`paddle_pfc.minimize`
    of its loss with :func:`build_optimizer` (``learning_rate``: a float or the schedule), the
    config's loss scaling and non-finite steps skipped. ``check_memory``: minimize's check of the
    centers against this machine's memory (off where the caller checked the whole plan).
    ``init_centers``: as :func:`build_head`; ``decay_exempt``: as :func:`build_optimizer`'s ``exempt``.
    ``sample_label`` (with ``train.accumulate_steps`` K > 1): the labels of the step's K micro-batches;
    ``loss`` is then the step's loss (:class:`~paddle_pfc.head.accumulation.Accumulation`)."""
    head = build_head(cfg, embedding, labels, rank, world_size, chunk_rows, init_centers, sample_label)
    loss = head.output_dict["loss"]
    optimizer = build_optimizer(cfg, learning_rate, decay_exempt)
    loss_scaling = loss_scaling_setting(cfg)
    steps = cfg.train.accumulate_steps if sample_label is not None else 1
    minimize(optimizer, loss, loss_scaling=loss_scaling, skip_nonfinite=True, check_memory=check_memory,
             accumulate_steps=steps)
    if steps > 1:
        loss = accumulation_of(paddle.static.default_main_program()).loss
    return HeadTraining(head, loss, optimizer, loss_scaling)


def _build(cfg: Config, rank: int, world_size: int, base_lr: float, steps_per_epoch: int,
           sync: Callable[[str], float], centers_written: bool) -> TrainPrograms:
    t = cfg.train
    size = cfg.model.input_size
    if not on_gpu():  # a first run compiles the native CPU kernels side by side, not one by one
        extensions.build_all(local_world_size())
    place = current_place()
    exe = paddle.static.Executor(place)
    paddle.seed(t.seed)
    main, startup = paddle.static.Program(), paddle.static.Program()
    schedule = build_schedule(t, base_lr, steps_per_epoch)  # a Python object: no op, no random draw
    with paddle.static.program_guard(main, startup):
        images = paddle.static.data("images", [t.batch_size, 3, size, size], "float32")
        labels = paddle.static.data("labels", [t.batch_size], "int64")
        step_labels = paddle.static.data("step_labels", [t.accumulate_steps * t.batch_size], "int64") \
            if t.accumulate_steps > 1 else None
        # check_memory=False: the trainer checked the whole plan of this config (engine.memory.check_head_fits)
        backbone, embedding = build_embedding(cfg, images)
        step = append_head_training(cfg, embedding, labels, rank, world_size, schedule, check_memory=False,
                                    init_centers=not centers_written,
                                    decay_exempt=decay_exempt_names(backbone, t.weight_decay_exempt),
                                    sample_label=step_labels)
        head, loss, loss_scaling = step.head, step.loss, step.loss_scaling
        lr_name = learning_rate_value(step.optimizer).name
    eval_main = paddle.static.Program()
    backbone.eval()
    # validation embeds on the native forward kernels (this program is never exported)
    with paddle.static.program_guard(eval_main, paddle.static.Program()), bind_parameters(backbone, startup), \
            native_inference():
        eval_embedding = backbone(paddle.static.data("images", [-1, 3, size, size], "float32"))
    backbone.train()
    nonfinite = nonfinite_flags(main)
    sync("programs built")  # the startup program broadcasts rank 0's parameters (gloo)
    with center_initialisation([head]):
        exe.run(startup)
    backbone_names = {key: value.name for key, value in backbone.state_dict().items()}
    skip = {head.weight.name, *(v.name for v in head.states()), *backbone_names.values(), lr_name}
    acc = accumulation_of(main)
    return TrainPrograms(
        main=main, startup=startup, eval_main=eval_main, exe=exe, scope=paddle.static.global_scope(),
        place=place, backbone=backbone, head=head, loss=loss, nonfinite=nonfinite,
        eval_embedding=eval_embedding, schedule=schedule, loss_scaling=loss_scaling,
        backbone_names=backbone_names,
        state_names=[n for n in ckpt.persistable_names(main) if n not in skip and not is_buffer(n)],
        bn_stat_names=[name for key, name in backbone_names.items() if key.endswith(("._mean", "._variance"))],
        **({} if acc is None else {"feed_names": ("images", "labels", "step_labels", acc.feed_name),
                                   "accumulate_steps": acc.steps}))
