"""The config schema: one frozen dataclass per section, each field with its type, default, check and doc.

Contract:
  * A field's type is its annotation (``int``, ``float``, ``bool``, ``str``, ``X | None`` = nullable,
    ``tuple[int, ...]`` = a list of ints, ``tuple[ValSet, ...]`` = verification sets, ``dict`` = a
    backbone's options); its default is the dataclass default (none = required); ``doc``, ``check``
    (a :class:`Check`) and ``choices`` are in the field's metadata. :data:`SCHEMA` is the same
    information as :class:`Field` records, read by the validator and by ``tools/config_reference.py``.
  * Instances are the validated, read-only config: attribute access (``cfg.train.lr``), read-only
    Mapping access (``cfg["train"]["lr"]``, iteration over keys, equality with any Mapping of the
    same content), lists as tuples; ``to_dict()`` / ``to_yaml()`` give plain mutable data. They
    pickle and deep-copy (the trainer's subprocesses receive them).
"""
import dataclasses
import types
from collections.abc import Mapping
from dataclasses import MISSING, fields
from typing import Any, get_args

from paddle_pfc.backbones.names import BACKBONES  # model.backbone's choices: the backbones' one list
from paddle_pfc.backbones.table import Options, fits_an_input_rule, input_rules_text
from paddle_pfc.data.formats import FORMAT_NAMES, FORMATS, either, formats_where
from paddle_pfc.data.shape_policy import DEFAULT_NON_SQUARE, NON_SQUARE
from paddle_pfc.head.dtypes import DTYPE_BYTES, MOMENTUM_DTYPES

from .fields import Check, Field, Section, ge, gt, section, setting, within

DTYPES: tuple[str, ...] = tuple(DTYPE_BYTES)
AMP_MODES: tuple[str, ...] = ("none", "bf16", "fp16_o1", "fp16_o2")
DATA_KINDS: tuple[str, ...] = FORMAT_NAMES  # data.kind's choices: the data formats' one table
LR_SCHEDULES: tuple[str, ...] = ("polynomial", "cosine", "step")
LOSS_NAMES: tuple[str, ...] = ("arcface", "cosface", "combined", "adaface")
OPTIMIZERS: tuple[str, ...] = ("momentum", "sgd", "adamw")
DECAY_EXEMPTIONS: tuple[str, ...] = ("none", "norms_biases")


def _backbones() -> tuple[str, ...]:
    return BACKBONES


@section
class ValSet(Section):
    """One verification set of ``validation.sets``."""

    _prefix = "validation.sets."
    name: str
    path: str


@section
class ModelConfig(Section):
    backbone: str = setting("iresnet50", "backbone architecture", choices=_backbones)
    embedding_size: int = setting(512, "embedding dimension (backbone output, class-center width)", ge(1))
    dropout: float = setting(0.0, "dropout probability before the embedding layer (insightface: 0)",
                             within(0.0, 1.0, "[)"))
    input_size: int = setting(112, "input image side (pixels; the backbones have four stride-2 stages)",
                              Check(input_rules_text(), fits_an_input_rule))
    options: dict | None = setting(None, "the backbone's build options {name: value} (backbones/table.py)")
    pretrained: str | None = setting(
        None, "pretrained backbone to fine-tune from: a checkpoint folder or root, a best/ or exported "
        "model folder, a .pdparams/.npz state dict, or an arcface_torch .pt/.pth, ONNX or PLSC model "
        "(converted, see paddle_pfc/engine/pretrained.py); the class centers start fresh; ignored when resuming")


@section
class LossConfig(Section):
    """The margin (``name``). arcface / cosface / combined: the combined margin logit
    ``s * (cos(m1 * theta + m2) - m3)`` of margin1..3 and scale: ArcFace (1, 0.5, 0), CosFace (1, 0, 0.4);
    arcface and cosface refuse margins that are not theirs. adaface: AdaFace's norm-adaptive margin
    (adaface_m, adaface_h, adaface_t_alpha and scale)."""
    name: str = setting("combined", "the margin: arcface (margin2 > 0, margin1 1, margin3 0), cosface (margin3 > "
                        "0, margin1 1, margin2 0), combined (margin1..3 as given) or adaface (adaface_*); "
                        "each with scale", choices=LOSS_NAMES)
    margin1: float = setting(1.0, "multiplicative angular margin m1", within(0.0, 4.0, "(]"))
    margin2: float = setting(0.5, "additive angular margin m2 (ArcFace), radians", within(-1.0, 1.0, "()"))
    margin3: float = setting(0.0, "additive cosine margin m3 (CosFace)", within(-1.0, 1.0, "()"))
    scale: float = setting(64.0, "logit scale s (insightface: 30-64; below 1 every logit lies in [-1, 1] and the "
                           "softmax cannot tell the classes apart; far larger saturates it)",
                           within(1.0, 1024.0, "[]"))
    adaface_m: float = setting(0.4, "AdaFace margin m", within(0.0, 1.0, "[)"))
    adaface_h: float = setting(0.333, "AdaFace h: how far a feature norm one std from the mean moves the margin",
                               gt(0.0))
    adaface_t_alpha: float = setting(0.01, "AdaFace moving-average weight of a batch's norm mean and std",
                                     within(0.0, 1.0, "(]"))


@section
class ClassifierConfig(Section):
    sample_ratio: float = setting(1.0, "Partial FC sampling ratio: fraction of class centers kept per step "
                                  "(positives always kept)", within(0.0, 1.0, "(]"))
    dtype: str = setting("float32", "classifier product dtype (logits, softmax and loss stay float32; "
                         "float16 on GPU only)", choices=DTYPES)
    center_dtype: str = setting("float32", "class-center (and momentum) storage dtype; the update is "
                                "float32 arithmetic", choices=DTYPES)
    momentum_dtype: str | None = setting(None, "class-center momentum storage dtype (leave it out: center_dtype); "
                                         "int8 (CPU): one byte an element and a float32 scale a row, re-quantized "
                                         "from the float32 update of each kept row", choices=MOMENTUM_DTYPES)
    center_init: str = setting("random", "class-center initialisation; mean_embedding: the mean normalised "
                               "embedding of the class's images under model.pretrained (required)",
                               choices=("random", "mean_embedding"))
    center_init_images: int = setting(16, "images per class for center_init (the first ones)", ge(1))
    kernels: str = setting("auto", "classifier kernels: auto = fused on GPU, composite on CPU; fused on CPU "
                           "emulates the GPU kernels", choices=("auto", "fused", "composite"))


@section
class DataConfig(Section):
    kind: str = setting("synthetic", "dataset kind: " + either(tuple(f.summary for f in FORMATS), quote=False),
                        choices=DATA_KINDS)
    root: str | None = setting(None, "dataset root directory, also of the validation .bin files; required "
                               "for " + "/".join(formats_where("under_root")))
    num_classes: int | None = setting(MISSING, "number of identities (null: the data's count, " + "; ".join(
        f"{f.name}: {f.classes_from}" for f in FORMATS if f.classes_from) + ")", ge(2))
    label_file: str = setting("label.txt", "folder data: the label file, relative to data.root (paddle-pfc-pairs "
                              "writes train_label.txt: the identities it did not hold out)")
    non_square: str = setting(DEFAULT_NON_SQUARE, "how an image that is not square becomes the square model "
                              "input before its resize (training and validation): pad (with its border "
                              "row / column), crop (the centre square) or stretch (resized without keeping "
                              "its aspect ratio); square images (aligned crops, insightface data) are the "
                              "same under each", choices=NON_SQUARE)
    samples_per_class: int = setting(20, "synthetic images per identity", ge(1))
    image_size: int | None = setting(None, "image side: leave it out, it follows model.input_size (accepted "
                                     "when equal to it)", ge(1))
    num_workers: int = setting(2, "loader workers per rank (0 = load in the main process)", ge(0))
    flip: bool = setting(True, "random horizontal flip")
    skip_bad: bool = setting(False, "skip corrupt images instead of failing")
    allow_outside_root: bool = setting(False, "folder data: let label.txt name files outside data.root (an "
                                       "absolute path, '..', a symlink leading out); refused by default")
    batch_timeout: float = setting(600.0, "seconds a rank waits for one batch from its loader workers before "
                                   "failing (a stuck worker: a hung file system, a deadlocked decoder)", gt(0.0))
    seed: int = setting(0, "data seed (shuffling, synthetic generation)")


@section
class TrainConfig(Section):
    epochs: int = setting(20, "training epochs", ge(1))
    batch_size: int = setting(128, "per-rank batch (global: batch_size x ranks x train.accumulate_steps)", ge(1))
    accumulate_steps: int = setting(1, "micro-batches per optimizer step (one sampled set of centers a step; each step "
                                    "count, lr included, counts optimizer steps: docs/training.md)", ge(1))
    lr: float | None = setting(None, "learning rate; with train.lr_reference_batch set, the rate at that "
                               "global batch, scaled linearly: lr x global_batch / lr_reference_batch "
                               "(null = 0.1 at reference batch 512: 0.1*global_batch/512)", gt(0.0))
    lr_reference_batch: int | None = setting(None, "global batch (ranks x batch_size x accumulate_steps) at which "
                                             "train.lr applies; the run's rate is lr x global_batch / this (null: "
                                             "train.lr as given, for any batch; 512 when train.lr is null)", ge(1))
    lr_schedule: str = setting("polynomial", "lr schedule after warmup (polynomial: insightface's)",
                               choices=LR_SCHEDULES)
    poly_power: float = setting(2.0, "polynomial decay power", gt(0.0))
    warmup_epochs: float = setting(0.0, "linear warmup epochs, from 0 to lr (fractional allowed)", ge(0.0))
    decay_epochs: tuple[int, ...] = setting((), "step-schedule decay epochs")
    lr_decay_factor: float = setting(0.1, "step-schedule decay factor", within(0.0, 1.0, "()"))
    optimizer: str = setting("momentum", "optimizer of the backbone and the class centers (adamw: decoupled decay; "
                             "the centers' rows bias-corrected by their own step counts, docs/training.md)",
                             choices=OPTIMIZERS)
    momentum: float = setting(0.9, "SGD momentum (train.optimizer momentum)", within(0.0, 1.0, "[)"))
    betas: tuple[float, ...] = setting((0.9, 0.999), "AdamW's beta1, beta2 (train.optimizer adamw)", Check(
        "two values in [0, 1)", lambda v: len(v) == 2 and all(0 <= b < 1 for b in v)))
    eps: float = setting(1e-8, "AdamW's epsilon (train.optimizer adamw)", ge(0.0))
    weight_decay: float = setting(5e-4, "weight decay of backbone and centers (adamw: decoupled)", ge(0.0))
    weight_decay_exempt: str = setting("none", "parameters without weight decay: none (arcface_torch) or norms_biases "
                                       "(adamw: 1-D parameters, position embeddings, class tokens)",
                                       choices=DECAY_EXEMPTIONS)
    grad_clip: float | None = setting(5.0, "backbone grad-norm clip (arcface_torch: 5; null = off)", gt(0.0))
    amp: str = setting("none", "backbone mixed precision mode (fp16_*: GPU; fp16_o2: float16 weights, "
                       "float32 master weights; bf16: GPU autocast, or on a CPU with AVX512_BF16 / AMX the "
                       "oneDNN convolutions multiply in bfloat16, with bfloat16 activations between them and "
                       "their batch norms, and a ViT's block Linears (qkv, proj, fc1, fc2) multiply in bfloat16; "
                       "weights and optimizer float32)", choices=AMP_MODES)
    loss_scaling: str = setting("auto", "dynamic loss scaling (auto = on with float16 amp or classifier)",
                                choices=("auto", "on", "off"))
    init_loss_scaling: float = setting(
        65536.0, "initial loss scale (halved on overflow, doubled after 2000 good steps)",
        Check("in [1, 2^24 = 16777216] (Paddle and torch start at 2^15-2^16)", lambda v: 1.0 <= v <= 2.0**24))
    seed: int = setting(2048, "training seed (parameter init, dropout)")
    log_every: int = setting(10, "log interval (steps); an epoch shorter than 4 x log_every logs about 4 "
                             "lines an epoch instead", ge(1))
    output_dir: str = setting("output", "output directory (logs, checkpoints, the echoed config)")
    checkpoint_every_steps: int = setting(0, "checkpoint interval (steps; 0 = at the end of each epoch only)",
                                          ge(0))
    keep_checkpoints: int = setting(3, "checkpoints to keep", ge(1))
    resume: str | None = setting(None, "checkpoint to resume from: a checkpoint folder, a checkpoints root "
                                 "(its newest complete one), auto (the newest in output_dir, else a fresh "
                                 "start) or null (a fresh start)")
    overwrite: bool = setting(False, "delete existing checkpoints of output_dir on a fresh run")
    max_bad_steps: int = setting(5, "consecutive non-finite steps before stopping", ge(1))
    collective_timeout: float = setting(1800.0, "rank wait timeout (seconds; also NCCL's)", gt(0.0))
    preempt_grace: float | None = setting(None, "seconds from SIGTERM within which the ranks stop at a common "
                                          "step and checkpoint it; past it they exit without one (null: 20 s plus "
                                          "two steps as measured plus the rank's checkpoint at 50 MB/s; "
                                          "docs/reliability.md)", within(0.0, 3600.0, "(]"))
    freeze_backbone_steps: int = setting(0, "steps training the head alone (backbone and its BatchNorm "
                                         "statistics kept)", ge(0))
    max_steps: int | None = setting(None, "hard step limit", ge(1))


@section
class ValidationConfig(Section):
    sets: tuple[ValSet, ...] = setting((), "verification sets [{name, path}] (a relative path is under "
                                       "data.root)")
    every_steps: int = setting(2000, "validation interval (steps; 0 = at the end of each epoch only)", ge(0))
    batch_size: int = setting(128, "validation batch size", ge(1))
    nrof_folds: int = setting(10, "verification folds", ge(1))
    synthetic_pairs: int = setting(0, "held-out synthetic verification pairs (synthetic data only)", ge(0))
    threshold_far: float | None = setting(None, "best/'s threshold: at this false-accept rate on the first set's "
                                          "impostor pairs (null: the middle of the best-accuracy range)",
                                          within(0.0, 1.0, "()"))


@section
class Config(Section):
    """A validated configuration (see the package docstring); build it with ``load_config``."""

    model: ModelConfig
    loss: LossConfig
    classifier: ClassifierConfig
    data: DataConfig
    train: TrainConfig
    validation: ValidationConfig

    @classmethod
    def from_validated(cls, data: Mapping[str, Mapping[str, Any]]) -> "Config":
        """The Config of a fully validated nested dict (lists become tuples)."""
        def value(f: "Field", v: Any) -> Any:
            if f.kind in ("val_sets", "options"):
                return tuple(ValSet(**s) for s in v) if f.kind == "val_sets" else None if v is None else Options(v)
            return tuple(v) if f.kind in ("int_list", "float_list") else v
        return cls(**{s: SECTIONS[s](**{k: value(f, data[s][k]) for k, f in keys.items()})
                      for s, keys in SCHEMA.items()})


_KINDS = {int: "int", float: "float", bool: "bool", str: "str", dict: "options",
          tuple[int, ...]: "int_list", tuple[float, ...]: "float_list", tuple[ValSet, ...]: "val_sets"}


def _field(f: dataclasses.Field) -> Field:
    kind, nullable = f.type, False
    if isinstance(kind, types.UnionType):
        (kind,), nullable = [t for t in get_args(kind) if t is not type(None)], True
    meta = f.metadata
    return Field(_KINDS[kind], f.default, meta["doc"], nullable, meta["choices"], meta["check"])


#: Section name -> its dataclass, in config order.
SECTIONS: dict[str, type[Section]] = {f.name: f.type for f in fields(Config)}
for _name, _cls in SECTIONS.items():
    _cls._prefix = f"{_name}."
#: Section name -> key -> :class:`Field`, in config order.
SCHEMA: dict[str, dict[str, Field]] = {
    s: {f.name: _field(f) for f in fields(cls)} for s, cls in SECTIONS.items()}
