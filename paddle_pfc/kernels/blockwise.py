"""The per-block operations of the composite head and of the sparse update, in two backends.

:class:`PaddleBlockOps` builds them from Paddle's own ops (any device); :class:`NativeBlockOps`
from the one-pass native CPU kernels of :mod:`paddle_pfc.kernels.native_ops` (same arithmetic,
up to float32 summation order). A head picks one once (:func:`paddle_pfc.kernels.choose_backend`).
The one difference in what they hand on: the native update takes the tangent projection of the
center gradient itself (:attr:`PaddleBlockOps.projects_in_update`), so the gradient between the
loss's backward and the update is the unprojected one there.

Shapes: ``N`` rows of the gathered batch, ``c`` rows of a block of kept centers, ``D`` the
embedding size. Everything is float32 unless stated; trailing ``_``: writes its first input in
place (later readers must use the returned Value).
"""
from __future__ import annotations

from typing import Protocol

import paddle
from paddle import _C_ops

from paddle_pfc.kernels import native_ops, onednn_ops
from paddle_pfc.kernels.collectives import zero_depending_on

NORM_EPS = 1e-12
Value = paddle.pir.Value


class UpdateRule(Protocol):
    """The optimizer's rule (:class:`paddle_pfc.head.sparse_update.CenterUpdateRule`)."""

    momentum: float | None  # None: plain SGD
    nesterov: bool
    weight_decay: float
    rescale_grad: float


def native_bfloat16_products() -> bool:
    """oneDNN's bfloat16 products run natively on this CPU (AVX512-BF16 / AMX) and build here."""
    return onednn_ops.bfloat16_unsupported() is None


def float32(x: Value) -> Value:
    """``x`` widened to float32 (``x`` itself when it already is)."""
    return x if x.dtype == paddle.float32 else paddle.cast(x, "float32")


class PaddleBlockOps:
    """The block operations from Paddle's ops."""

    native = False
    #: True when :meth:`update_rows_` projects the block gradient onto the tangent space of the
    #: centers itself (:meth:`center_grad_` then hands the unprojected gradient on).
    projects_in_update = False
    #: A center gradient element of magnitude >= 2**grad_limit_log2 counts as non-finite in the
    #: step's check (128: inf and NaN only). Below 128, :meth:`product_grad_` also turns every
    #: element of d(product) that could lead to such a center gradient into NaN, which reaches the
    #: feature's gradient through its product with the centers: a finite feature gradient then
    #: vouches for the center gradients (``paddle_pfc.head.optimizer``).
    grad_limit_log2 = 128

    def product(self, a: Value, b: Value, transpose_a: bool, transpose_b: bool, dtype: str) -> Value:
        """``op(a) @ op(b)`` (``op``: transposed when asked) of float32 operands holding values of
        ``dtype`` (float32, or bfloat16 values widened: see
        :func:`paddle_pfc.head.margin_softmax.as_float32_operand`); float32 products and sums."""
        return paddle.matmul(a, b, transpose_x=transpose_a, transpose_y=transpose_b)

    def products_round(self, dtype: str) -> bool:
        """True when :meth:`product` rounds float32 operands to ``dtype`` itself (so they may be
        passed unrounded)."""
        return False

    def reads_rows_by_index(self, dtype: str, table_dtype: str) -> bool:
        """True when :meth:`indexed_logits` and :meth:`indexed_backward` run for products of
        ``dtype`` on a shard stored in ``table_dtype``: a block of scattered kept rows then needs no
        gathered copy that outlives its product. Only ops that project the center gradient in the
        update (:attr:`projects_in_update`) may say so: the gradient of such a block goes on
        unprojected."""
        return False

    def indexed_logits(self, features: Value, table: Value, index: Value, dtype: str) -> tuple[Value, Value]:
        """:meth:`logits_and_norms` (float32) of the rows ``table[index]`` (int64 [c]) as the
        products' operand of ``dtype`` (their values rounded to ``dtype``), read from the shard by
        the op itself (where they lie, or through a copy freed after the product)."""
        raise NotImplementedError("Paddle's ops read scattered rows through a gathered copy")

    def indexed_backward(self, dlogits: Value, features: Value, table: Value, index: Value, dtype: str,
                         grad_dtype: str = "float32") -> tuple[Value, Value]:
        """``(dlogits @ rows [N, D], dlogits^T @ features [c, D])``: a block's two gradient
        products (float32 products) with its rows ``table[index]``, as :meth:`indexed_logits` reads
        them; the second in ``grad_dtype`` (float32 or bfloat16)."""
        raise NotImplementedError("Paddle's ops read scattered rows through a gathered copy")

    def gather_rows(self, table: Value, index: Value) -> Value:
        """``table[index]``: rows ``index`` (int64 [c]) of ``table`` [L, D], [c, D] in its dtype."""
        return paddle.gather(table, index)

    def row_range(self, table: Value, start: int, end: int) -> Value:
        """Rows ``[start, end)`` of ``table`` [L, D]: [end - start, D] in its dtype, for reading
        (a copy here; the native ops share the table's memory)."""
        return paddle.slice(table, [0], [start], [end])

    def inverse_row_norm(self, rows: Value, round_bfloat16: bool = False) -> Value:
        """``1 / max(|rows[j]|, eps)`` of [R, D] ``rows``, shape [R] (frobenius_norm: one pass);
        with ``round_bfloat16`` the norms of the rows' values rounded to bfloat16."""
        if round_bfloat16:
            rows = paddle.cast(paddle.cast(rows, "bfloat16"), "float32")
        return 1.0 / paddle.clip(_C_ops.frobenius_norm(rows, [1], False, False), min=NORM_EPS)

    def logits_and_norms(self, features: Value, rows: Value, dtype: str, round_bfloat16: bool = False
                         ) -> tuple[Value, Value]:
        """``(features @ rows^T, inverse_row_norm(rows, round_bfloat16))``: a block's product [N, c]
        (:meth:`product` of ``features`` [N, D] and the block's ``rows`` [c, D]) and the rows'
        inverse norms [c]."""
        inv_norm = self.inverse_row_norm(rows, round_bfloat16)
        return self.product(features, rows, False, True, dtype), inv_norm

    def block_softmax_(self, product: Value, inv_norm: Value, scale: float, target_logit: Value,
                       local_target: Value, in_block: Value, start: int) -> tuple[Value, Value, Value, Value]:
        """A block's forward after its product, in place on ``product`` [N, c]: logits ``product *
        inv_norm * scale`` (``inv_norm`` [c]), the target's logit ``target_logit`` [N, 1] at column
        ``local_target - start`` of the rows where ``in_block`` ([N, 1] bool; ``local_target``
        int64 [N, 1]), the row softmax up to a row factor. Returns ``(weights [N, c], log-sum-exp
        of the logits [N, 1], log_scale [N, 1], column [N, 1])``: the row softmax of any
        normaliser ``lse`` (the block's, or the global one) is ``weights * exp(log_scale - lse)``;
        ``column`` is what :meth:`product_grad_` takes. Here ``weights`` is the block softmax
        (``log_scale`` its log-sum-exp)."""
        logits = _C_ops.multiply_(product, inv_norm * scale)
        column = paddle.where(in_block, local_target - start, paddle.zeros_like(local_target))
        at_column = paddle.take_along_axis(logits, column, axis=1, broadcast=False)
        logits = _C_ops.put_along_axis_(logits, column, paddle.where(in_block, target_logit, at_column),
                                        1, "assign", True)
        # In-place softmax; its value at the row maximum M is 1/sum, so the block's log-sum-exp is
        # M - log(max softmax) (no extra exp pass).
        block_max = paddle.max(logits, axis=1, keepdim=True)
        softmax = _C_ops.softmax_(logits, 1)
        lse = block_max - paddle.log(paddle.max(softmax, axis=1, keepdim=True))
        return softmax, lse, lse, column

    def product_grad_(self, softmax: Value, to_global: Value, in_block: Value, column: Value, slope: Value,
                      coef: Value, inv_norm: Value) -> Value:
        """dL/d(product) of a block, in place on its ``softmax`` [N, c] (the ``weights`` of
        :meth:`block_softmax_`; ``to_global`` turns them into the global softmax): ``softmax *
        to_global * coef * inv_norm`` off the target, ``(softmax * to_global - 1) * slope * coef *
        inv_norm`` at it (``to_global``, ``slope`` [N, 1]; ``coef`` a scalar; ``inv_norm`` [c])."""
        p_target = paddle.take_along_axis(softmax, column, axis=1, broadcast=False) * to_global
        grad_target = paddle.where(in_block, (p_target - 1.0) * slope, p_target) * coef
        grad_cos = _C_ops.multiply_(softmax, to_global * coef)
        grad_cos = _C_ops.put_along_axis_(grad_cos, column, grad_target, 1, "assign", True)
        return _C_ops.multiply_(grad_cos, inv_norm)

    def center_grad_(self, grad: Value, rows: Value, inv_norm: Value, after: Value) -> Value:
        """The block gradient as :meth:`update_rows_` takes it, from ``grad`` [c, D] = the gradient
        w.r.t. the unit rows times ``inv_norm`` [c] (``rows`` [c, D] the block's values): its tangent
        projection ``grad[j] -= (grad[j] . rows[j]) * inv_norm[j]**2 * rows[j]``, in place,
        ordered after ``after`` (the last other reader of ``rows``)."""
        along = paddle.sum(grad * rows, axis=1)
        radial = paddle.unsqueeze(along * inv_norm * inv_norm, 1) + zero_depending_on(after)
        return _C_ops.subtract_(grad, rows * radial)

    def sample_shard(self, local_label: Value, num_local: int, num_sample: int) -> Value:
        """int64 [S], ascending: a shard's kept centers — every positive (the labels of int64
        ``local_label`` [N] in ``[0, num_local)``; negative labels are other shards') and a uniformly
        random subset of the negatives filling up to ``num_sample`` < ``num_local`` (none when the
        positives are more: S = max(num_sample, positives)). Shards below 2**31 classes.

        Every center gets a distinct int64 key: a positive its index ``j``, a negative ``r * 2**b
        + j`` with ``2**b > num_local`` and ``r`` a fresh random integer of ``62 - b`` bits (>= 1,
        so every negative key is above every positive one). The kept centers are those whose keys
        are at most the ``num_sample``-th smallest, or every positive when they are more: all
        positives and the negatives with the smallest draws, a uniform random subset of them (two
        equal draws, about ``num_local**2 / 2**(63 - b)`` pairs a step, are ordered by index). One
        selection (``kthvalue``) over the keys; the kept indices come out ascending, with no sort
        and no gather through a random permutation."""
        bits = num_local.bit_length()  # 2**bits > num_local: the spare slot's index fits too
        low_bits = 62 - 31 - bits      # the draw: 31 bits from one randint, low_bits from another
        if low_bits < 0:
            raise ValueError(f"sampling supports shards of fewer than 2**31 classes, got {num_local}")
        index = paddle.arange(num_local + 1, dtype="int64")  # num_local: the spare slot, dropped after
        high = paddle.randint(1, 2**31 - 1, [num_local + 1], dtype="int64")
        low = paddle.randint(0, 2**low_bits, [num_local + 1], dtype="int64") if low_bits else None
        draw = high * (2 ** (low_bits + bits)) + index
        if low is not None:
            draw = draw + low * (2**bits)
        # Positives take their index as key; labels of other shards write into the spare slot.
        is_local = local_label >= 0
        slot = paddle.where(is_local, local_label, paddle.full_like(local_label, num_local))
        key = paddle.scatter(draw, slot, slot, overwrite=True)[:num_local]
        threshold = paddle.maximum(paddle.kthvalue(key, num_sample)[0],
                                   paddle.full([], 2**bits - 1, dtype="int64"))
        return paddle.masked_select(index[:num_local], key <= threshold)

    def any_nonfinite(self, values: list[Value], limit_log2: int = 128) -> Value:
        """bool [1]: True when any element of the non-empty ``values`` (any float dtypes and shapes)
        is inf or NaN, or (``limit_log2`` < 128, where :attr:`grad_limit_log2` is below 128) of
        magnitude >= ``2**limit_log2``. Reads the values only."""
        if limit_log2 != 128:
            raise ValueError("nonfinite_flag: a magnitude limit needs the native kernels and float32 / bfloat16 values")
        bad = [paddle.reshape(paddle.logical_not(paddle.all(paddle.isfinite(v))), [1]) for v in values]
        return paddle.reshape(paddle.any(paddle.concat(bad)), [1]) if len(bad) > 1 else bad[0]

    def update_rows_(self, weight: Value, velocity: Value | None, index: Value, centers: Value, grad: Value,
                     lr: Value, rule: UpdateRule, velocity_scale: Value | None = None) -> None:
        """Apply ``rule`` to rows ``index`` (int64 [c]) of ``weight`` [L, D] (and of ``velocity``)
        in place, with ``grad`` [c, D] (what :meth:`center_grad_` handed on) and the float32
        scalar ``lr``: float32 arithmetic, written back in the storage dtype. ``centers``: the
        block's forward value; when it is float32 rows
        of a float32 shard it is updated in place (it has no other reader left), else the stored
        rows are gathered again and widened. ``velocity_scale`` (float32 [L, 1]): ``velocity``
        holds int8 codes, row ``j``'s momentum being ``velocity[j] * velocity_scale[j]``; the
        updated momentum rows are stored as :func:`quantize_rows` gives them."""
        if centers.dtype == weight.dtype == paddle.float32:
            rows = centers
        else:
            rows = float32(paddle.gather(weight, index))
        velocity_rows = None
        if rule.momentum is not None:
            velocity_rows = float32(paddle.gather(velocity, index))
            if velocity_scale is not None:
                velocity_rows = paddle.multiply(velocity_rows, paddle.gather(velocity_scale, index))
        new_rows, new_velocity = _apply_rule_(rule, rows, float32(grad), velocity_rows, lr)
        write_rows_(weight, index, new_rows)
        if new_velocity is None:
            return
        if velocity_scale is None:
            write_rows_(velocity, index, new_velocity)
        else:
            codes, scales = quantize_rows(new_velocity)
            _C_ops.index_put_(velocity, [index], codes, False)  # the CPU scatter kernel has no int8
            _C_ops.scatter_(velocity_scale, index, scales, True)


#: Largest int8 code of a quantized momentum row (symmetric: codes lie in [-127, 127]).
INT8_LEVELS = 127.0
_ROUNDING_SHIFT = 12582912.0  # 1.5 * 2**23: x + shift - shift rounds |x| < 2**22 to nearest even


def quantize_rows(rows: Value) -> tuple[Value, Value]:
    """Row-wise absmax int8 quantization of float32 ``rows`` [c, D]: ``(codes int8 [c, D], scale
    float32 [c, 1])`` with ``scale = max_d |rows[j, d]| / 127`` and ``codes = round(rows / scale)``
    to nearest, ties to even, in float32 arithmetic (a zero row: scale 0, codes 0)."""
    absmax = paddle.max(paddle.abs(rows), axis=1, keepdim=True)
    scale = paddle.divide(absmax, paddle.full([1], INT8_LEVELS, "float32"))
    zero = paddle.zeros_like(rows)
    ratio = paddle.where(paddle.greater_than(scale, paddle.zeros_like(scale)), paddle.divide(rows, scale), zero)
    shift = paddle.full([1], _ROUNDING_SHIFT, "float32")
    rounded = paddle.subtract(paddle.add(ratio, shift), shift)
    codes = paddle.clip(rounded, -INT8_LEVELS, INT8_LEVELS)
    return paddle.cast(codes, "int8"), scale


def _apply_rule_(rule: UpdateRule, rows: Value, grad: Value, velocity_rows: Value | None,
                 lr: Value) -> tuple[Value, Value | None]:
    """Paddle's fused in-place ``momentum_`` / ``sgd_`` on float32 [c, D] ``rows`` (and
    ``velocity_rows``); ``grad`` may be overwritten. Returns the updated (rows, velocity_rows)."""
    if rule.momentum is None:
        if rule.rescale_grad != 1.0:
            grad = _C_ops.scale_(grad, rule.rescale_grad, 0.0, True)
        if rule.weight_decay:
            grad = _C_ops.add_(grad, rows * rule.weight_decay)
        return _C_ops.sgd_(rows, lr, grad, None, False)[0], None
    new_rows, new_velocity, _ = _C_ops.momentum_(
        rows, grad, velocity_rows, lr, None, rule.momentum, rule.nesterov,
        "l2_decay" if rule.weight_decay else "", rule.weight_decay, False, rule.rescale_grad)
    return new_rows, new_velocity


def write_rows_(target: Value, index: Value, rows32: Value) -> None:
    """``target[index] = rows32`` (float32 rows, rounded to ``target``'s dtype), in place: the one
    in-place row write of the head's updates and buffers."""
    if target.dtype == paddle.float32:
        _C_ops.scatter_(target, index, rows32, True)
    else:  # the CPU scatter kernel has no 2-byte float types; index_put has
        _C_ops.index_put_(target, [index], paddle.cast(rows32, target.dtype), False)


def _native_grad(grad: Value) -> Value:
    """``grad`` as the native updates take it: float32 or bfloat16 as it is."""
    return grad if grad.dtype == paddle.bfloat16 else float32(grad)


#: Storage and operand dtypes whose rows the native products read by index (as float32 values).
_INDEXED_DTYPES = ("float32", "bfloat16")


class NativeBlockOps(PaddleBlockOps):
    """The block operations as single native CPU kernels (:mod:`paddle_pfc.kernels.native_ops`);
    the same contracts as :class:`PaddleBlockOps`."""

    native = True

    def product(self, a, b, transpose_a, transpose_b, dtype):
        # bfloat16 values multiply in bfloat16 where the CPU has native bfloat16 products (the
        # same exact products of the same values; float32 sums in another order)
        if self.products_round(dtype):
            return onednn_ops.matmul(a, b, transpose_a, transpose_b, bf16=True)
        return super().product(a, b, transpose_a, transpose_b, dtype)

    def products_round(self, dtype):
        return dtype == "bfloat16" and native_bfloat16_products()

    def reads_rows_by_index(self, dtype, table_dtype):
        # float32 products of float32 or bfloat16 values read the rows where they lie (MKL, a tile
        # at a time); native bfloat16 products (oneDNN) a copy of the block gathered for each product
        if dtype not in _INDEXED_DTYPES or table_dtype not in _INDEXED_DTYPES:
            return False
        return self.products_round(dtype) or native_ops.blas_library() is not None

    def _gathered_operand(self, table, index):
        rows = native_ops.gather_rows(table, index)  # in the table's dtype: the products read it as it is
        rows.stop_gradient = True
        return rows

    def indexed_logits(self, features, table, index, dtype):
        if self.products_round(dtype):
            rows = self._gathered_operand(table, index)
            inverse = native_ops.inverse_row_norm(rows, NORM_EPS, round_bfloat16=rows.dtype == paddle.float32)
            return onednn_ops.matmul(features, rows, False, True, bf16=True), inverse
        return native_ops.indexed_logits(features, table, index, NORM_EPS, round_bfloat16=dtype == "bfloat16")

    def indexed_backward(self, dlogits, features, table, index, dtype, grad_dtype="float32"):
        if self.products_round(dtype):
            rows = self._gathered_operand(table, index)
            grad_features = onednn_ops.matmul(dlogits, rows, False, False, bf16=True)
            grad_rows = onednn_ops.matmul(dlogits, features, True, False, bf16=True,
                                          bf16_output=grad_dtype == "bfloat16")
            return grad_features, grad_rows
        return native_ops.indexed_backward(dlogits, features, table, index, round_bfloat16=dtype == "bfloat16",
                                           bfloat16_grad=grad_dtype == "bfloat16")

    def gather_rows(self, table, index):
        if table.dtype in (paddle.float32, paddle.bfloat16):
            rows = native_ops.gather_rows(table, index)
            rows.stop_gradient = table.stop_gradient  # as Paddle's gather: no gradient path past it
            return rows
        return super().gather_rows(table, index)

    def row_range(self, table, start, end):
        rows = native_ops.row_range(table, start, end)
        rows.stop_gradient = table.stop_gradient
        return rows

    def inverse_row_norm(self, rows, round_bfloat16=False):
        return native_ops.inverse_row_norm(rows, NORM_EPS, round_bfloat16)

    def logits_and_norms(self, features, rows, dtype, round_bfloat16=False):
        # float32: one op takes the norms while MKL's product reads the rows (one pass fewer)
        if dtype == "float32" and not round_bfloat16 and native_ops.blas_library() is not None:
            return native_ops.block_logits(features, rows, NORM_EPS)
        return super().logits_and_norms(features, rows, dtype, round_bfloat16)

    def block_softmax_(self, product, inv_norm, scale, target_logit, local_target, in_block, start):
        # Scaling, target, softmax and log-sum-exp in one pass; column -1: the class is not here.
        column = paddle.where(in_block, local_target - start, paddle.full_like(local_target, -1))
        weights, lse, top = native_ops.block_softmax_(product, inv_norm * scale, column, target_logit)
        return weights, lse, top, column

    def product_grad_(self, softmax, to_global, in_block, column, slope, coef, inv_norm):
        # NaN where the center gradient h = grad^T x could reach the update's limit: see grad_limit_log2
        return native_ops.softmax_grad_(softmax, to_global, column, slope, coef, inv_norm, self.grad_limit_log2)

    projects_in_update = True
    grad_limit_log2 = native_ops.PROJECTED_GRAD_LIMIT_LOG2

    def center_grad_(self, grad, rows, inv_norm, after):
        # Unprojected: update_rows_ projects each row while it reads it for the update (three
        # passes over the block gradient fewer than projecting here).
        return grad

    def sample_shard(self, local_label, num_local, num_sample):
        # One pass over the shard's flags (selection sampling), seeded by two draws from Paddle's generator.
        seed = paddle.randint(0, 2**31 - 1, [2], dtype="int64")
        return native_ops.sample_shard(local_label, seed, num_local, num_sample)

    def any_nonfinite(self, values, limit_log2=128):
        if all(v.dtype in (paddle.float32, paddle.bfloat16) for v in values):
            return native_ops.any_nonfinite(values, limit_log2)
        return super().any_nonfinite(values, limit_log2)

    def update_rows_(self, weight, velocity, index, centers, grad, lr, rule, velocity_scale=None):
        # Straight on the shard's rows: no gather, no scatter, no float32 copy of 2-byte rows; the
        # tangent projection of each gradient row at the row's stored value first.
        if velocity_scale is not None and rule.momentum is not None:
            native_ops.sparse_update_int8_(weight, velocity, velocity_scale, index, _native_grad(grad), lr,
                                           momentum=rule.momentum, nesterov=rule.nesterov,
                                           weight_decay=rule.weight_decay, rescale=rule.rescale_grad,
                                           project_eps=NORM_EPS)
            return
        native_ops.sparse_update_(weight, velocity if velocity is not None else weight, index, _native_grad(grad), lr,
                                  momentum=rule.momentum, nesterov=rule.nesterov,
                                  weight_decay=rule.weight_decay, rescale=rule.rescale_grad,
                                  project_eps=NORM_EPS)
