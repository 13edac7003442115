"""What every backbone checks of its arguments and inputs, and the batch norm constants they share (no
Paddle imported: the deploy and interop layers check an input size without building anything)."""
from __future__ import annotations

from paddle_pfc.utils.errors import UsageError

__all__ = ["BN_EPSILON", "BN_MOMENTUM", "check_head_args", "normalize_input_size", "check_spatial"]

BN_EPSILON = 1e-5
# torch BatchNorm momentum 0.1 (weight of the new batch statistic) is
# Paddle momentum 0.9 (weight of the old running statistic).
BN_MOMENTUM = 0.9


def check_head_args(embedding_size, dropout) -> None:
    """UsageError naming the argument unless embedding_size is an int >= 1 and dropout in [0, 1)."""
    if isinstance(embedding_size, bool) or not isinstance(embedding_size, int) or embedding_size < 1:
        raise UsageError(f"embedding_size must be an int >= 1, got {embedding_size!r}")
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) \
            or not 0.0 <= float(dropout) < 1.0:
        raise UsageError(f"dropout must be a float in [0, 1), got {dropout!r}")


def normalize_input_size(input_size, multiple: int = 16) -> tuple[int, int]:
    """Return ``(H, W)`` from an int or a 2-sequence; ``UsageError`` naming
    ``input_size`` unless both are integers >= ``multiple`` and multiples of it (a backbone's
    input-size rule: :attr:`paddle_pfc.backbones.table.Backbone.input_multiple`)."""
    if isinstance(input_size, bool):
        raise UsageError(f"input_size must be an int or (H, W), got {input_size!r}")
    if isinstance(input_size, int):
        size = (input_size, input_size)
    else:
        try:
            size = tuple(input_size)
        except TypeError:
            raise UsageError(
                f"input_size must be an int or (H, W), got {input_size!r}"
            ) from None
        if len(size) != 2:
            raise UsageError(f"input_size must be an int or (H, W), got {input_size!r}")
    for s in size:
        if isinstance(s, bool) or not isinstance(s, int) or s < multiple or s % multiple != 0:
            raise UsageError(
                f"input_size must be integers >= {multiple} and multiples of {multiple}, "
                f"got {input_size!r}"
            )
    return int(size[0]), int(size[1])


def check_spatial(x, input_size) -> None:
    """Raise :class:`UsageError` when the static spatial size of ``x`` is known and
    differs from ``input_size`` (the FC width depends on it)."""
    shape = list(x.shape)
    if len(shape) != 4:
        raise UsageError(f"expected input [N, 3, H, W], got shape {shape}")
    hw = tuple(shape[2:])
    if all(isinstance(s, int) and s > 0 for s in hw) and hw != tuple(input_size):
        raise UsageError(
            f"input spatial size {hw} does not match the backbone's input_size "
            f"{tuple(input_size)}"
        )
