"""paddle_pfc: Partial FC for PaddlePaddle 3 static (PIR) programs.

Public API: :func:`init_distributed`, :class:`LargeScaleClassifier`, :func:`minimize` (with
:class:`LossScaling`), :func:`run`, :func:`configure_process` (CPU math-library and allocator
settings; :func:`init_distributed` applies them), :func:`plan` / :func:`max_classes` (memory
per rank). Importing the package changes nothing in the process.
"""
from paddle_pfc.classifier import LargeScaleClassifier, class_split
from paddle_pfc.distributed import init_distributed
from paddle_pfc.loss_scaling import LossScaling
from paddle_pfc.optimizer import minimize
from paddle_pfc.planner import max_classes, plan
from paddle_pfc.runner import LabelRangeError, run
from paddle_pfc.runtime import configure_process

__version__ = "0.1.0"
__all__ = ["LargeScaleClassifier", "class_split", "init_distributed", "minimize", "LossScaling", "run",
           "LabelRangeError", "configure_process", "plan", "max_classes", "__version__"]
