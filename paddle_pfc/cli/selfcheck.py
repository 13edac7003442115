"""paddle_pfc self-check: every backend of the Partial FC head this machine can run, against float64.

    python tools/selfcheck.py                                               # one rank
    python -m paddle.distributed.launch --nproc_per_node N tools/selfcheck.py   # N ranks

For each backend available here (GPU: fused and composite, float32, float16 with loss scaling,
bfloat16 where the GPU supports it; CPU: composite with the native kernels, composite with
Paddle's kernels, fused with the emulated kernels, and bfloat16 on the composite-native and fused
backends) it builds a tiny head (a linear backbone, uneven class shards, sampling, ArcFace+CosFace
margins, Momentum with weight decay), runs two steps (the second with every label in the last
shard: more positives there than it samples, none on the other ranks), and compares with a float64 numpy reference
taken from the state the ranks held before each step:

* the loss (relative error), and
* every updated parameter and momentum (the centers of all ranks, the backbone): the largest
  deviation divided by the largest change the reference makes in that step; rows that were not
  kept must not move at all.

It checks that every rank reports the same loss and backbone, bit for bit, and prints one line per
backend ``PASS|FAIL  backend  max_rel_err  tolerance`` after a header naming Paddle, the device, the
CUDA/NCCL versions and the CPU's model and features. Exit status 1 when any backend fails (rank 0).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from dataclasses import dataclass

import numpy as np

from paddle_pfc.cli.help import HelpFormatter


@dataclass(frozen=True)
class BackendSpec:
    name: str
    kernels: str            # fused | composite
    native: str             # PADDLE_PFC_NATIVE for the build (composite on CPU)
    dtype: str              # operand dtype
    center_dtype: str       # storage dtype
    loss_scaling: bool
    tolerance: float


# Tolerances on max_rel_err (loss: relative; states: relative to the step's largest change plus,
# for 2-byte storage, one rounding of the stored value — the bounds of tests/head/test_mixed_precision).
# float32 arithmetic measures ~1e-5 here; 2-byte operands perturb the gradient by a few units of
# their rounding (bfloat16 u = 2^-8, float16 u = 2^-11; see tests/head/test_mixed_precision.py).
TOL_F32, TOL_BF16, TOL_F16 = 1e-3, 4 * 2.0**-8, 4 * 2.0**-11
STORAGE_U = {"float32": 0.0, "bfloat16": 2.0**-8, "float16": 2.0**-11}


def backends(gpu: bool, native_available: bool, bf16_on_gpu: bool) -> list[BackendSpec]:
    if gpu:
        out = []
        for kernels in ("fused", "composite"):
            out.append(BackendSpec(f"{kernels} float32", kernels, "off", "float32", "float32", False, TOL_F32))
            out.append(BackendSpec(f"{kernels} float16+loss-scaling", kernels, "off", "float16", "float16", True,
                                TOL_F16))
            if bf16_on_gpu:
                out.append(BackendSpec(f"{kernels} bfloat16", kernels, "off", "bfloat16", "bfloat16", False, TOL_BF16))
        return out
    out = []
    if native_available:
        out.append(BackendSpec("composite-native float32", "composite", "on", "float32", "float32", False, TOL_F32))
    out.append(BackendSpec("composite-paddle float32", "composite", "off", "float32", "float32", False, TOL_F32))
    out.append(BackendSpec("fused-emulated float32", "fused", "off", "float32", "float32", False, TOL_F32))
    if native_available:
        out.append(BackendSpec("composite-native bfloat16", "composite", "on", "bfloat16", "bfloat16", False, TOL_BF16))
    out.append(BackendSpec("fused-emulated bfloat16", "fused", "off", "bfloat16", "bfloat16", False, TOL_BF16))
    out.append(BackendSpec("fused-emulated float32+loss-scaling", "fused", "off", "float32", "float32", True, TOL_F32))
    return out


# --- the problem and its float64 reference ----------------------------------------------------
BATCH, DIM, IN_DIM, STEPS = 4, 16, 12, 2
LR, MOMENTUM, WEIGHT_DECAY, SCALE, RATIO = 0.2, 0.9, 5e-4, 16.0, 0.3
MARGINS = (0.9, 0.4, 0.15)


def problem(world_size: int, seed: int = 2024):
    rng = np.random.default_rng(seed)
    num_classes = 10 * world_size + 3  # uneven shards
    n = BATCH * world_size
    inputs = rng.standard_normal((STEPS, n, IN_DIM)).astype(np.float32)
    labels = rng.integers(0, num_classes, (STEPS, n)).astype(np.int64)
    # Step 1: every label in the last shard, more distinct labels than num_sample there and none on
    # the earlier ranks (the case a non-associative count scan in class_center_sample would get wrong).
    last_start = split(num_classes, world_size)[-1][0]
    labels[1] = last_start + rng.permutation(num_classes - last_start)[np.arange(n) % (num_classes - last_start)]
    centers = rng.standard_normal((num_classes, DIM)).astype(np.float32)
    backbone = (rng.standard_normal((IN_DIM, DIM)) / np.sqrt(IN_DIM)).astype(np.float32)
    return num_classes, inputs, labels, centers, backbone


def reference_step(features, centers, labels, kept, m1, m2, m3, scale):
    """float64 loss over the kept classes, dL/dfeatures, dL/dcenters (zeros off ``kept``)."""
    x, w = features, centers[kept]
    col = np.searchsorted(kept, labels)
    xn, wn = np.linalg.norm(x, axis=1, keepdims=True), np.linalg.norm(w, axis=1, keepdims=True)
    xu, wu = x / xn, w / wn
    cos = xu @ wu.T
    rows = np.arange(len(x))
    t = np.clip(cos[rows, col], -1.0, 1.0)
    theta = np.arccos(t)
    logits = scale * cos
    logits[rows, col] = scale * (np.cos(m1 * theta + m2) - m3)
    z = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    loss = float(np.mean(-np.log(p[rows, col])))
    d = p.copy()
    d[rows, col] -= 1.0
    d *= scale / len(x)
    d[rows, col] *= m1 * np.sin(m1 * theta + m2) / np.sin(theta)
    gxu, gwu = d @ wu, d.T @ xu
    gx = (gxu - np.sum(gxu * xu, axis=1, keepdims=True) * xu) / xn
    gw = (gwu - np.sum(gwu * wu, axis=1, keepdims=True) * wu) / wn
    grad_c = np.zeros_like(centers)
    grad_c[kept] = gw
    return loss, gx, grad_c


def momentum(param, grad, velocity):
    v = MOMENTUM * velocity + grad + WEIGHT_DECAY * param
    return param - LR * v, v


# --- one backend on this rank ------------------------------------------------------------------------
def split(num_classes: int, world_size: int) -> list[tuple[int, int]]:
    base, extra = divmod(num_classes, world_size)
    return [(r * base + min(r, extra), base + int(r < extra)) for r in range(world_size)]


def _build_backend(spec: BackendSpec, rank: int, world_size: int, num_classes: int):
    """``(main, startup, head, backbone velocity name)``: the training program of ``spec``'s backend
    (a linear backbone, the head, Momentum with weight decay), built under the current name guard."""
    import paddle

    from paddle_pfc.head.classifier import LargeScaleClassifier
    from paddle_pfc.head.loss_scaling import LossScaling
    from paddle_pfc.head.optimizer import minimize
    from paddle_pfc.utils.paddle_compat import optimizer_accumulator

    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [BATCH, IN_DIM], "float32")
        y = paddle.static.data("y", [BATCH], "int64")
        proj = paddle.static.create_parameter([IN_DIM, DIM], "float32", name="selfcheck_backbone")
        head = LargeScaleClassifier(
            paddle.matmul(x, proj), y, rank, world_size, num_classes, *MARGINS, scale=SCALE,
            sample_ratio=RATIO, embedding_size=DIM, name="selfcheck_centers", dtype=spec.dtype,
            center_dtype=spec.center_dtype, kernels=spec.kernels)
        opt = paddle.optimizer.Momentum(LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY)
        scaling = LossScaling(init_loss_scaling=1024.0) if spec.loss_scaling else False
        minimize(opt, head.output_dict["loss"], loss_scaling=scaling)
        backbone_velocity = optimizer_accumulator(opt, "velocity", "selfcheck_backbone").name
    return main, startup, head, backbone_velocity


def _gather_program(width: int, world_size: int):
    """``(program, gathered)``: all-gathers a float32 ``row`` of ``width`` from every rank."""
    import paddle

    from paddle_pfc.kernels.collectives import CollectiveChain

    gather_main = paddle.static.Program()
    with paddle.static.program_guard(gather_main, paddle.static.Program()):
        row = paddle.static.data("row", [width], "float32")
        gathered = CollectiveChain(world_size).all_gather(row)
    return gather_main, gathered


def _read(name: str) -> np.ndarray:
    """Variable ``name`` of the global scope as float32."""
    import paddle

    from paddle_pfc.head.dtypes import to_float32

    return to_float32(np.array(paddle.static.global_scope().find_var(name).get_tensor()))


def _state_exchange(exe, head, backbone_velocity: str, gather, world_size: int, max_local: int):
    """A function ``(loss, kept) -> [world_size, width]``: every rank's row of (loss, kept, shard,
    velocity, backbone, backbone velocity), padded to ``max_local`` rows, gathered with ``gather``."""
    import paddle

    gather_main, gathered = gather
    scope = paddle.static.global_scope()

    def pad(a, rows):
        return np.concatenate([a, np.zeros((rows - len(a),) + a.shape[1:], a.dtype)])

    def exchange(loss, kept):
        velocity = _read(head.velocity.name) if head.velocity is not None else np.zeros_like(_read(head.weight.name))
        parts = [np.array([loss, len(kept)], np.float32), pad(kept.astype(np.float32), max_local),
                 pad(_read(head.weight.name), max_local).ravel(), pad(velocity, max_local).ravel(),
                 _read("selfcheck_backbone").ravel(),
                 (_read(backbone_velocity) if scope.find_var(backbone_velocity) else np.zeros(IN_DIM * DIM)).ravel()]
        mine = np.concatenate(parts).astype(np.float32)
        (out,) = exe.run(gather_main, feed={"row": mine}, fetch_list=[gathered])
        return np.asarray(out).reshape(world_size, -1)
    return exchange


def run_backend(spec: BackendSpec, rank: int, world_size: int, place):
    """Run two steps; return, per step, every rank's row of (loss, kept, shard, velocity, backbone,
    backbone velocity) and the initial state (all gathered on every rank)."""
    import paddle

    from paddle_pfc.head.dtypes import convert
    from paddle_pfc.head.runner import run

    num_classes, inputs, labels, centers, backbone = problem(world_size)
    shards = split(num_classes, world_size)
    start, num_local = shards[rank]
    max_local = max(c for _, c in shards)
    os.environ["PADDLE_PFC_NATIVE"] = spec.native
    with paddle.utils.unique_name.guard(), paddle.static.scope_guard(paddle.static.Scope()):
        main, startup, head, backbone_velocity = _build_backend(spec, rank, world_size, num_classes)
        gather = _gather_program(2 + max_local + 2 * max_local * DIM + 2 * IN_DIM * DIM, world_size)
        assert head.kernels == spec.kernels and head.native == (spec.native == "on" and spec.kernels == "composite")
        exe = paddle.static.Executor(place)
        exe.run(startup)
        scope = paddle.static.global_scope()
        scope.find_var("selfcheck_backbone").get_tensor().set(backbone, place)
        shard0 = centers[start:start + num_local]
        scope.find_var(head.weight.name).get_tensor().set(convert(shard0, spec.center_dtype), place)
        exchange = _state_exchange(exe, head, backbone_velocity, gather, world_size, max_local)
        initial = exchange(np.nan, np.arange(num_local))
        fetch = [head.output_dict["loss"], head.output_dict["sampled_class_index"]]
        steps = []
        for step in range(STEPS):
            rows = slice(rank * BATCH, (rank + 1) * BATCH)
            loss, kept = run(exe, main, feed={"x": inputs[step, rows], "y": labels[step, rows]},
                                        fetch_list=fetch)
            steps.append(exchange(float(loss), np.asarray(kept)))
    return initial, steps


def unpack(table: np.ndarray, world_size: int):
    """Per rank: loss, kept (local), shard, velocity, backbone, backbone velocity (float64)."""
    num_classes = problem(world_size)[0]
    shards = split(num_classes, world_size)
    max_local = max(c for _, c in shards)
    out = []
    for r, (start, count) in enumerate(shards):
        v = table[r].astype(np.float64)
        at = 2
        kept = v[at:at + int(v[1])].astype(np.int64)
        at += max_local
        shard = v[at:at + max_local * DIM].reshape(max_local, DIM)[:count]
        at += max_local * DIM
        vel = v[at:at + max_local * DIM].reshape(max_local, DIM)[:count]
        at += max_local * DIM
        bb = v[at:at + IN_DIM * DIM].reshape(IN_DIM, DIM)
        at += IN_DIM * DIM
        bbv = v[at:at + IN_DIM * DIM].reshape(IN_DIM, DIM)
        out.append(dict(loss=v[0], kept=kept + start, shard=shard, velocity=vel, backbone=bb, backbone_velocity=bbv,
                        raw=table[r]))
    return out


def assess(initial, steps, world_size: int, storage_u: float = 0.0) -> tuple[float, str]:
    """(max_rel_err, note) of a backend from the gathered tables. ``storage_u``: the unit roundoff of
    the centers' storage dtype (0 for float32): their stored values are rounded once per step."""
    num_classes, inputs, labels, _, _ = problem(world_size)
    before = unpack(initial, world_size)
    worst, notes = 0.0, []
    for step, table in enumerate(steps):
        after = unpack(table, world_size)
        if len({a["loss"] for a in after}) != 1 or any(
                not np.array_equal(a["backbone"], after[0]["backbone"]) for a in after):
            notes.append(f"step {step}: ranks disagree")
            worst = np.inf
        centers = np.concatenate([b["shard"] for b in before])
        velocity = np.concatenate([b["velocity"] for b in before])
        backbone, bvel = before[0]["backbone"], before[0]["backbone_velocity"]
        kept = np.sort(np.concatenate([a["kept"] for a in after]))
        if not np.isin(np.unique(labels[step]), kept).all():
            notes.append(f"step {step}: a positive center was not kept")
            worst = np.inf
            break
        features = inputs[step].astype(np.float64) @ backbone
        loss, grad_f, grad_c = reference_step(features, centers, labels[step], kept, *MARGINS, SCALE)
        new_c, new_v = centers.copy(), velocity.copy()
        new_c[kept], new_v[kept] = momentum(centers[kept], grad_c[kept], velocity[kept])
        new_b, new_bv = momentum(backbone, inputs[step].astype(np.float64).T @ grad_f, bvel)
        got_c = np.concatenate([a["shard"] for a in after])
        got_v = np.concatenate([a["velocity"] for a in after])
        errors = [abs(after[0]["loss"] / loss - 1.0)]
        for got, expected, start, u in ((got_c, new_c, centers, storage_u),
                                        (got_v, new_v, MOMENTUM * velocity, storage_u),
                                        (after[0]["backbone"], new_b, backbone, 0.0),
                                        (after[0]["backbone_velocity"], new_bv, MOMENTUM * bvel, 0.0)):
            # Deviation beyond one rounding of the stored value (2-byte storage), over the step's
            # largest change.
            excess = np.maximum(np.abs(got - expected) - u * np.abs(expected), 0.0)
            errors.append(float(excess.max() / max(np.abs(expected - start).max(), 1e-30)))
        untouched = np.setdiff1d(np.arange(num_classes), kept)
        if not np.array_equal(got_c[untouched], centers[untouched]):
            notes.append(f"step {step}: a center that was not kept moved")
            worst = np.inf
        if os.environ.get("PADDLE_PFC_SELFCHECK_DEBUG"):
            print(f"step {step} errors (loss, centers, velocity, backbone, backbone velocity): "
                  + " ".join(f"{e:.2e}" for e in errors), file=sys.stderr)
        worst = max(worst, *errors)
        before = after
    return float(worst), "; ".join(notes)


def main(argv: list[str] | None = None) -> int:
    """Exit status (rank 0): 0 every backend passes, 1 any fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=HelpFormatter)
    parser.parse_args(argv)
    began = time.time()
    import paddle

    from paddle_pfc.kernels import expect_emulation, native_ops
    from paddle_pfc.runtime.device import device_info
    from paddle_pfc.runtime.distributed import current_place, init_distributed
    from paddle_pfc.utils.version import VERSION

    rank, world_size = init_distributed()
    place = current_place()
    gpu = isinstance(place, paddle.CUDAPlace)
    info = device_info()
    native_available = False
    if not gpu:
        expect_emulation()  # the fused-emulated rows name it
        saved = os.environ.get("PADDLE_PFC_NATIVE")
        os.environ["PADDLE_PFC_NATIVE"] = "auto"
        # (Paddle's extension loader prints a line on stdout even when the build is cached.)
        with contextlib.suppress(Exception), contextlib.redirect_stdout(sys.stderr):
            from paddle_pfc.kernels import extensions
            from paddle_pfc.utils.launch_env import local_world_size

            extensions.build_all(local_world_size())  # every kernel a command uses: one compile, here
            native_available = native_ops.kernels() is not None
        if saved is None:
            os.environ.pop("PADDLE_PFC_NATIVE")
        else:
            os.environ["PADDLE_PFC_NATIVE"] = saved
    bf16_on_gpu = False
    if gpu:
        with contextlib.suppress(Exception):
            bf16_on_gpu = bool(paddle.amp.is_bfloat16_supported(place))
    lines = [f"paddle_pfc {VERSION} selfcheck: {world_size} rank(s)", *info.lines()]
    results = []
    for spec in backends(gpu, native_available, bf16_on_gpu):
        try:
            initial, steps = run_backend(spec, rank, world_size, place)
            err, note = assess(initial, steps, world_size, STORAGE_U[spec.center_dtype])
        except Exception as error:  # a backend that does not run is a FAIL, reported with its error
            err, note = float("inf"), f"{type(error).__name__}: {str(error).strip().splitlines()[0][:160]}"
        ok = np.isfinite(err) and err <= spec.tolerance and not note
        results.append(ok)
        lines.append(f"{'PASS' if ok else 'FAIL'}  {spec.name:<38} max_rel_err {err:9.2e}  "
                     f"tolerance {spec.tolerance:.1e}" + (f"  ({note})" if note else ""))
    lines.append(f"selfcheck: {'all ' + str(len(results)) + ' backends PASS' if all(results) else 'FAIL'} "
                 f"({time.time() - began:.1f} s)")
    if rank == 0:
        print("\n".join(lines), flush=True)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
