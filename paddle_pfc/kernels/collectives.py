"""Collectives of the Partial FC head, issued in one fixed order on every rank.

Paddle's PIR executor runs independent ops on several threads, so two collectives with no data
dependency may be issued in different orders on different ranks (3 gloo ranks aborted that way).
:class:`CollectiveChain` removes the freedom: every collective it issues takes a data dependency on
the previous one's output through a one-element (or ``[B, D]`` zero-add) tie that costs nothing
measurable. All collectives use the global communicator (ring 0) created by
:func:`paddle_pfc.init_distributed`.
"""
from __future__ import annotations

import paddle
from paddle import _C_ops

_SUM, _MAX = 0, 1
#: The global communicator's ring id (:func:`paddle_pfc.init_distributed` creates it).
RING = 0


def zero_depending_on(value: paddle.pir.Value, dtype="float32") -> paddle.pir.Value:
    """A zero scalar of ``dtype`` computed from one element of ``value``: a data dependency that
    reads no more than that element (slicing, not reshaping, which would copy the tensor). It is
    zero even when that element is inf or NaN (``x * 0`` would be NaN), so a tie never carries a
    non-finite value into what it orders (the loss-scaling check relies on it)."""
    ndim = len(value.shape)
    if ndim:
        value = paddle.reshape(paddle.slice(value, list(range(ndim)), [0] * ndim, [1] * ndim), [])
    if value.dtype in (paddle.float32, paddle.float64, paddle.float16, paddle.bfloat16):
        value = paddle.isfinite(value)
    return paddle.cast(value, dtype) * 0


class CollectiveChain:
    """Issues collectives for one program in a total order shared by all ranks.

    ``world_size == 1`` makes every method an identity (no communication at all).
    """

    def __init__(self, world_size: int) -> None:
        self.world_size = world_size
        self._last: paddle.pir.Value | None = None

    # --- ordering -------------------------------------------------------------------------------
    def tied(self, x: paddle.pir.Value) -> paddle.pir.Value:
        """``x`` unchanged in value, but computed after the previous collective of this chain."""
        if self._last is None:
            return x
        anchor = zero_depending_on(self._last, x.dtype)
        anchor.stop_gradient = True
        return x + anchor

    def after(self, value: paddle.pir.Value) -> None:
        """Order the next collective after ``value`` (e.g. a collective issued outside this chain)."""
        self._last = value

    def _issued(self, out: paddle.pir.Value) -> paddle.pir.Value:
        self._last = out
        return out

    # --- raw collectives (no gradient) --------------------------------------------------------------
    def all_gather(self, x: paddle.pir.Value) -> paddle.pir.Value:
        """Concatenate ``x`` ([B, ...]) of every rank along axis 0 in rank order → [W*B, ...]."""
        if self.world_size == 1:
            return x
        return self._issued(_C_ops.all_gather(self.tied(x), RING, self.world_size))

    def all_reduce_sum(self, x: paddle.pir.Value) -> paddle.pir.Value:
        """Elementwise sum over ranks."""
        if self.world_size == 1:
            return x
        return self._issued(_C_ops.all_reduce(self.tied(x), RING, _SUM))

    def all_reduce_sum_concat(self, pieces: list[paddle.pir.Value]) -> paddle.pir.Value:
        """Elementwise sum over ranks of the 1-D concatenation of ``pieces`` (one dtype) followed by
        one zero element, [sum of their sizes + 1]. That element is the tie to the previous
        collective: it rides in the concatenation, where :meth:`tied` would make a pass over the
        whole buffer (docs/performance.md: its cost)."""
        if self.world_size == 1:
            return paddle.concat([*pieces, paddle.zeros([1], pieces[0].dtype)])
        tail = zero_depending_on(self._last, pieces[0].dtype) if self._last is not None \
            else paddle.zeros([], pieces[0].dtype)
        flat = paddle.concat([*pieces, paddle.reshape(tail, [1])])
        return self._issued(_C_ops.all_reduce(flat, RING, _SUM))

    def all_reduce_max(self, x: paddle.pir.Value) -> paddle.pir.Value:
        """Elementwise maximum over ranks."""
        if self.world_size == 1:
            return x
        return self._issued(_C_ops.all_reduce(self.tied(x), RING, _MAX))

    # --- collectives with gradient ---------------------------------------------------------------
    def all_gather_with_grad(self, x: paddle.pir.Value, rank: int) -> paddle.pir.Value:
        """All-gather ``x`` [B, D] → [W*B, D] with a gradient.

        Backward: the gradient of the gathered tensor is summed over ranks (every rank's loss term
        contributes to every sample) and this rank's rows ``[rank*B, (rank+1)*B)`` are returned —
        the exact gradient of the global loss with respect to this rank's ``x``. Paddle's own
        ``all_gather`` has no backward in PIR; this one does, as a ``static_pylayer``.
        """
        if self.world_size == 1:
            return x
        if x.stop_gradient:
            return self.all_gather(x)
        local_rows = x.shape[0]
        world_size = self.world_size

        def forward(local):
            return _C_ops.all_gather(local, RING, world_size)

        def backward(grad_gathered):
            # Runs after every forward collective (it consumes their results); minimize() orders
            # later collectives after this rank's feature gradient, the output of this function.
            grad_sum = _C_ops.all_reduce(grad_gathered, RING, _SUM)
            if local_rows is not None and local_rows >= 0:
                return grad_sum[rank * local_rows:(rank + 1) * local_rows]
            rows = paddle.shape(grad_sum)[0] // world_size
            return paddle.slice(grad_sum, [0], [rank * rows], [(rank + 1) * rows])

        gathered = paddle.static.nn.static_pylayer(forward, [self.tied(x)], backward)
        return self._issued(gathered)
