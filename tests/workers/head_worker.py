"""Run by tests under ``paddle.distributed.launch``: train a tiny model with the classifier for a
few steps per case and save everything the tests compare with the numpy reference."""
from __future__ import annotations

import argparse
import functools
import json
import os

import numpy as np
import paddle

import paddle_pfc
from paddle_pfc.cli import entry
from paddle_pfc.head.adaface import AdaFace
from paddle_pfc.head.dtypes import convert, to_float32
from paddle_pfc.runtime.distributed import current_place


def case_data(case: dict, world_size: int):
    rng = np.random.default_rng(case["seed"])
    n = case["batch"] * world_size
    inputs = rng.standard_normal((case["steps"], n, case["in_dim"])).astype(np.float32)
    labels = rng.integers(0, case["num_classes"], (case["steps"], n)).astype(np.int64)
    if case.get("label_override"):
        step, row, value = case["label_override"]
        labels[step, row] = value
    if case.get("inject_inf"):  # [step, global row]: that sample's input is inf
        step, row = case["inject_inf"]
        inputs[step, row, :] = np.inf
    centers = rng.standard_normal((case["num_classes"], case["dim"])).astype(np.float32)
    if case.get("tiny_center") is not None:  # a center of norm ~1e-19: 1/|w| clipped at 1e12
        centers[case["tiny_center"]] = 1e-20
    backbone = (rng.standard_normal((case["in_dim"], case["dim"])) / np.sqrt(case["in_dim"])).astype(np.float32)
    return inputs, labels, centers, backbone


def build_case(case: dict, rank: int, world_size: int):
    """``(main, startup, head, backbone_velocity)``: ``case``'s program, a linear backbone and the
    head, minimized (``backbone_velocity``: the backbone's momentum, or None)."""
    b = case["batch"]
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [b, case["in_dim"]], "float32")
        y = paddle.static.data("y", [b] if case.get("label_rank1", True) else [b, 1], "int64")
        proj = paddle.static.create_parameter([case["in_dim"], case["dim"]], "float32", name="backbone_w")
        feature = paddle.matmul(x, proj)
        settings = dict(sample_ratio=case["sample_ratio"], embedding_size=case["dim"], name="centers",
                        dtype=case.get("dtype", "float32"), center_dtype=case.get("center_dtype", "float32"),
                        chunk_rows=case.get("chunk_rows"), momentum_dtype=case.get("momentum_dtype"))
        if "adaface" in case:  # a Margin object
            head = paddle_pfc.LargeScaleClassifier(feature, y, rank, world_size, case["num_classes"],
                                                   margin=AdaFace(s=case["scale"], **case["adaface"]), **settings)
        else:  # the four scalars, positional as they were
            head = paddle_pfc.LargeScaleClassifier(feature, y, rank, world_size, case["num_classes"],
                                                   *case["margins"], scale=case["scale"], **settings)
        opt = optimizer_of(case)
        scaling = case.get("loss_scaling")
        if isinstance(scaling, dict):
            scaling = paddle_pfc.LossScaling(**scaling)
        paddle_pfc.minimize(opt, head.output_dict["loss"] * case.get("loss_factor", 1.0), loss_scaling=scaling)
        backbone_velocity = opt._accumulators.get("velocity", {}).get("backbone_w")
        if case["optimizer"] == "adamw":  # the backbone's moments, recorded as its "velocity" pair
            backbone_velocity = [opt._accumulators[kind]["backbone_w"] for kind in ("moment1", "moment2")]
    return main, startup, head, backbone_velocity


def optimizer_of(case: dict):
    """``case``'s optimizer: SGD, (Nesterov) momentum or AdamW, with its weight decay."""
    if case["optimizer"] == "adamw":
        return paddle.optimizer.AdamW(case["lr"], beta1=case["betas"][0], beta2=case["betas"][1], epsilon=case["eps"],
                                      weight_decay=case["weight_decay"])
    if case["optimizer"] == "sgd":
        return paddle.optimizer.SGD(case["lr"], weight_decay=case["weight_decay"])
    return paddle.optimizer.Momentum(case["lr"], momentum=case["momentum"], use_nesterov=case.get("nesterov", False),
                                     weight_decay=case["weight_decay"])


def read_tensor(scope, name: str) -> np.ndarray:
    """The variable ``name`` of ``scope`` as float32."""
    return to_float32(np.array(scope.find_var(name).get_tensor()))


def step_state(head, scope, step: int, backbone_velocity) -> dict:
    """What the worker records after ``step``: the shard, the backbone, the momentum (int8 codes and
    row scales with their values), the margin's state and the loss scale."""
    tensor = functools.partial(read_tensor, scope)
    velocity = head.velocity.name if head.velocity is not None else None
    out = {f"shard_{step}": tensor(head.weight.name), f"backbone_{step}": tensor("backbone_w")}
    if head.velocity_scale is not None:  # int8 codes and row scales; velocity_ holds their values
        codes, scales = np.array(scope.find_var(velocity).get_tensor()), tensor(head.velocity_scale.name)
        out[f"velocity_codes_{step}"], out[f"velocity_scale_{step}"] = codes, scales
        out[f"velocity_{step}"] = codes.astype(np.float64) * scales
    elif velocity:
        out[f"velocity_{step}"] = tensor(velocity)
    if isinstance(backbone_velocity, list):  # AdamW: the backbone's and the centers' moments, the rows' steps
        for k, moment in enumerate(backbone_velocity, 1):
            out[f"backbone_moment{k}_{step}"] = tensor(moment.name)
        for kind, state in zip(("moment1", "moment2", "steps"), head.adamw_states.values()):
            out[f"{kind}_{step}"] = tensor(state.name)
    elif backbone_velocity is not None:
        out[f"backbone_velocity_{step}"] = tensor(backbone_velocity.name)
    for k, state in enumerate(head.margin_states):
        out[f"margin_state{k}_{step}"] = tensor(state.name)
    if scope.find_var("loss_scaling@scale") is not None:
        out[f"scale_{step}"] = tensor("loss_scaling@scale")
    return out


def run_case(case: dict, rank: int, world_size: int) -> dict:
    inputs, labels, centers, backbone = case_data(case, world_size)
    b = case["batch"]
    main, startup, head, backbone_velocity = build_case(case, rank, world_size)
    place = current_place()  # the CPU here; a GPU where one is visible (tests marked gpu)
    exe = paddle.static.Executor(place)
    exe.run(startup)
    scope = paddle.static.global_scope()
    tensor = functools.partial(read_tensor, scope)
    out = {"class_start": head.class_start, "num_local": head.num_local, "num_sample": head.num_sample,
           "native": head.native, "kernels": head.kernels, "emulated": head.emulated,
           "backbone_after_startup": tensor("backbone_w")}
    scope.find_var("backbone_w").get_tensor().set(backbone, place)
    shard = centers[head.class_start:head.class_start + head.num_local]
    scope.find_var(head.weight.name).get_tensor().set(convert(shard, head.center_dtype), place)
    out["shard_initial"] = tensor(head.weight.name)
    fetch = [head.output_dict["loss"]]
    if "sampled_class_index" in head.output_dict:
        fetch.append(head.output_dict["sampled_class_index"])
    for step in range(case["steps"]):
        rows = slice(rank * b, (rank + 1) * b)
        label = labels[step, rows] if case.get("label_rank1", True) else labels[step, rows, None]
        results = paddle_pfc.run(exe, main, feed={"x": inputs[step, rows], "y": label}, fetch_list=fetch)
        out[f"loss_{step}"] = results[0]
        if len(results) > 1:
            out[f"sampled_{step}"] = results[1]
        out.update(step_state(head, scope, step, backbone_velocity))
    return out


def main() -> None:
    """``--cases FILE --out DIR``: one run; ``--runs FILE``: several, each ``{out, cases[, native,
    kernels]}`` (``PADDLE_PFC_NATIVE`` / ``PADDLE_PFC_KERNELS`` for its heads)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases")
    parser.add_argument("--out")
    parser.add_argument("--runs")
    args = parser.parse_args()
    rank, world_size = paddle_pfc.init_distributed()
    if args.runs:
        with open(args.runs) as f:
            runs = json.load(f)
    else:
        with open(args.cases) as f:
            runs = [dict(out=args.out, cases=json.load(f))]
    for run in runs:
        for variable, key in (("PADDLE_PFC_NATIVE", "native"), ("PADDLE_PFC_KERNELS", "kernels")):
            if key in run:
                os.environ[variable] = run[key]
        for case in run["cases"]:
            try:
                with paddle.static.scope_guard(paddle.static.Scope()):
                    result = run_case(case, rank, world_size)
            except Exception as exc:  # reported to the test, which asserts on it
                with open(os.path.join(run["out"], f"{case['name']}.rank{rank}.error"), "w") as f:
                    f.write(f"{type(exc).__name__}: {exc}")
                raise
            np.savez(os.path.join(run["out"], f"{case['name']}.rank{rank}.npz"), **result)


if __name__ == "__main__":
    entry.run(main)
