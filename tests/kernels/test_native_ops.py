"""The native CPU kernels (paddle_pfc/kernels/csrc/center_ops.cc) against float64 numpy, in static programs."""
from __future__ import annotations

import numpy as np
import paddle
import pytest

from paddle_pfc.head.dtypes import from_float32, to_float32
from paddle_pfc.kernels import extensions, native_build, native_ops, onednn_ops
from paddle_pfc.kernels.collectives import zero_depending_on
from paddle_pfc.utils.cpu import AVX512_CORE_FLAGS, CpuInfo
from reference import round_bfloat16 as round_bfloat16_ref

RNG = np.random.default_rng(7)
needs_mkl = pytest.mark.skipif(native_ops.blas_library() is None, reason="this Paddle wheel ships no MKL")


def run(build, feeds: dict[str, np.ndarray], persist: dict[str, np.ndarray] | None = None):
    """Build ``build(**inputs)`` over static data named like ``feeds`` (and persistable
    parameters set to ``persist``); run once; return (fetched outputs, final parameter values)."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    persist = persist or {}
    with paddle.static.program_guard(main, startup):
        values = {name: paddle.static.data(name, list(a.shape), str(a.dtype)) for name, a in feeds.items()}
        for name, a in persist.items():
            dtype = "bfloat16" if a.dtype == np.uint16 else str(a.dtype)
            values[name] = paddle.static.create_parameter(
                list(a.shape), dtype, name=name, default_initializer=paddle.nn.initializer.Constant(0.0))
            values[name].stop_gradient = True
        outs = build(**values)
    exe = paddle.static.Executor(paddle.CPUPlace())
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        for name, a in persist.items():
            scope.find_var(name).get_tensor().set(a, paddle.CPUPlace())
        fetched = exe.run(main, feed=feeds, fetch_list=list(outs)) if outs else exe.run(main, feed=feeds)
        final = {name: np.array(scope.find_var(name).get_tensor()) for name in persist}
    return fetched, final


def test_block_softmax_and_its_gradient(static_mode):
    n, c = 5, 7
    logits = RNG.standard_normal((n, c)).astype(np.float32)
    col_scale = RNG.uniform(0.5, 3.0, c).astype(np.float32)
    column = np.array([[2], [-1], [0], [6], [-1]], np.int64)
    target_logit = RNG.standard_normal((n, 1)).astype(np.float32) * 4
    to_global = RNG.uniform(0.1, 1.0, (n, 1)).astype(np.float32)
    slope = RNG.uniform(0.5, 2.0, (n, 1)).astype(np.float32)
    coef = np.array([0.37], np.float32)
    inv_norm = RNG.uniform(0.2, 2.0, c).astype(np.float32)

    def build(logits, col_scale, column, target_logit, to_global, slope, coef, inv_norm):
        weights, lse, top = native_ops.block_softmax_(logits, col_scale, column, target_logit)
        lse, top = lse + 0.0, top + 0.0  # copies: the in-place gradient below must not change what is fetched
        weights_copy = weights + 0.0
        grad = native_ops.softmax_grad_(weights, to_global, column, slope, coef, inv_norm)
        return [weights_copy, lse, top, grad]

    feeds = dict(logits=logits, col_scale=col_scale, column=column, target_logit=target_logit,
                 to_global=to_global, slope=slope, coef=coef, inv_norm=inv_norm)
    (weights, lse, top, grad), _ = run(build, feeds)

    z = logits.astype(np.float64) * col_scale
    rows = np.flatnonzero(column[:, 0] >= 0)
    z[rows, column[rows, 0]] = target_logit[rows, 0]
    ref_lse = np.log(np.exp(z).sum(1, keepdims=True))
    np.testing.assert_allclose(top, z.max(1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(weights, np.exp(z - top), rtol=1e-5, atol=1e-7)  # softmax times the row sum
    np.testing.assert_allclose(weights * np.exp(top - lse), np.exp(z - ref_lse), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(lse, ref_lse, rtol=1e-6, atol=1e-6)
    ref_grad = weights.astype(np.float64) * to_global * coef[0] * inv_norm
    t = column[rows, 0]
    ref_grad[rows, t] = (weights[rows, t] * to_global[rows, 0] - 1) * slope[rows, 0] * coef[0] * inv_norm[t]
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-5, atol=1e-8)



def test_block_softmax_wide_rows_against_float64(static_mode):
    """Rows wider than any vector unit (2053 columns: vector body and remainder) with logits in
    ArcFace's range, s * cos for s = 64: each probability within float32 rounding of float64, and
    exactly 0 where exp(z - max) is below the smallest normal float (z - max < -87.34)."""
    n, c = 6, 2053
    logits = RNG.uniform(-64.0, 64.0, (n, c)).astype(np.float32)
    logits[1, :5] = [-70.0, 64.0, -23.6, -27.0, 0.0]  # z - max from -134 to 0 in one row
    col_scale = np.ones(c, np.float32)
    column = np.array([[3], [-1], [2052], [0], [-1], [1000]], np.int64)
    target_logit = RNG.uniform(-64.0, 64.0, (n, 1)).astype(np.float32)

    def build(logits, col_scale, column, target_logit):
        weights, lse, top = native_ops.block_softmax_(logits, col_scale, column, target_logit)
        return [weights + 0.0, lse + 0.0, top + 0.0]

    (weights, lse, top), _ = run(build, dict(logits=logits, col_scale=col_scale, column=column,
                                             target_logit=target_logit))
    z = logits.astype(np.float64)
    rows = np.flatnonzero(column[:, 0] >= 0)
    z[rows, column[rows, 0]] = target_logit[rows, 0]
    ref_top = z.max(1, keepdims=True)
    np.testing.assert_array_equal(top, ref_top)  # a float32 value of z: exact
    ref_lse = ref_top + np.log(np.exp(z - ref_top).sum(1, keepdims=True))
    ref_weights = np.exp(z - ref_top)  # the softmax times the row's sum of exponentials
    representable, underflow = (z - ref_top) > -87.3, (z - ref_top) < -87.4  # log(FLT_MIN) = -87.34
    # z - max, rounded to float32 (|z - max| < 128: an error up to 2^-18 absolute), puts up to
    # 2^-18 relative error in its exponential; the exponential a few ulps
    np.testing.assert_allclose(weights[representable], ref_weights[representable], rtol=2.0**-18 + 8 * 2.0**-23,
                               atol=0)
    assert np.all(weights[underflow] == 0) and underflow.sum() > 100
    np.testing.assert_allclose(lse, ref_lse, rtol=2 * 2.0**-23, atol=0)

def test_row_norms(static_mode):
    rows = RNG.standard_normal((6, 9)).astype(np.float32)
    rows[3] = 0.0  # a zero row: 1 / eps, as the Paddle path clips
    rows[5, 2] = np.nan  # a non-finite row stays non-finite

    (inv,), _ = run(lambda rows: [native_ops.inverse_row_norm(rows, 1e-12)], dict(rows=rows))
    assert np.isnan(inv[5])
    norm = np.linalg.norm(rows[:5].astype(np.float64), axis=1)
    np.testing.assert_allclose(inv[:5], 1.0 / np.maximum(norm, 1e-12), rtol=1e-6)


def _updated(weight: np.ndarray, velocity: np.ndarray, index: np.ndarray, grad: np.ndarray, lr: float,
             **rule) -> dict[str, np.ndarray]:
    """The final ``weight`` and ``velocity`` after one :func:`native_ops.sparse_update_` with ``rule``."""
    def build(index, grad, lr_value, weight, velocity):
        native_ops.sparse_update_(weight, velocity, index, grad, lr_value, **rule)
        return []

    # a bfloat16 gradient (its host form: uint16 bits) goes in as a parameter holding it
    feeds, persist = dict(index=index, lr_value=np.array([lr], np.float32)), dict(weight=weight, velocity=velocity)
    (persist if grad.dtype == np.uint16 else feeds)["grad"] = grad
    _, final = run(build, feeds, persist=persist)
    return final


def _assert_update(final: dict, weight: np.ndarray, velocity: np.ndarray, index: np.ndarray, ref_w: np.ndarray,
                   ref_v: np.ndarray, center_dtype: str, atol: float) -> None:
    """The updated rows match the float64 reference (float32 arithmetic, then one rounding to the
    storage dtype: 2^-8 relative for bfloat16); the other rows are bit-identical."""
    rtol = 2.0**-8 if center_dtype == "bfloat16" else 1e-6
    np.testing.assert_allclose(to_float32(final["weight"]), ref_w, rtol=rtol, atol=atol)
    np.testing.assert_allclose(to_float32(final["velocity"]), ref_v, rtol=rtol, atol=atol)
    untouched = np.setdiff1d(np.arange(len(weight)), index)
    np.testing.assert_array_equal(final["weight"][untouched], weight[untouched])
    np.testing.assert_array_equal(final["velocity"][untouched], velocity[untouched])


def _reference_rule(w: np.ndarray, v: np.ndarray, index: np.ndarray, g: np.ndarray, lr: float,
                    momentum: float | None, nesterov: bool) -> tuple[np.ndarray, np.ndarray]:
    """float64 (weight, velocity) after Paddle's SGD / Momentum rule on rows ``index`` with the
    decayed, rescaled gradient ``g``."""
    ref_w, ref_v = w.copy(), v.copy()
    if momentum is None:
        ref_w[index] = w[index] - lr * g
    else:
        ref_v[index] = momentum * v[index] + g
        ref_w[index] = w[index] - lr * (g + momentum * ref_v[index] if nesterov else ref_v[index])
    return ref_w, ref_v


def _projected(grad: np.ndarray, rows: np.ndarray, eps: float) -> np.ndarray:
    """float64 reference: grad - (grad . u) u, u = rows / max(|rows|, eps), row by row."""
    w = rows.astype(np.float64)
    unit = w / np.maximum(np.linalg.norm(w, axis=1, keepdims=True), eps)
    return grad - np.sum(grad * unit, axis=1, keepdims=True) * unit


@pytest.mark.parametrize("center_dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("momentum", [None, 0.9])
def test_sparse_update_projects_the_gradient_onto_the_rows_tangent_space(center_dtype, momentum, static_mode):
    """With ``project_eps`` the rule takes g - (g . u) u (u: the stored row, normalised) in place
    of g; a zero row (u = 0) takes g as it is. Rows wider than a vector register (remainders too)."""
    rows, dim, lr, wd, rescale, eps = 12, 37, 0.3, 5e-3, 0.5, 1e-12
    index = np.array([7, 2, 4, 11, 0], np.int64)
    weight = from_float32(RNG.standard_normal((rows, dim)) * 3.0, center_dtype)
    weight[4] = 0  # zero row (bfloat16 bit pattern 0 too)
    velocity = from_float32(RNG.standard_normal((rows, dim)), center_dtype)
    grad = RNG.standard_normal((len(index), dim)).astype(np.float32)

    final = _updated(weight, velocity, index, grad, lr, momentum=momentum, nesterov=False, weight_decay=wd,
                     rescale=rescale, project_eps=eps)
    w, v = to_float32(weight).astype(np.float64), to_float32(velocity).astype(np.float64)
    tangent = _projected(grad.astype(np.float64), w[index], eps)
    assert np.abs(np.sum(tangent * w[index], axis=1)).max() < 1e-9  # the reference is tangent
    ref_w, ref_v = _reference_rule(w, v, index, rescale * tangent + wd * w[index], lr, momentum, False)
    _assert_update(final, weight, velocity, index, ref_w, ref_v, center_dtype, atol=1e-6)


def test_projected_update_stays_finite_below_the_checked_limit(static_mode):
    """Gradient elements just below 2**PROJECTED_GRAD_LIMIT_LOG2 (what the step's check lets
    through) and a row whose squared norm overflows float32: the update stays finite."""
    dim = 512
    limit = 2.0 ** native_ops.PROJECTED_GRAD_LIMIT_LOG2
    weight = RNG.standard_normal((3, dim)).astype(np.float32)
    weight[1] = 1e30  # |w|^2 overflows: no projection rather than inf * 0
    grad = np.full((3, dim), np.float32(limit * 0.99), np.float32)
    grad[:, ::2] *= -1

    def build(index, grad, lr_value, weight, velocity):
        native_ops.sparse_update_(weight, velocity, index, grad, lr_value, momentum=0.9, nesterov=False,
                                  weight_decay=0.0, rescale=1.0, project_eps=1e-12)
        flags = [native_ops.any_nonfinite([grad], native_ops.PROJECTED_GRAD_LIMIT_LOG2),
                 native_ops.any_nonfinite([grad * 2.0], native_ops.PROJECTED_GRAD_LIMIT_LOG2)]
        return flags

    (below, beyond), final = run(build, dict(index=np.array([0, 1, 2], np.int64), grad=grad,
                                             lr_value=np.array([1e-30], np.float32)),
                                 persist=dict(weight=weight, velocity=np.zeros((3, dim), np.float32)))
    assert not below[0] and beyond[0]
    assert np.isfinite(final["weight"]).all() and np.isfinite(final["velocity"]).all()
    np.testing.assert_allclose(final["velocity"][1], grad[1], rtol=1e-6)  # not projected


@pytest.mark.parametrize("center_dtype,grad_dtype", [("float32", "float32"), ("bfloat16", "float32"),
                                                     ("bfloat16", "bfloat16"), ("float32", "bfloat16")])
@pytest.mark.parametrize("momentum,nesterov", [(None, False), (0.9, False), (0.9, True)])
def test_sparse_update_is_paddles_rule_on_the_kept_rows_only(center_dtype, grad_dtype, momentum, nesterov,
                                                             static_mode):
    """Rows of 37 values (vector bodies and remainders), a float32 or bfloat16 gradient (its values
    widened)."""
    rows, dim, lr, wd, rescale = 9, 37, 0.3, 5e-3, 0.5
    index = np.array([7, 2, 4], np.int64)
    weight = from_float32(RNG.standard_normal((rows, dim)), center_dtype)
    velocity = from_float32(RNG.standard_normal((rows, dim)), center_dtype)
    grad = from_float32(RNG.standard_normal((3, dim)), grad_dtype)

    final = _updated(weight, velocity, index, grad, lr, momentum=momentum, nesterov=nesterov, weight_decay=wd,
                     rescale=rescale)
    w, v = to_float32(weight).astype(np.float64), to_float32(velocity).astype(np.float64)
    g = to_float32(grad).astype(np.float64)
    ref_w, ref_v = _reference_rule(w, v, index, rescale * g + wd * w[index], lr, momentum, nesterov)
    _assert_update(final, weight, velocity, index, ref_w, ref_v, center_dtype, atol=1e-7)


@pytest.mark.parametrize("grad_dtype", ["float32", "bfloat16"])
def test_sparse_update_stores_bfloat16_as_paddles_cast(grad_dtype, static_mode):
    """SGD at lr 1 from zero rows stores -g exactly rounded: the stored bits are Paddle's cast of
    -g to bfloat16 (nearest, ties to even, both ways; infinities, signed zeros, subnormals, and
    every NaN as Paddle writes it), in vector bodies and remainders."""
    special = np.array([1 + 2.0**-8, 1 + 3 * 2.0**-8, -(1 + 2.0**-8), 3.0e38, -np.inf, np.inf, 0.0, -0.0,
                        1e-40, -3e-39, np.nan, -np.nan, 1.0e-3, 65504.0, 2.0**-126], np.float32)
    grad = np.resize(special, (2, 37)).astype(np.float32)
    grad[1] = RNG.standard_normal(37).astype(np.float32)
    grad[1, 36] = np.float32(1 + 2.0**-8)
    nan_payload = np.array([0x7F800001], np.uint32).view(np.float32)[0]  # a NaN that truncates to inf
    grad[0, 30] = nan_payload
    grad = from_float32(grad, "bfloat16") if grad_dtype == "bfloat16" else grad
    zeros = np.zeros((3, 37), np.uint16)

    def build(index, lr_value, weight, velocity, grad):
        native_ops.sparse_update_(weight, velocity, index, grad, lr_value, momentum=None, nesterov=False,
                                  weight_decay=0.0, rescale=1.0)
        return [paddle.cast(-paddle.cast(grad, "float32"), "bfloat16")]

    (cast,), final = run(build, dict(index=np.array([2, 0], np.int64), lr_value=np.array([1.0], np.float32)),
                         persist=dict(weight=zeros, velocity=zeros, grad=grad))
    np.testing.assert_array_equal(final["weight"][[2, 0]], np.asarray(cast).view(np.uint16))
    np.testing.assert_array_equal(final["weight"][1], zeros[1])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_gather_rows_is_take_along_the_first_axis(dtype, static_mode):
    """Unsorted, repeated and edge indices (the kernel prefetches rows ahead of the one it copies):
    the very rows, bit for bit, in the table's dtype."""
    table = from_float32(RNG.standard_normal((50, 7)), dtype)
    index = np.array([49, 0, 3, 3, 17, 48, 1, 0, 25, 49, 12], np.int64)
    (rows,), _ = run(lambda index, table: [native_ops.gather_rows(table, index)], dict(index=index),
                     persist=dict(table=table))
    np.testing.assert_array_equal(np.asarray(rows).view(table.dtype), table[index])


def kernel_error(capfd) -> str:
    """What the kernels printed to stderr: Paddle 3.3's static executor re-raises a custom op's
    failure as a bare ``std::exception``, so the kernel prints its message first."""
    return capfd.readouterr().err


def test_gather_rows_refuses_an_index_outside_the_table(static_mode, capfd):
    with pytest.raises(RuntimeError):
        run(lambda index, table: [native_ops.gather_rows(table, index)], dict(index=np.array([2, 9], np.int64)),
            persist=dict(table=np.zeros((9, 3), np.float32)))
    assert "paddle_pfc kernel error: index 9 outside the table's 9 rows" in kernel_error(capfd)


def test_row_range_shares_the_tables_memory(static_mode):
    """The rows as they are, and, read after an in-place update of the table in the same program,
    the updated rows: a view, not a copy. (Two programs: a copy of the rows taken in the updating
    program before the update was fetched with the updated values in ~1 of 6 runs under pytest,
    never in a plain script: a Paddle 3.3.1 executor race, docs/paddle-notes.md.)"""
    table = RNG.standard_normal((10, 4)).astype(np.float32)
    grad = RNG.standard_normal((3, 4)).astype(np.float32)
    (rows,), _ = run(lambda table: [native_ops.row_range(table, 3, 7) + 0.0], {}, persist=dict(table=table))
    np.testing.assert_array_equal(rows, table[3:7])

    def build(index, grad, lr_value, table, velocity):
        view = native_ops.row_range(table, 3, 7)
        updated = native_ops.sparse_update_(table, velocity, index, grad, lr_value, momentum=None, nesterov=False,
                                            weight_decay=0.0, rescale=1.0)
        return [view + zero_depending_on(updated)]  # the view, read after the update

    index = np.array([4, 6, 9], np.int64)
    (after,), final = run(build, dict(index=index, grad=grad, lr_value=np.array([0.5], np.float32)),
                          persist=dict(table=table, velocity=np.zeros((10, 4), np.float32)))
    np.testing.assert_array_equal(final["table"][[4, 6, 9]], (table[index] - 0.5 * grad).astype(np.float32))
    np.testing.assert_array_equal(after, final["table"][3:7])
    assert not np.array_equal(after, table[3:7])


def test_row_range_refuses_rows_outside_the_table(static_mode, capfd):
    with pytest.raises(RuntimeError):
        run(lambda x, table: [native_ops.row_range(table, 2, 11) + x], dict(x=np.zeros((1, 3), np.float32)),
            persist=dict(table=np.zeros((10, 3), np.float32)))
    assert "outside the table's 10 rows" in kernel_error(capfd)


def test_block_softmax_refuses_a_block_without_columns(static_mode, capfd):
    """A row's maximum over no logits is undefined: an error, not a read outside the block."""
    def build(logits, col_scale, column, target_logit):
        return [out + 0.0 for out in native_ops.block_softmax_(logits, col_scale, column, target_logit)]

    with pytest.raises(RuntimeError):
        run(build, dict(logits=np.zeros((2, 0), np.float32), col_scale=np.zeros(0, np.float32),
                        column=np.full((2, 1), -1, np.int64), target_logit=np.zeros((2, 1), np.float32)))
    assert "paddle_pfc kernel error: a block of logits needs at least one column" in kernel_error(capfd)


def test_out_of_range_index_fails_the_run_instead_of_writing_outside_the_shard(static_mode, capfd):
    def build(index, grad, lr_value, weight, velocity):
        native_ops.sparse_update_(weight, velocity, index, grad, lr_value, momentum=0.9, nesterov=False,
                                  weight_decay=0.0, rescale=1.0)
        return []

    with pytest.raises(RuntimeError):
        run(build, dict(index=np.array([1, 12], np.int64), grad=np.ones((2, 3), np.float32),
                        lr_value=np.array([0.1], np.float32)),
            persist=dict(weight=np.zeros((5, 3), np.float32), velocity=np.zeros((5, 3), np.float32)))
    assert "paddle_pfc kernel error: index 12 outside the shard's 5 rows" in kernel_error(capfd)


def test_mode_is_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("PADDLE_PFC_NATIVE", "sometimes")
    with pytest.raises(ValueError, match="PADDLE_PFC_NATIVE must be one of"):
        native_ops.kernels()
    monkeypatch.setenv("PADDLE_PFC_NATIVE", "off")
    assert native_ops.kernels() is None
    monkeypatch.setenv("PADDLE_PFC_NATIVE", "on")
    assert native_ops.kernels() is not None


def test_a_failed_build_falls_back_with_a_warning_or_is_an_error(monkeypatch, tmp_path):
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("")
    monkeypatch.setenv("PADDLE_PFC_BUILD_DIR", str(blocker))  # the build folder cannot be made
    monkeypatch.setattr(native_build, "_loaded", {})
    monkeypatch.setenv("PADDLE_PFC_NATIVE", "on")
    with pytest.raises(RuntimeError, match="PADDLE_PFC_NATIVE=on: building center_ops.cc failed"):
        native_ops.kernels()
    monkeypatch.setenv("PADDLE_PFC_NATIVE", "auto")
    with pytest.warns(RuntimeWarning, match="native CPU kernels unavailable"):
        assert native_ops.kernels() is None



@pytest.mark.parametrize("bad", [None, np.inf, -np.inf, np.nan])
def test_any_nonfinite_finds_each_position_in_float32_and_bfloat16(bad, static_mode):
    """One inf/NaN anywhere (vector body or remainder, first or last tensor, float32 or bfloat16)
    is found, whatever the others hold; the largest finite values are not."""
    shapes = [(1000, 37), (33,), (5, 3, 7)]
    clean = [RNG.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    clean[0][0, 0], clean[1][0], clean[2][0, 0, 0] = 3.0e38, -3.0e38, 1e-45  # finite extremes, a denormal
    places = [(0, (999, 36)), (0, (17, 5)), (1, (32,)), (2, (4, 2, 6)), (2, (0, 0, 1))]

    def build(a, b, c):
        return [native_ops.any_nonfinite([a, b, c]),
                native_ops.any_nonfinite([paddle.cast(v, "bfloat16") for v in (a, b, c)])]

    for tensor, index in (places if bad is not None else [(None, None)]):
        values = [v.copy() for v in clean]
        if tensor is not None:
            values[tensor][index] = bad
        expected = not all(np.all(np.isfinite(v)) for v in values)
        (found32, found16), _ = run(build, dict(a=values[0], b=values[1], c=values[2]))
        assert found32.dtype == np.bool_ and found32.shape == (1,)
        assert bool(found32[0]) == bool(found16[0]) == expected == (bad is not None), (tensor, index)
    # float32's largest value is finite; rounded to bfloat16 it is inf
    values = [v.copy() for v in clean]
    values[0][500, 20] = np.finfo(np.float32).max
    (found32, found16), _ = run(build, dict(a=values[0], b=values[1], c=values[2]))
    assert not found32[0] and found16[0]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("limit_log2", [64, 0, -3])
def test_any_nonfinite_with_a_magnitude_limit(dtype, limit_log2, static_mode):
    """``limit_log2``: |x| >= 2**limit_log2 is found (either sign, vector body or remainder), the
    largest value below it is not; inf and NaN still are."""
    limit = 2.0**limit_log2
    below = np.nextafter(np.float32(limit), np.float32(0))  # float32's largest value below the limit
    if dtype == "bfloat16":
        below = np.float32(limit * (1 - 2.0**-8))  # bfloat16's
    clean = RNG.uniform(-1, 1, 1003).astype(np.float32) * np.float32(limit / 2)
    clean[[5, 1001]] = below, -below

    def build(x):
        x = x if dtype == "float32" else paddle.cast(x, "bfloat16")
        return [native_ops.any_nonfinite([x], limit_log2)]

    (found,), _ = run(build, dict(x=clean))
    assert not found[0]
    for place, value in ((0, limit), (1002, -limit), (700, -limit * 3), (17, np.inf), (999, np.nan)):
        values = clean.copy()
        values[place] = value
        (found,), _ = run(build, dict(x=values))
        assert found[0], (place, value)


def test_any_nonfinite_refuses_a_limit_outside_float32(static_mode):
    with pytest.raises(ValueError, match="limit_log2"):
        run(lambda x: [native_ops.any_nonfinite([x], 129)], dict(x=np.zeros(3, np.float32)))


def test_logit_gradient_turns_nan_where_its_products_could_reach_the_limit(static_mode):
    """``product_limit_log2`` = 20 with N = 5 rows: the bound is 2^20 / 2^ceil(log2 10) = 2^16;
    elements at or beyond it (either sign) and infs become NaN, the rest are the plain gradient."""
    n, c = 5, 19
    weights = RNG.uniform(0.6, 1.0, (n, c)).astype(np.float32)
    inv_norm = np.ones(c, np.float32)
    inv_norm[[3, 17]] = [2.0**17, -2.0**18]  # (an inverse norm is positive; the sign tests |g|)
    inv_norm[5] = np.inf
    column = np.array([[-1], [2], [-1], [0], [-1]], np.int64)
    ones = np.ones((n, 1), np.float32)

    def build(weights, column, to_global, slope, coef, inv_norm):
        plain = native_ops.softmax_grad_(weights + 0.0, to_global, column, slope, coef, inv_norm)
        limited = native_ops.softmax_grad_(weights, to_global, column, slope, coef, inv_norm, 20)
        return [plain, limited]

    (plain, limited), _ = run(build, dict(weights=weights, column=column, to_global=ones, slope=ones,
                                          coef=np.array([1.0], np.float32), inv_norm=inv_norm))
    beyond = ~(np.abs(plain) < 2.0**16)
    assert beyond[:, [3, 5, 17]].all() and beyond.sum() == 3 * n  # the chosen columns, every row
    assert np.isnan(limited[beyond]).all()
    np.testing.assert_array_equal(limited[~beyond], plain[~beyond])


@needs_mkl
def test_block_logits_is_the_product_and_the_inverse_norms(static_mode):
    """Rows in several steps of the kernel (1100 = 512 + 512 + 76), a zero row (1 / eps): the
    product within float32 rounding of float64, and the inverse norms."""
    features = RNG.standard_normal((7, 64)).astype(np.float32)
    rows = RNG.standard_normal((1100, 64)).astype(np.float32)
    rows[600] = 0.0

    (logits, inv), _ = run(lambda features, rows: list(native_ops.block_logits(features, rows, 1e-12)),
                           dict(features=features, rows=rows))
    assert logits.shape == (7, 1100) and inv.shape == (1100,)
    np.testing.assert_allclose(logits, features.astype(np.float64) @ rows.astype(np.float64).T, rtol=1e-5, atol=1e-5)
    norm = np.linalg.norm(rows.astype(np.float64), axis=1)
    np.testing.assert_allclose(inv, 1.0 / np.maximum(norm, 1e-12), rtol=1e-6)


@needs_mkl
@pytest.mark.parametrize("storage,round_bfloat16,bfloat16_grad", [
    ("float32", False, False), ("bfloat16", False, False), ("bfloat16", True, True), ("float32", True, True),
    ("bfloat16", False, True)])
@pytest.mark.parametrize("count", [0, 1, 300])
@pytest.mark.parametrize("feature_gemm", ["mkl", "onednn"])
def test_indexed_products_read_the_rows_where_they_lie(count, storage, round_bfloat16, bfloat16_grad, feature_gemm,
                                                       static_mode):
    """Scattered unsorted rows (300 = 128 + 128 + 44 rows in the kernel's steps; none; one) and a
    zero row of a float32 or bfloat16 table, read as float32 values (bfloat16 rows widened; with
    ``round_bfloat16`` float32 rows rounded to bfloat16, ties to even, as the operand of a bfloat16
    product): the logits, the inverse norms and both gradient products within float32 rounding of
    float64 products of those rows (the rows' gradient, with ``bfloat16_grad``, within bfloat16
    rounding and in bfloat16), the feature gradient by MKL's or by oneDNN's sgemm; the table is
    not changed."""
    feature_library = "" if feature_gemm == "mkl" else onednn_ops.library_path()
    if feature_library is None:
        pytest.skip("this Paddle wheel ships no oneDNN")
    table = RNG.standard_normal((1000, 40)).astype(np.float32)
    table[17] = 0.0
    table[3, :3] = [1 + 2.0**-8, 1 + 3 * 2.0**-8, -(1 + 2.0**-9)]  # two ties (to even: down, up), one below
    index = RNG.choice(1000, count, replace=False).astype(np.int64)
    if count > 1:
        index[1] = 17
        index[-1] = 3
    features = RNG.standard_normal((9, 40)).astype(np.float32)
    dlogits = RNG.standard_normal((9, count)).astype(np.float32)
    stored = table if storage == "float32" else from_float32(table, "bfloat16")

    def build(features, dlogits, index, table):
        return [*native_ops.indexed_logits(features, table, index, 1e-12, round_bfloat16=round_bfloat16),
                *native_ops.indexed_backward(dlogits, features, table, index, round_bfloat16=round_bfloat16,
                                             bfloat16_grad=bfloat16_grad, feature_library=feature_library)]

    (logits, inv, grad_x, grad_rows), final = run(build, dict(features=features, dlogits=dlogits, index=index),
                                                  persist=dict(table=stored))
    as_bfloat16 = storage == "bfloat16" or round_bfloat16
    values = round_bfloat16_ref(table) if as_bfloat16 else table.astype(np.float64)
    if as_bfloat16:
        assert values[3, :3].tolist() == [1.0, 1 + 4 * 2.0**-8, -1.0]
    rows, x, g = values[index], features.astype(np.float64), dlogits.astype(np.float64)
    assert logits.shape == (9, count) and inv.shape == (count,) and grad_x.shape == (9, 40) \
        and grad_rows.shape == (count, 40)
    np.testing.assert_allclose(logits, x @ rows.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(inv, 1.0 / np.maximum(np.linalg.norm(rows, axis=1), 1e-12), rtol=1e-6)
    np.testing.assert_allclose(grad_x, g @ rows, rtol=1e-5, atol=1e-5)
    if bfloat16_grad:
        assert grad_rows.dtype == np.uint16  # bfloat16 bits
        grad_rows = to_float32(grad_rows)
    np.testing.assert_allclose(grad_rows, g.T @ x, rtol=2.0**-8 if bfloat16_grad else 1e-5, atol=1e-5)
    np.testing.assert_array_equal(final["table"], stored)


@needs_mkl
@pytest.mark.parametrize("op", ["logits", "backward"])
def test_indexed_products_refuse_an_index_outside_the_table(op, static_mode, capfd):
    features, index = np.ones((2, 3), np.float32), np.array([2, 9], np.int64)

    def build(features, dlogits, index, table):
        if op == "logits":
            return list(native_ops.indexed_logits(features, table, index, 1e-12))
        return list(native_ops.indexed_backward(dlogits, features, table, index))

    with pytest.raises(RuntimeError):
        run(build, dict(features=features, dlogits=np.ones((2, 2), np.float32), index=index),
            persist=dict(table=np.zeros((9, 3), np.float32)))
    assert "paddle_pfc kernel error: index 9 outside the table's 9 rows" in kernel_error(capfd)


@pytest.mark.parametrize("vendor,family,flags,onednn", [
    ("AuthenticAMD", 25, AVX512_CORE_FLAGS, True),        # Zen 4
    ("AuthenticAMD", 25, frozenset({"avx2"}), False),     # Zen 3, or Zen 4 with AVX-512 hidden
    ("AuthenticAMD", 26, AVX512_CORE_FLAGS, False),       # Zen 5
    ("GenuineIntel", 6, AVX512_CORE_FLAGS, False)])
def test_the_feature_gradient_product_goes_to_onednn_on_zen4_only(vendor, family, flags, onednn):
    cpu = CpuInfo("x", (), vendor, family, 17, flags)
    assert onednn_ops.feature_products_on_onednn(cpu) is onednn


def test_built_finds_the_builds_that_kernels_load(tmp_path, monkeypatch):
    """extensions.built(name) looks where kernels(name) loads from (the same build key): every
    extension is built once the suite has started (conftest built and loaded them), none under an
    empty build directory (where build_all would compile them)."""
    assert all(extensions.built(name) for name in extensions.EXTENSIONS), extensions.EXTENSIONS
    monkeypatch.setenv("PADDLE_PFC_BUILD_DIR", str(tmp_path))
    assert not any(extensions.built(name) for name in extensions.EXTENSIONS)


@pytest.mark.parametrize("node_ranks, cpus, jobs", [(1, 2, 2), (2, 2, 2), (1, 64, 6), (8, 64, 2), (3, 64, 2),
                                                     (2, 1, 1)])
def test_build_jobs_share_the_node(node_ranks, cpus, jobs):
    """build_all's subprocesses per rank for the six extensions: at least 2 (ranks of a node each
    start theirs at once and wait for each other's builds), about six in all on the node, never
    more than its CPUs."""
    assert len(extensions.EXTENSIONS) == 6
    assert extensions.build_jobs(node_ranks, cpus) == jobs
