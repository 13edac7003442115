"""Per-iteration learning-rate schedules (linear warmup, then polynomial / cosine / step decay)."""
from __future__ import annotations

import math

import paddle


class WarmupDecay(paddle.optimizer.lr.LRScheduler):
    """``lr(step)`` for optimizer step ``step`` = 0, 1, ... (``step()`` is called once per iteration).

    Warmup: ``base * (step + 1) / warmup_steps`` for ``step < warmup_steps``. Then, with
    ``t = (step - warmup_steps) / (total_steps - warmup_steps)``: polynomial ``base * (1 - t)^power``
    (insightface's PolyScheduler), cosine ``base * (1 + cos(pi t)) / 2``, or step: ``base *
    factor^k`` after the k-th boundary of ``boundaries_steps``. A pure function of the step, so a
    resumed run only needs ``last_epoch`` (= the step) restored.
    """

    def __init__(self, base_lr: float, total_steps: int, warmup_steps: int = 0, kind: str = "polynomial",
                 power: float = 2.0, boundaries_steps: tuple[int, ...] = (), factor: float = 0.1) -> None:
        if total_steps < 1:
            raise ValueError(f"total_steps must be >= 1, got {total_steps}")
        if kind not in ("polynomial", "cosine", "step"):
            raise ValueError(f"lr schedule must be polynomial, cosine or step, got {kind!r}")
        self.total_steps, self.warmup_steps = int(total_steps), int(min(warmup_steps, total_steps))
        self.kind, self.power, self.factor = kind, float(power), float(factor)
        self.boundaries_steps = tuple(int(b) for b in boundaries_steps)
        super().__init__(learning_rate=float(base_lr), last_epoch=-1)

    def lr_at(self, step: int) -> float:
        base = self.base_lr
        if step < self.warmup_steps:
            return base * (step + 1) / self.warmup_steps
        if self.kind == "step":
            return base * self.factor ** sum(step >= b for b in self.boundaries_steps)
        span = max(1, self.total_steps - self.warmup_steps)
        t = min(1.0, (step - self.warmup_steps) / span)
        if self.kind == "cosine":
            return base * 0.5 * (1.0 + math.cos(math.pi * t))
        return base * (1.0 - t) ** self.power

    def get_lr(self) -> float:
        return self.lr_at(max(0, self.last_epoch))


def build_schedule(train_cfg, base_lr: float, steps_per_epoch: int) -> WarmupDecay:
    """The schedule of a ``train`` config section for ``steps_per_epoch`` optimizer steps per epoch."""
    total = train_cfg.epochs * steps_per_epoch
    return WarmupDecay(base_lr, total, warmup_steps=round(train_cfg.warmup_epochs * steps_per_epoch),
                       kind=train_cfg.lr_schedule, power=train_cfg.poly_power,
                       boundaries_steps=tuple(e * steps_per_epoch for e in train_cfg.decay_epochs),
                       factor=train_cfg.lr_decay_factor)
