"""paddle_pfc: Partial FC for PaddlePaddle 3 static (PIR) programs.

Public API: :func:`init_distributed`, :class:`LargeScaleClassifier`, :func:`minimize` (with
:class:`LossScaling`; :func:`accumulation_of` for gradient accumulation), :func:`run`,
:func:`configure_process` (CPU math-library and allocator settings; :func:`init_distributed`
applies them), :func:`plan` / :func:`max_classes` (memory per rank).

Layers, lowest first (docs/architecture.md): :mod:`paddle_pfc.utils` (files, pickles, errors, the
CPU), :mod:`paddle_pfc.kernels` (native CPU ops, fused GPU kernels and their emulations),
:mod:`paddle_pfc.runtime` (process settings, ranks, barriers), :mod:`paddle_pfc.data`,
:mod:`paddle_pfc.head` (the classifier, its math, ``run`` and its errors), :mod:`paddle_pfc.backbones`,
:mod:`paddle_pfc.evaluation`, :mod:`paddle_pfc.deploy`, :mod:`paddle_pfc.interop` (other frameworks'
models), :mod:`paddle_pfc.engine` (config, trainer, checkpoints), :mod:`paddle_pfc.cli` (the commands).
Every public name below is defined in the runtime or the head: a user of the head alone never loads
the engine.

Importing the package changes nothing in the process and loads nothing: the names below are
imported on first use (so ``paddle_pfc.head.planner`` works without Paddle installed).
"""
from __future__ import annotations

import warnings

from paddle_pfc.utils.lazy import lazy_getattr
from paddle_pfc.utils.version import VERSION as __version__

# Paddle's extension builder warns "No ccache found" when paddle is imported (our native kernels
# are built once and reused, without ccache): not a user's concern.
warnings.filterwarnings("ignore", message="No ccache found", category=UserWarning,
                        module=r"paddle\.utils\.cpp_extension\.extension_utils")

_PUBLIC = {
    "LargeScaleClassifier": "paddle_pfc.head.classifier",
    "class_split": "paddle_pfc.head.geometry",
    "init_distributed": "paddle_pfc.runtime.distributed",
    "LossScaling": "paddle_pfc.head.loss_scaling",
    "minimize": "paddle_pfc.head.optimizer",
    "accumulation_of": "paddle_pfc.head.accumulation",
    "plan": "paddle_pfc.head.planner",
    "max_classes": "paddle_pfc.head.planner",
    "run": "paddle_pfc.head.runner",
    "LabelRangeError": "paddle_pfc.head.errors",
    "BatchSizeError": "paddle_pfc.head.errors",
    "configure_process": "paddle_pfc.runtime.process",
}
__all__ = [*_PUBLIC, "__version__"]


__getattr__ = lazy_getattr(__name__, _PUBLIC, globals())


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
