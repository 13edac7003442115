"""HeadSpec (paddle_pfc/head/spec.py): one validation of a head's facts, and block_layout
(paddle_pfc/head/layout.py): the blocks the classifier builds, the planner plans and the benchmarks time."""
from __future__ import annotations

import dataclasses

import paddle
import pytest

import paddle_pfc
from paddle_pfc.head.layout import block_layout
from paddle_pfc.head.planner import plan, plan_spec
from paddle_pfc.head.spec import HeadSpec, centers_bytes, optimizer_state_bytes, optimizer_states


@pytest.mark.parametrize("kwargs, message", [
    (dict(world_size=0), "world_size must be an int >= 1, got 0"),
    (dict(world_size=True), "world_size must be an int >= 1, got True"),
    (dict(rank=2, world_size=2), r"rank must be an int in \[0, world_size=2\), got 2"),
    (dict(num_classes=0), "num_classes must be an int >= 1, got 0"),
    (dict(num_classes=10.5), "num_classes must be an int >= 1, got 10.5"),
    (dict(num_classes=3, world_size=4), r"num_classes \(3\) must be >= world_size \(4\)"),
    (dict(sample_ratio=0.0), r"sample_ratio must be in \(0, 1\], got 0.0"),
    (dict(sample_ratio=float("nan")), "sample_ratio must be in"),
    (dict(embedding_size=0), "embedding_size must be an int >= 1, got 0"),
    (dict(seed=-1), "seed must be an int >= 0, got -1"),
    (dict(batch_size=0), r"batch_size must be an int >= 1 \(per rank\), got 0"),
    (dict(chunk_rows=0), "chunk_rows must be an int >= 1 or None, got 0"),
    (dict(compute_dtype="float64"), "compute_dtype must be one of float32, bfloat16, float16, got 'float64'"),
    (dict(center_dtype="int8"), "center_dtype must be one of float32, bfloat16, float16, got 'int8'"),
    (dict(momentum_dtype="int4"), "momentum_dtype must be one of float32, bfloat16, float16, int8, got 'int4'"),
    (dict(center_dtype="float16", gpu=False), "center_dtype='float16': float16 needs a GPU"),
    (dict(momentum_dtype="int8", gpu=True), "momentum_dtype='int8': .*CPU programs only"),
    (dict(optimizer="adam"), "optimizer must be one of momentum, sgd, adamw, got 'adam'"),
    (dict(malloc="default"), "malloc must be one of memory, speed, got 'default'"),
    (dict(kernels="auto"), "kernels must be one of composite, fused, got 'auto'"),
])
def test_a_bad_field_is_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        HeadSpec(**{"num_classes": 1000, **kwargs})


def test_float16_is_refused_on_cpu_only():
    assert HeadSpec(1000, center_dtype="float16").center_dtype == "float16"  # device unknown: a plan
    assert HeadSpec(1000, center_dtype="float16", gpu=True).center_dtype == "float16"


def test_momentum_dtype_resolves_to_the_center_dtype_once():
    spec = HeadSpec(1000, 8, center_dtype="bfloat16")
    assert spec.momentum_dtype == "bfloat16" and optimizer_states(spec) == ("bfloat16",)
    int8 = HeadSpec(1000, 8, world_size=2, center_dtype="bfloat16", momentum_dtype="int8")
    assert optimizer_states(int8) == ("int8",)
    assert centers_bytes(int8) == 500 * 8 * 2 and optimizer_state_bytes(int8) == 500 * (8 + 4)
    assert optimizer_states(HeadSpec(1000, optimizer="sgd")) == ()
    assert optimizer_state_bytes(HeadSpec(1000, 8, optimizer="sgd")) == 0
    # AdamW: two float32 moments and a float32 step count a row, whatever the center dtype
    adamw = HeadSpec(1000, 8, world_size=2, center_dtype="bfloat16", optimizer="adamw")
    assert optimizer_states(adamw) == ("float32", "float32") and optimizer_state_bytes(adamw) == 500 * (2 * 8 + 1) * 4


def test_numbers_are_held_as_python_numbers():
    import numpy as np

    spec = HeadSpec(np.int64(1001), np.int32(8), world_size=np.int64(2), rank=np.int64(1), sample_ratio=1,
                    batch_size=np.int64(4))
    assert [type(v) for v in (spec.num_classes, spec.embedding_size, spec.world_size, spec.rank,
                              spec.batch_size, spec.sample_ratio)] == [int] * 5 + [float]
    assert (spec.class_start, spec.num_local, spec.num_sample, spec.global_batch) == (501, 500, 500, 8)


def test_layout_of_a_sampled_shard():
    # 40,000 classes over 2 ranks: 20,000 a shard, 10,000 kept; [R, 512] float32 within 8 MiB: R = 4096
    layout = block_layout(HeadSpec(40_000, 512, world_size=2, sample_ratio=0.5, batch_size=64))
    assert (layout.num_local, layout.num_sample, layout.num_kept, layout.rows) == (20_000, 10_000, 10_000, 4096)
    assert layout.bounds == ((0, 4096), (4096, 8192), (8192, None))
    assert layout.reads_rows_by_index and layout.updates_in_place and layout.block_dtype == "float32"
    # the gathered batch widens the logits block: N = 8 x 1024 rows of [N, R] float32 within 8 MiB
    assert block_layout(HeadSpec(40_000, 512, world_size=8, sample_ratio=0.5, batch_size=1024)).rows == 256
    assert block_layout(HeadSpec(40_000, 512, world_size=2, sample_ratio=0.5, chunk_rows=3000)).num_blocks == 4
    fused = block_layout(HeadSpec(40_000, 512, world_size=2, sample_ratio=0.5, kernels="fused"))
    assert fused.bounds == ((0, None),) and not fused.reads_rows_by_index


def test_layout_of_bfloat16_products():
    spec = HeadSpec(40_000, 512, world_size=2, sample_ratio=0.5, compute_dtype="bfloat16", bfloat16_products=True)
    layout = block_layout(spec)
    assert layout.products_round and layout.block_dtype == "float32" and layout.updates_in_place
    assert not block_layout(dataclasses.replace(spec, native=False)).products_round  # Paddle's kernels: no oneDNN
    paddle_kernels = block_layout(dataclasses.replace(spec, bfloat16_products=False))
    assert not paddle_kernels.products_round and paddle_kernels.block_dtype == "bfloat16"
    assert not paddle_kernels.updates_in_place


def test_the_plan_is_of_the_largest_shard_in_the_layouts_blocks():
    spec = HeadSpec(40_001, 512, world_size=2, rank=1, sample_ratio=0.5, batch_size=64)
    p = plan_spec(spec)
    assert p == plan(40_001, 512, 2, 0.5, 64)
    rank0 = block_layout(dataclasses.replace(spec, rank=0))
    assert (p.num_local, p.num_sample) == (rank0.num_local, rank0.num_sample) == (20_001, 10_000)
    assert block_layout(spec).num_local == 20_000
    assert p.program_analysis == int(0.14 * 2**20 * rank0.num_blocks ** 2)
    with pytest.raises(ValueError, match="batch_size"):
        plan_spec(HeadSpec(1000))


def _machine_spec(**kwargs) -> HeadSpec:
    """The spec of a CPU head on this machine, its backend fields found without the classifier."""
    from paddle_pfc.kernels import native_ops
    from paddle_pfc.kernels.blockwise import native_bfloat16_products

    native = native_ops.kernels() is not None
    return HeadSpec(native=native, bfloat16_products=native and native_bfloat16_products(),
                    indexed_products=native and native_ops.blas_library() is not None, **kwargs)


@pytest.mark.parametrize("ratio", [0.5, 1.0])
@pytest.mark.parametrize("dtype, center_dtype", [("float32", "float32"), ("bfloat16", "float32"),
                                                 ("bfloat16", "bfloat16"), ("float32", "bfloat16")])
def test_layout_is_what_a_built_classifier_uses(ratio, dtype, center_dtype, static_mode):
    """The classifier's blocks on this CPU (its native kernels, its bfloat16 products) are those of the
    layout of a spec of the same facts: their bounds, their dtype, whether they read the shard by index."""
    for batch, chunk_rows in ((1024, None), (-1, None), (64, 1500)):  # 2 x 1024 rows: [N, R] sets R
        spec = _machine_spec(num_classes=40_000, embedding_size=512, world_size=2, rank=1, sample_ratio=ratio,
                             batch_size=None if batch < 0 else batch, compute_dtype=dtype,
                             center_dtype=center_dtype, chunk_rows=chunk_rows)
        main, startup = paddle.static.Program(), paddle.static.Program()  # alive while the blocks are read
        with paddle.static.program_guard(main, startup):
            feature = paddle.static.data("feature", [batch, 512], "float32")
            label = paddle.static.data("label", [batch], "int64")
            head = paddle_pfc.LargeScaleClassifier(feature, label, 1, 2, 40_000, sample_ratio=ratio,
                                                   embedding_size=512, dtype=dtype, center_dtype=center_dtype,
                                                   chunk_rows=chunk_rows)
        layout = block_layout(spec)
        assert head.layout == layout
        assert tuple((b.start, b.stop) for b in head.blocks) == layout.bounds
        assert all((b.table is not None) == layout.reads_rows_by_index for b in head.blocks)
        assert all(b.centers.dtype == getattr(paddle, layout.block_dtype) for b in head.blocks)
        assert head.num_local == layout.num_local == 20_000
