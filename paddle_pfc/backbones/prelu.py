"""Channel PReLU whose training forward/backward run in the native CPU kernel.

``PReLU`` is Paddle's ``nn.PReLU`` (same parameter ``_weight`` [C], same initialisation, same
state-dict names, so checkpoints and exported models are unchanged), except that in a static
training program on CPU it calls :func:`paddle_pfc.native_ops.prelu` when the native kernels are
available (``PADDLE_PFC_NATIVE``): the same forward values bit for bit, a backward ~one pass over
memory instead of Paddle 3.3's slow CPU kernels. Evaluation programs (the layer in eval mode) —
validation, export — and GPU programs always use Paddle's op, so an exported model needs no
custom-op library.
"""
from __future__ import annotations

import paddle
from paddle import nn

from paddle_pfc import native_ops


def native_prelu_available() -> bool:
    """True when a static program built now on CPU would use the native PReLU kernel."""
    return (not paddle.in_dynamic_mode() and not paddle.device.get_device().startswith("gpu")
            and native_ops.kernels("backbone_ops") is not None)


class PReLU(nn.PReLU):
    """``nn.PReLU(num_parameters=C)`` on NCHW inputs; see the module docstring."""

    def forward(self, x):
        if self.training and self._num_parameters > 1 and self._data_format == "NCHW" \
                and x.dtype == paddle.float32 and native_prelu_available():
            return native_ops.prelu(x, self._weight)
        return super().forward(x)
