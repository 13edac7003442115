"""Run by tests under ``paddle.distributed.launch``: the fused kernels (``--kernels emulated``:
:mod:`paddle_pfc.kernels.emulated`, any device; ``real``: Paddle's GPU kernels) on every case of a
json list, on this process's device, outputs saved per rank."""
from __future__ import annotations

import argparse
import json
import os
from types import SimpleNamespace

import numpy as np
import paddle

import paddle_pfc
from paddle_pfc.cli import entry
from paddle_pfc.head.geometry import class_split
from paddle_pfc.kernels import fused_kernels
from paddle_pfc.kernels.collectives import CollectiveChain
from paddle_pfc.runtime.distributed import current_place


def margin_case_data(case: dict):
    """Cosines [N, C] (unit rows against unit columns, float64), labels [N], upstream gradient [N, 1].
    ``case['exact']``: {row: [column, value]} overrides (e.g. a cosine of exactly 1)."""
    rng = np.random.default_rng(case["seed"])
    n, c, d = case["batch"], case["num_classes"], case.get("dim", 8)
    x = rng.standard_normal((n, d))
    w = rng.standard_normal((d, c))
    cos = (x / np.linalg.norm(x, axis=1, keepdims=True)) @ (w / np.linalg.norm(w, axis=0, keepdims=True))
    labels = rng.integers(0, c, n) if case.get("labels") is None else np.array(case["labels"])
    for row, (col, value) in case.get("exact", {}).items():
        cos[int(row), col] = value
    grad = rng.uniform(0.1, 2.0, (n, 1))
    return cos.astype(case.get("dtype", "float32")), labels.astype(np.int64), grad.astype(case.get("dtype", "float32"))


def sample_case_labels(case: dict) -> np.ndarray:
    rng = np.random.default_rng(case["seed"])
    if case.get("labels") is not None:
        return np.array(case["labels"], np.int64)
    return rng.integers(case.get("low", 0), case.get("high", case["num_classes"]), case["batch"]).astype(np.int64)


def run_margin(case, rank, world_size, kernels):
    cos, labels, grad = margin_case_data(case)
    start, width = class_split(case["num_classes"], world_size, rank)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        logits = paddle.static.data("logits", [case["batch"], width], str(cos.dtype))
        logits.stop_gradient = False
        label = paddle.static.data("label", [case["batch"], 1] if case.get("label_2d") else [case["batch"]], "int64")
        upstream = paddle.static.data("upstream", [case["batch"], 1], str(cos.dtype))
        m1, m2, m3 = case["margins"]
        margin = SimpleNamespace(m1=m1, m2=m2, m3=m3, s=case["scale"])
        softmax, loss = kernels.margin_cross_entropy(logits, label, rank, margin, CollectiveChain(world_size),
                                                     return_softmax=True)
        total = paddle.sum(paddle.cast(loss, "float64") * paddle.cast(upstream, "float64"))
        (grad_logits,) = paddle.static.gradients([total], [logits])
    exe = paddle.static.Executor(current_place())
    exe.run(startup)
    feed = {"logits": cos[:, start:start + width], "label": labels[:, None] if case.get("label_2d") else labels,
            "upstream": grad}
    out_softmax, out_loss, out_grad = exe.run(main, feed=feed, fetch_list=[softmax, loss, grad_logits])
    return {"softmax": out_softmax, "loss": out_loss, "grad": out_grad, "start": start, "width": width,
            "dtypes": np.array([str(out_softmax.dtype), str(out_loss.dtype), str(out_grad.dtype)])}


def run_sample(case, rank, world_size, kernels):
    labels = sample_case_labels(case)
    start, num_local = class_split(case["num_classes"], world_size, rank)
    num_samples = case["num_samples"][rank] if isinstance(case["num_samples"], list) else case["num_samples"]
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        label = paddle.static.data("label", [len(labels)], case.get("dtype", "int64"))
        remapped, sampled = kernels.class_center_sample(label, num_local, num_samples, rank,
                                                        CollectiveChain(world_size),
                                                        case.get("seed", 0) if case.get("fix_seed", False) else None)
    exe = paddle.static.Executor(current_place())
    exe.run(startup)
    out = {"start": start, "num_local": num_local, "num_samples": num_samples}
    for run in range(case.get("runs", 1)):
        r, s = exe.run(main, feed={"label": labels.astype(case.get("dtype", "int64"))}, fetch_list=[remapped, sampled])
        out[f"remapped_{run}"], out[f"sampled_{run}"] = r, s
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--kernels", choices=("emulated", "real"), default="emulated")
    args = parser.parse_args()
    rank, world_size = paddle_pfc.init_distributed()
    with open(args.cases) as f:
        cases = json.load(f)
    kernels = fused_kernels(emulated=args.kernels == "emulated")
    for case in cases:
        with paddle.static.scope_guard(paddle.static.Scope()):
            run = run_margin if case["kind"] == "margin" else run_sample
            result = run(case, rank, world_size, kernels)
        np.savez(os.path.join(args.out, f"{case['name']}.rank{rank}.npz"), **result)


if __name__ == "__main__":
    entry.run(main)
