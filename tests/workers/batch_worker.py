"""Run by tests under ``paddle.distributed.launch``: a head with dynamic batch sizes (a Linear
"backbone" on ``images``), fed per step what ``--cases`` gives each rank, through
``paddle_pfc.run`` on Paddle's multi-threaded executor. Writes ``rank{r}.json``: per case the
error's class and message (or the loss), and whether the centers and the backbone stayed as they
were. ``--drop-positive-on R``: the fused backend, rank R's sampling kernel faulty (it drops its first
kept center, a positive)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import paddle

import paddle_pfc
import paddle_pfc.kernels
from paddle_pfc.cli.entry import run
from paddle_pfc.kernels.emulated import EmulatedFusedKernels


class DropsFirstPositive(EmulatedFusedKernels):
    """A faulty kernel: it returns the kept centers without the first one (a positive)."""

    def class_center_sample(self, label, num_classes, num_samples, rank, chain, seed=None):
        remapped, sampled = super().class_center_sample(label, num_classes, num_samples, rank, chain, seed)
        return remapped, sampled[1:]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--cases", required=True, help="JSON: [[rank 0's (images, labels)], [rank 1's ...], ...]"
                                                        " per case: numbers of image rows and the labels")
    parser.add_argument("--drop-positive-on", type=int, default=-1)
    args = parser.parse_args()
    rank, world = paddle_pfc.init_distributed(collective_timeout=120)
    if rank == args.drop_positive_on:
        paddle_pfc.kernels.fused_kernels = lambda emulated: DropsFirstPositive()
    paddle.set_flags({"FLAGS_new_executor_serial_run": False})  # the executor a GPU program gets
    main_program, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main_program, startup):
        images = paddle.static.data("images", [-1, 6], "float32")
        labels = paddle.static.data("labels", [-1], "int64")
        linear = paddle.nn.Linear(6, 8)
        head = paddle_pfc.LargeScaleClassifier(linear(images), labels, rank, world, 10, embedding_size=8,
                                               sample_ratio=0.5,
                                               kernels="fused" if args.drop_positive_on >= 0 else None)
        paddle_pfc.minimize(paddle.optimizer.Momentum(0.1, momentum=0.9), head.output_dict["loss"])
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    scope = paddle.static.global_scope()

    def parameters() -> list[np.ndarray]:
        return [np.array(scope.find_var(name).get_tensor()) for name in (head.weight.name, linear.weight.name)]

    results = []
    for case in json.loads(args.cases):
        rows, label_values = case[rank]
        feed = {"images": np.random.default_rng(rank).standard_normal((rows, 6)).astype(np.float32),
                "labels": np.asarray(label_values, np.int64)}
        before = parameters()
        try:
            loss, = paddle_pfc.run(exe, main_program, feed=feed, fetch_list=[head.output_dict["loss"]])
            outcome = {"loss": float(loss)}
        except (paddle_pfc.BatchSizeError, paddle_pfc.LabelRangeError, RuntimeError) as exc:
            outcome = {"error": type(exc).__name__, "message": str(exc)}
        outcome["unchanged"] = all(np.array_equal(a, b) for a, b in zip(parameters(), before))
        results.append(outcome)
    (Path(args.out) / f"rank{rank}.json").write_text(json.dumps(results))


if __name__ == "__main__":
    run(main)
