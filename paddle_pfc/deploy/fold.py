"""Batch norm folded out of an eval-mode PIR program, for serving.

In eval mode a batch norm is the per-channel affine map ``y = a * x + b`` with
``a = scale / sqrt(variance + epsilon)`` and ``b = shift - mean * a`` (scale 1 and shift 0 when
the op has none). :func:`fold_batch_norms` rewrites a program in place, reading and writing the
values in its scope:

* after a convolution (``conv2d`` / ``depthwise_conv2d`` whose output only the norm reads, and
  whose filter only that convolution reads): the filter's output channels are multiplied by
  ``a`` and ``b`` is added to the convolution's output (one ``[1, C, 1, 1]`` parameter);
* after a linear layer (``matmul`` with a ``[in, out]`` weight, optionally followed by ``add`` of
  a bias, read only by the norm): the weight's columns are multiplied by ``a``, the bias becomes
  ``bias * a + b``;
* before a linear layer (``flatten`` of the NCHW norm output, then ``matmul`` and ``add`` of a
  bias, iresnet's last norm): the weight's rows are multiplied by ``a`` and ``b @ W`` is added
  to the bias;
* anywhere else (e.g. a norm before a padded convolution, where folding it into the convolution
  would change the border): ``x * a + b`` as two elementwise ops.

No batch_norm op is left, so no batch-norm kernel runs when the program is served (Paddle
3.3.1's oneDNN batch-norm kernel crashes on a norm without a scale). The folded program computes
the same function up to float32 rounding; the folded values are computed in float64.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["fold_batch_norms", "BATCH_NORM_OPS"]

BATCH_NORM_OPS = ("pd_op.batch_norm", "pd_op.batch_norm_")
_CONV_OPS = ("pd_op.conv2d", "pd_op.depthwise_conv2d")


class _Folder:
    def __init__(self, program, startup, scope, place) -> None:
        self.program, self.startup, self.scope, self.place = program, startup, scope, place
        self.block = program.global_block()
        self.params = 0
        self.outputs: list = []

    # ------------------------------------------------------------------ values
    @staticmethod
    def param_name(value) -> str | None:
        if value is None or not value.initialized():
            return None
        op = value.get_defining_op()
        return op.attrs()["parameter_name"] if op is not None and op.name() == "builtin.parameter" else None

    def read(self, value) -> np.ndarray:
        name = self.param_name(value)
        if name is None:
            raise ValueError("batch norm folding: expected a parameter operand")
        return np.array(self.scope.find_var(name).get_tensor(), dtype=np.float64)

    def write(self, name: str, array: np.ndarray) -> None:
        self.scope.var(name).get_tensor().set(np.ascontiguousarray(array, dtype=np.float32), self.place)

    def new_param(self, array: np.ndarray):
        import paddle

        self.params += 1
        name = f"folded_batch_norm.p_{self.params}"
        while self.scope.find_var(name) is not None:
            name += "_"
        param = paddle.static.create_parameter(list(array.shape), "float32", name=name,
                                               default_initializer=paddle.nn.initializer.Constant(0.0))
        self.write(name, array)
        return param

    # ------------------------------------------------------------------ folding
    def affine(self, op) -> tuple[np.ndarray, np.ndarray]:
        mean, var = self.read(op.operand_source(1)), self.read(op.operand_source(2))
        scale_v, shift_v = op.operand_source(3), op.operand_source(4)
        scale = self.read(scale_v) if scale_v.initialized() else np.ones_like(mean)
        shift = self.read(shift_v) if shift_v.initialized() else np.zeros_like(mean)
        a = scale / np.sqrt(var + float(op.attrs()["epsilon"]))
        return a, shift - mean * a

    def fold_one(self, op) -> str:
        import paddle

        x, y = op.operand_source(0), op.result(0)
        a, b = self.affine(op)
        channels = a.shape[0]
        source = x.get_defining_op()
        nchw = op.attrs().get("data_format", "NCHW") in ("NCHW", "AnyLayout")
        exclusive = len(x.all_used_ops()) == 1
        paddle.pir.set_insertion_point_after(op)
        kind = "affine"
        if exclusive and nchw and source is not None and source.name() in _CONV_OPS \
                and self.param_name(source.operand_source(1)) \
                and len(source.operand_source(1).all_used_ops()) == 1 \
                and source.attrs().get("data_format", "NCHW") == "NCHW":
            filt = source.operand_source(1)
            self.write(self.param_name(filt), self.read(filt) * a[:, None, None, None])
            new = paddle.add(x, self.new_param(b.reshape(1, channels, 1, 1)))
            kind = "conv"
        elif exclusive and len(x.shape) == 2 and source is not None and (linear := self._linear_fold(source, a)):
            # with a bias, b went into it; without one, b is added where the norm was
            new = paddle.add(x, self.new_param(b)) if linear == "no bias" else x
            if linear == "bias":
                bias = source.operand_source(1)
                self.write(self.param_name(bias), self.read(bias) * a + b)
            kind = "linear"
        elif nchw and len(x.shape) == 4 and self._fold_into_next_linear(y, a, b):
            new, kind = x, "linear"
        else:
            shape = [1, channels] + [1] * (len(x.shape) - 2) if nchw else [channels]
            new = paddle.add(paddle.multiply(x, self.new_param(a.reshape(shape))),
                             self.new_param(b.reshape(shape)))
        y.replace_all_uses_with(new)
        self.outputs = [new if v.is_same(y) else v for v in self.outputs]
        self.block.remove_op(op)
        return kind

    def _linear_fold(self, source, a: np.ndarray) -> str | None:
        """Scale the weight of ``matmul(h, W) [+ bias]`` producing the norm's input by ``a``:
        "bias" / "no bias" (whether an ``add`` of a bias follows), None when it is no such layer."""
        matmul, kind = source, "no bias"
        if source.name() in ("pd_op.add", "pd_op.add_"):
            lhs, rhs = source.operand_source(0), source.operand_source(1)
            if not self.param_name(rhs) or len(rhs.shape) != 1 or len(rhs.all_used_ops()) != 1:
                return None
            if lhs.get_defining_op() is None or len(lhs.all_used_ops()) != 1:
                return None
            matmul, kind = lhs.get_defining_op(), "bias"
        if matmul.name() != "pd_op.matmul" or matmul.attrs().get("transpose_x") or matmul.attrs().get("transpose_y"):
            return None
        weight = matmul.operand_source(1)
        if not self.param_name(weight) or len(weight.shape) != 2 or len(weight.all_used_ops()) != 1:
            return None
        self.write(self.param_name(weight), self.read(weight) * a[None, :])
        return kind

    def _fold_into_next_linear(self, y, a: np.ndarray, b: np.ndarray) -> bool:
        """Fold into ``flatten(y) @ W + bias`` reading the norm's NCHW output ``y`` (and nothing
        else reading it): ``W`` rows scaled by ``a``, ``bias += b @ W`` (each channel's ``a``, ``b``
        repeated over its ``H * W`` positions, flatten's order). False when it is no such layer."""
        users = y.all_used_ops()
        if len(users) != 1 or users[0].name() not in ("pd_op.flatten", "pd_op.flatten_"):
            return False
        flatten = users[0]
        attrs = flatten.attrs()
        if attrs.get("start_axis") != 1 or attrs.get("stop_axis") not in (-1, 3):
            return False
        flat = flatten.result(0)
        users = flat.all_used_ops()
        if len(users) != 1 or users[0].name() != "pd_op.matmul" or not users[0].operand_source(0).is_same(flat):
            return False
        matmul = users[0]
        if matmul.attrs().get("transpose_x") or matmul.attrs().get("transpose_y"):
            return False
        weight, out = matmul.operand_source(1), matmul.result(0)
        positions = int(np.prod(y.shape[2:])) if all(int(d) > 0 for d in y.shape[1:]) else -1
        if (not self.param_name(weight) or len(weight.all_used_ops()) != 1 or positions < 1
                or list(weight.shape)[0] != a.shape[0] * positions):
            return False
        users = out.all_used_ops()
        if len(users) != 1 or users[0].name() not in ("pd_op.add", "pd_op.add_"):
            return False
        bias = users[0].operand_source(1)
        if (not users[0].operand_source(0).is_same(out) or not self.param_name(bias)
                or len(bias.shape) != 1 or len(bias.all_used_ops()) != 1):
            return False
        w = self.read(weight)
        self.write(self.param_name(bias), self.read(bias) + np.repeat(b, positions) @ w)
        self.write(self.param_name(weight), w * np.repeat(a, positions)[:, None])
        return True

    def remove_dead_parameters(self) -> None:
        for op in list(self.block.ops):
            if op.name() == "builtin.parameter" and op.result(0).use_empty():
                self.block.remove_op(op)


def fold_batch_norms(program, startup, scope, place, outputs: Sequence = ()) -> tuple[dict[str, int], list]:
    """Fold every eval-mode batch norm of ``program`` (a PIR program whose parameter values live
    in ``scope``) as the module doc says, in place; new parameters are declared in ``startup``
    and set in ``scope``. ``outputs``: values of the program to fetch later (a norm's output is
    replaced by a new value). Returns (how many norms went each way ``{"conv", "linear",
    "affine"}``, ``outputs`` with replaced values swapped for their replacements)."""
    import paddle

    folder = _Folder(program, startup, scope, place)
    folder.outputs = list(outputs)
    counts = {"conv": 0, "linear": 0, "affine": 0}
    with paddle.static.program_guard(program, startup):
        try:
            for op in list(folder.block.ops):
                if op.name() in BATCH_NORM_OPS:
                    if not op.attrs().get("is_test", True) and not op.attrs().get("use_global_stats", False):
                        raise ValueError("batch norm folding needs an eval-mode program (a norm with "
                                         "is_test=False found)")
                    counts[folder.fold_one(op)] += 1
        finally:
            paddle.pir.reset_insertion_point_to_end()
    folder.remove_dead_parameters()
    return counts, folder.outputs
