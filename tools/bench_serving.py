#!/usr/bin/env python
"""Serving throughput on CPU: Paddle Inference against onnxruntime on the same export, and both
against the forward floor.

    python tools/bench_serving.py [--backbone iresnet50] [--input-size 112] [--batch-size 16]
                                  [--rounds 5] [--steps 2] [--model DIR] [--unfolded]

Exports ``--backbone`` with a random state (``random_state``; or takes the export ``--model DIR``)
to a temporary folder, converts it to ONNX (``paddle_pfc.deploy.onnx_export``) and loads it with
:class:`paddle_pfc.deploy.predictor.EmbeddingModel` as each side runs it by default: Paddle
Inference (batch norm folded, oneDNN, IR passes) and onnxruntime; ``--unfolded`` adds the same
weights exported with their batch norms kept (Paddle's own CPU kernels, no oneDNN). Where oneDNN
multiplies bfloat16 natively (AVX512_BF16 / AMX), the side "paddle, bfloat16" is the same weights
exported with ``precision="bfloat16"`` (``--model``: from its ``backbone.npz``). One process,
one thread per side; rounds alternate the sides, ``--steps`` batches each after one warm-up
batch; each side's figure is its median over rounds, each ratio the median of the per-round
ratios (a busy machine slows neighbouring runs alike).

The forward floor: the FLOPs of one image (2 x multiply-adds of every Conv / MatMul / Gemm of the
ONNX graph, from its inferred shapes) over the best single-thread float32 GEMM rate measured here
(onnxruntime MatMul and numpy ``@`` on 1024 x 1024 x 1024, best of three, measured in every round
next to the sides, so a side's fraction of the floor compares rates taken under the same load).
Prints images/s per side, the ratios, each side's fraction of the floor (median over rounds),
the largest embedding difference relative to the largest magnitude and the smallest cosine to
onnxruntime's embedding, the CPU and the load average.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # before numpy loads a BLAS
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from paddle_pfc.cli.entry import run  # noqa: E402


def onnx_flops_per_image(onnx_file: Path, input_size: tuple[int, int]) -> float:
    """2 x multiply-adds of the Conv, MatMul and Gemm nodes of a batch-1 pass."""
    import numpy as np
    import onnx
    from onnx import numpy_helper, shape_inference

    model = onnx.load(str(onnx_file))
    graph_input = model.graph.input[0]
    dims = graph_input.type.tensor_type.shape.dim
    for d, v in zip(dims, (1, 3, *input_size)):
        d.ClearField("dim_param")
        d.dim_value = v
    model = shape_inference.infer_shapes(model)
    shapes = {}
    for vi in list(model.graph.value_info) + list(model.graph.output) + list(model.graph.input):
        shapes[vi.name] = [d.dim_value for d in vi.type.tensor_type.shape.dim]
    for init in model.graph.initializer:
        shapes[init.name] = list(numpy_helper.to_array(init).shape)
    flops = 0.0
    for node in model.graph.node:
        if node.op_type == "Conv":
            out, weight = shapes[node.output[0]], shapes[node.input[1]]  # [1, Co, H, W], [Co, Ci/g, kh, kw]
            flops += 2.0 * float(np.prod(out)) * float(np.prod(weight[1:]))
        elif node.op_type in ("MatMul", "Gemm"):
            weight, out = shapes[node.input[1]], shapes[node.output[0]]  # the [K, N] weight ([N, K]: transB)
            trans_b = any(at.name == "transB" and at.i for at in node.attribute)
            flops += 2.0 * float(np.prod(out)) * float(weight[-1] if trans_b else weight[-2])
    return flops


def gemm_rate(repeats: int = 3, n: int = 1024) -> dict[str, float]:
    """Best single-thread float32 GEMM FLOP/s of onnxruntime's MatMul and numpy's ``@``."""
    import numpy as np
    import onnxruntime as ort
    from onnx import TensorProto, helper

    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    graph = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["c"])], "gemm",
                              [helper.make_tensor_value_info("a", TensorProto.FLOAT, [n, n]),
                               helper.make_tensor_value_info("b", TensorProto.FLOAT, [n, n])],
                              [helper.make_tensor_value_info("c", TensorProto.FLOAT, [n, n])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = min(model.ir_version, 9)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    runs = {"onnxruntime": lambda: session.run(None, {"a": a, "b": b}), "numpy": lambda: a @ b}
    rates = {}
    for name, fn in runs.items():
        fn()
        best = min(_seconds(fn) for _ in range(repeats))
        rates[name] = 2.0 * n ** 3 / best
    return rates


def _seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backbone", default="iresnet50")
    p.add_argument("--input-size", type=int, default=112)
    p.add_argument("--embedding-size", type=int, default=512)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--steps", type=int, default=2, help="batches per side and round")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--model", help="an export directory to measure instead of a random-init export")
    p.add_argument("--unfolded", action="store_true",
                   help="also the export with its batch norms kept (Paddle's kernels, no oneDNN; slow)")
    return p.parse_args(argv)


def _exported_model(args: argparse.Namespace, tmp: Path) -> tuple[Path, dict | None, tuple]:
    """``(model_dir, state, (backbone, embedding_size, input_size))``: ``--model``, or a
    random-initialised export in ``tmp`` (with ``--unfolded``, also one with its batch norms)."""
    from paddle_pfc.backbones.state import load_state_file, random_state
    from paddle_pfc.deploy.export import export_backbone
    from paddle_pfc.deploy.model_format import TRAINING_STATE_FILE, read_export_meta

    if args.model:
        model_dir = Path(args.model)
        meta = read_export_meta(model_dir) or {}
        state = (load_state_file(model_dir / TRAINING_STATE_FILE) if (model_dir / TRAINING_STATE_FILE).is_file()
                 else None)
        return model_dir, state, (meta.get("backbone"), meta.get("embedding_size"), meta.get("input_size"))
    model_dir = tmp / "model"
    state = random_state(args.backbone, args.embedding_size, args.input_size, seed=0)
    export_backbone(args.backbone, args.embedding_size, args.input_size, state, model_dir)
    if args.unfolded:
        export_backbone(args.backbone, args.embedding_size, args.input_size, state, tmp / "unfolded",
                        fold_batch_norm=False)
    return model_dir, state, (args.backbone, args.embedding_size, args.input_size)


def _sides(args: argparse.Namespace, tmp: Path) -> tuple[dict, Path, str | None]:
    """``(sides, onnx_file, bfloat16_skipped)``: the models to time by name (Paddle Inference, ONNX
    Runtime, the unfolded and bfloat16 exports where they apply) and why bfloat16 is not, or None."""
    from paddle_pfc.deploy.export import export_backbone
    from paddle_pfc.deploy.model_format import TRAINING_STATE_FILE
    from paddle_pfc.deploy.onnx_export import export_onnx
    from paddle_pfc.deploy.predictor import EmbeddingModel
    from paddle_pfc.kernels.onednn_ops import bfloat16_isa_missing

    model_dir, state, shape = _exported_model(args, tmp)
    onnx_dir = tmp / "onnx"
    onnx_dir.mkdir()
    shutil.copy(model_dir / "export.json", onnx_dir / "export.json")
    onnx_file = export_onnx(model_dir, onnx_dir / "model.onnx")
    sides = {"paddle": EmbeddingModel(model_dir, batch_size=args.batch_size, num_threads=1),
             "onnxruntime": EmbeddingModel(onnx_file, batch_size=args.batch_size, num_threads=1)}
    if args.unfolded:
        sides["paddle, batch norm kept"] = EmbeddingModel(tmp / "unfolded", batch_size=args.batch_size,
                                                          num_threads=1)
    bfloat16_skipped = bfloat16_isa_missing() or (None if state is not None and None not in shape else
                                                   f"{model_dir} has no {TRAINING_STATE_FILE} / export.json")
    if bfloat16_skipped is None:
        export_backbone(*shape, state, tmp / "bfloat16", precision="bfloat16")
        sides["paddle, bfloat16"] = EmbeddingModel(tmp / "bfloat16", batch_size=args.batch_size, num_threads=1)
    return sides, onnx_file, bfloat16_skipped


def _time_rounds(args: argparse.Namespace, sides: dict, batch) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """``(rates, gemm)``: images/s of each side and FLOP/s of each GEMM library, a figure a round."""
    rates: dict[str, list[float]] = {side: [] for side in sides}
    gemm: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for side, model in sides.items():
            seconds = _seconds(lambda: [model(batch) for _ in range(args.steps)])
            rates[side].append(args.steps * args.batch_size / seconds)
        for name, rate in gemm_rate().items():
            gemm.setdefault(name, []).append(rate)
    return rates, gemm


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)

    import numpy as np

    from paddle_pfc.deploy.parity import agreement
    from paddle_pfc.utils.cpu import cpu_summary

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        sides, onnx_file, bfloat16_skipped = _sides(args, Path(tmp))
        h, w = sides["paddle"].input_size
        batch = np.random.default_rng(0).uniform(-1, 1, (args.batch_size, 3, h, w)).astype(np.float32)
        outputs = {side: model(batch) for side, model in sides.items()}  # warm-up
        flops = onnx_flops_per_image(onnx_file, (h, w))
        rates, gemm = _time_rounds(args, sides, batch)
    floor_rates = [max(per_round) for per_round in zip(*gemm.values())]  # FLOP/s, per round
    floors = [rate / flops for rate in floor_rates]  # images/s, per round
    floor = statistics.median(floors)
    load_after = os.getloadavg()

    reference = outputs["onnxruntime"]
    scale = float(np.abs(reference).max())
    print(f"CPU: {cpu_summary()}; load average {load_before[0]:.1f} before, {load_after[0]:.1f} after")
    print(f"{args.backbone if not args.model else args.model} {h}x{w}, batch {args.batch_size}, 1 thread, "
          f"median of {args.rounds} alternating rounds of {args.steps} batches")
    print(f"forward floor: {flops / 1e9:.2f} GFLOP/image at {statistics.median(floor_rates) / 1e9:.1f} GFLOP/s "
          "(median over rounds of the best single-thread GEMM; medians: "
          + ", ".join(f"{k} {statistics.median(v) / 1e9:.1f}" for k, v in gemm.items())
          + f"; best of all rounds {max(floor_rates) / 1e9:.1f}) = {floor:.2f} images/s")
    for side, values in rates.items():
        rate = statistics.median(values)
        ratio = statistics.median(r / o for r, o in zip(values, rates["onnxruntime"]))
        diff = float(np.abs(outputs[side] - reference).max()) / scale
        of_floor = statistics.median(r / f for r, f in zip(values, floors))
        print(f"{side:>24}: {rate:7.2f} images/s  {ratio:5.2f}x onnxruntime  {of_floor:5.2f} of the floor  "
              f"embedding difference {diff:.1e} of the largest magnitude, smallest cosine "
              f"{agreement(outputs[side], reference)[0]:.6f}")
    if bfloat16_skipped is not None:
        print(f"{'paddle, bfloat16':>24}: not measured: {bfloat16_skipped}")
    return 0

if __name__ == "__main__":
    run(main)
