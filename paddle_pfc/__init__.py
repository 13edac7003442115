"""paddle_pfc: Partial FC for PaddlePaddle 3 static (PIR) programs.

Public API: :func:`init_distributed`, :class:`LargeScaleClassifier`, :func:`minimize` (with
:class:`LossScaling`), :func:`run`,
:func:`plan` / :func:`max_classes` (memory per rank).
"""
from paddle_pfc import _runtime_env

_runtime_env.apply()

from paddle_pfc.classifier import LargeScaleClassifier, class_split  # noqa: E402
from paddle_pfc.distributed import init_distributed  # noqa: E402
from paddle_pfc.loss_scaling import LossScaling  # noqa: E402
from paddle_pfc.optimizer import minimize  # noqa: E402
from paddle_pfc.planner import max_classes, plan  # noqa: E402
from paddle_pfc.runner import LabelRangeError, run  # noqa: E402

__version__ = "0.1.0"
__all__ = ["LargeScaleClassifier", "class_split", "init_distributed", "minimize", "LossScaling", "run",
           "LabelRangeError", "plan", "max_classes", "__version__"]
