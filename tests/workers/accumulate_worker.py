"""Run by tests under ``paddle.distributed.launch``: gradient accumulation (``minimize(...,
accumulate_steps=K)``) on a linear backbone and the head, a few optimizer steps of K micro-steps
per case; saves what the tests compare with the float64 reference of one step of the K x batch batch."""
from __future__ import annotations

import argparse
import json
import os

import numpy as np
import paddle

import paddle_pfc
from paddle_pfc.cli import entry
from paddle_pfc.head.dtypes import convert, to_float32
from paddle_pfc.head.registry import nonfinite_flags
from paddle_pfc.runtime.distributed import current_place

try:  # run by the launcher: this file's folder is on sys.path
    from head_worker import optimizer_of
except ImportError:  # imported by the tests as workers.accumulate_worker
    from workers.head_worker import optimizer_of


def read_tensor(scope, name: str) -> np.ndarray:
    return to_float32(np.array(scope.find_var(name).get_tensor()))


def accumulate_data(case: dict, world_size: int):
    """``(inputs [steps, K, W*B, in], labels [steps, K, W*B], centers, backbone)``: micro-batch k of
    step s is ``[s, k]``, rank r's rows ``r*B .. (r+1)*B``."""
    rng = np.random.default_rng(case["seed"])
    k, n = case["accumulate_steps"], case["batch"] * world_size
    inputs = rng.standard_normal((case["steps"], k, n, case["in_dim"])).astype(np.float32)
    labels = rng.integers(0, case["num_classes"], (case["steps"], k, n)).astype(np.int64)
    if case.get("inject_inf"):  # [step, micro-step, global row]: that sample's input is inf
        step, micro, row = case["inject_inf"]
        inputs[step, micro, row, :] = np.inf
    centers = rng.standard_normal((case["num_classes"], case["dim"])).astype(np.float32)
    backbone = (rng.standard_normal((case["in_dim"], case["dim"])) / np.sqrt(case["in_dim"])).astype(np.float32)
    return inputs, labels, centers, backbone


def build(case: dict, rank: int, world_size: int):
    b, k = case["batch"], case["accumulate_steps"]
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [b, case["in_dim"]], "float32")
        y = paddle.static.data("y", [b], "int64")
        everything = paddle.static.data("sample_y", [k * b], "int64")
        proj = paddle.static.create_parameter([case["in_dim"], case["dim"]], "float32", name="backbone_w")
        head = paddle_pfc.LargeScaleClassifier(
            paddle.matmul(x, proj), y, rank, world_size, case["num_classes"], *case["margins"], scale=case["scale"],
            sample_ratio=case["sample_ratio"], embedding_size=case["dim"], name="centers",
            chunk_rows=case.get("chunk_rows"), sample_label=everything)
        opt = optimizer_of(case)
        paddle_pfc.minimize(opt, head.output_dict["loss"], accumulate_steps=k, loss_scaling=case.get("loss_scaling"))
        if case["optimizer"] == "adamw":
            states = {f"backbone_moment{i}": opt._accumulators[kind]["backbone_w"].name
                      for i, kind in enumerate(("moment1", "moment2"), 1)}
            kinds = ("moment1", "moment2", "steps")
            states.update({kind: s.name for kind, s in zip(kinds, head.adamw_states.values())})
        else:
            states = {"velocity": head.velocity.name} if head.velocity is not None else {}
            if "velocity" in opt._accumulators:
                states["backbone_velocity"] = opt._accumulators["velocity"]["backbone_w"].name
    return main, startup, head, states


def run_case(case: dict, rank: int, world_size: int) -> dict:
    inputs, labels, centers, backbone = accumulate_data(case, world_size)
    b, k = case["batch"], case["accumulate_steps"]
    main, startup, head, states = build(case, rank, world_size)
    acc = paddle_pfc.accumulation_of(main)
    place = current_place()
    exe = paddle.static.Executor(place)
    exe.run(startup)
    scope = paddle.static.global_scope()
    scope.find_var("backbone_w").get_tensor().set(backbone, place)
    shard = centers[head.class_start:head.class_start + head.num_local]
    scope.find_var(head.weight.name).get_tensor().set(convert(shard, head.center_dtype), place)
    out = {"class_start": head.class_start, "num_local": head.num_local, "native": head.native,
           "kernels": head.kernels, "shard_initial": read_tensor(scope, head.weight.name)}
    fetch = [acc.loss, nonfinite_flags(main)] + (
        [head.output_dict["sampled_class_index"]] if "sampled_class_index" in head.output_dict else [])
    rows = slice(rank * b, (rank + 1) * b)
    for step in range(case["steps"]):
        for micro in range(k):
            paddle.seed(1000 + step)  # the same draws at every micro-step of a step
            feed = {"x": inputs[step, micro, rows], "y": labels[step, micro, rows],
                    "sample_y": labels[step, :, rows].reshape(-1), acc.feed_name: np.array([micro], np.int64)}
            results = paddle_pfc.run(exe, main, feed=feed, fetch_list=fetch)
            out[f"loss_{step}_{micro}"], out[f"flags_{step}_{micro}"] = results[0], results[1]
            if len(results) > 2:
                out[f"sampled_{step}_{micro}"] = results[2]
        out[f"shard_{step}"] = read_tensor(scope, head.weight.name)
        out[f"backbone_{step}"] = read_tensor(scope, "backbone_w")
        for key, name in states.items():
            out[f"{key}_{step}"] = read_tensor(scope, name)
        if scope.find_var("loss_scaling@scale") is not None:
            out[f"scale_{step}"] = read_tensor(scope, "loss_scaling@scale")
    return out


def main() -> None:
    """``--runs FILE``: each ``{out, cases, native, kernels}`` (``PADDLE_PFC_NATIVE`` / ``PADDLE_PFC_KERNELS``)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs")
    args = parser.parse_args()
    rank, world_size = paddle_pfc.init_distributed()
    with open(args.runs) as f:
        runs = json.load(f)
    for run in runs:
        os.environ["PADDLE_PFC_NATIVE"], os.environ["PADDLE_PFC_KERNELS"] = run["native"], run["kernels"]
        for case in run["cases"]:
            with paddle.static.scope_guard(paddle.static.Scope()):
                result = run_case(case, rank, world_size)
            np.savez(os.path.join(run["out"], f"{case['name']}.rank{rank}.npz"), **result)


if __name__ == "__main__":
    entry.run(main)
