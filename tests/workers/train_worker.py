"""Run by tests under ``paddle.distributed.launch``: train / resume with the real Trainer and save
losses, the assembled state and a world-size independent probe loss."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import paddle

import paddle_pfc
from paddle_pfc.backbones import bind_parameters
from paddle_pfc.cli.entry import run
from paddle_pfc.engine.config import load_config
from paddle_pfc.engine.trainer import Trainer, setup_logging


def probe_loss(trainer: Trainer, images: np.ndarray, labels: np.ndarray) -> float:
    """Global loss of a fixed global batch, backbone in eval mode, every center kept.

    Reads the trainer's parameters (same names, same scope); independent of how many ranks hold
    the centers, so a resharded checkpoint must give the same number.
    """
    cfg, rank, world = trainer.cfg, trainer.rank, trainer.world_size
    rows = len(labels) // world
    programs = trainer.programs
    program = paddle.static.Program()
    programs.backbone.eval()
    with paddle.static.program_guard(program, paddle.static.Program()), \
            bind_parameters(programs.backbone, programs.startup):
        x = paddle.static.data("probe_images", [rows, 3, cfg.model.input_size, cfg.model.input_size], "float32")
        y = paddle.static.data("probe_labels", [rows], "int64")
        head = paddle_pfc.LargeScaleClassifier(
            programs.backbone(x), y, rank, world, cfg.data.num_classes, cfg.loss.margin1, cfg.loss.margin2,
            cfg.loss.margin3, cfg.loss.scale, sample_ratio=1.0, embedding_size=cfg.model.embedding_size,
            name=programs.head.weight.name, dtype=cfg.classifier.dtype,
            center_dtype=cfg.classifier.center_dtype)
    programs.backbone.train()
    part = slice(rank * rows, (rank + 1) * rows)
    return float(programs.exe.run(program, feed={"probe_images": images[part], "probe_labels": labels[part]},
                                 fetch_list=[head.output_dict["loss"]])[0])


def snapshot(trainer: Trainer, history: dict) -> dict[str, np.ndarray]:
    """The losses of ``history``, the probe loss, the position in the run and the rank's state."""
    cfg = trainer.cfg
    rng = np.random.default_rng(123)
    probe_n = 12  # divisible by 1, 2 and 3 ranks
    images = rng.uniform(-1, 1, (probe_n, 3, cfg.model.input_size, cfg.model.input_size)).astype(np.float32)
    labels = rng.integers(0, cfg.data.num_classes, probe_n).astype(np.int64)
    programs = trainer.programs
    scope = programs.scope
    result = {
        "loss": np.array(history["loss"]), "probe": probe_loss(trainer, images, labels),
        "global_step": trainer.state.global_step, "class_start": programs.head.class_start,
        "epoch": trainer.state.epoch, "step_in_epoch": trainer.state.step_in_epoch,
        "total_steps": trainer.total_steps, "schedule_step": programs.schedule.last_epoch,
        "weight": np.array(scope.find_var(programs.head.weight.name).get_tensor()),
        "velocity": np.array(scope.find_var(programs.head.velocity.name).get_tensor()),
        "backbone": np.concatenate([np.array(scope.find_var(n).get_tensor()).ravel()
                                    for n in programs.backbone_names.values()]),
    }
    result["eval_embedding"] = programs.embed(images)  # eval program (BN statistics) on probe images
    result["probe_images"] = images
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("-o", dest="overrides", action="append", default=[])
    parser.add_argument("--resume", default=None)
    parser.add_argument("--no-train", action="store_true")
    parser.add_argument("--record-resumed", action="store_true",
                        help="also save the state as resumed, before training, to resumed.rank<r>.npz")
    args = parser.parse_args()
    rank, world = paddle_pfc.init_distributed()
    cfg = load_config(args.config, args.overrides)
    setup_logging(Path(cfg.train.output_dir), rank)
    trainer = Trainer(cfg, rank, world)
    if args.resume:
        trainer.resume(args.resume)
    if args.resume and args.record_resumed:  # the state as loaded, before the steps of this run
        np.savez(Path(args.out) / f"resumed.rank{rank}.npz", **snapshot(trainer, {"loss": []}))
    history = {"loss": [], "val": []} if args.no_train else trainer.train()
    np.savez(Path(args.out) / f"rank{rank}.npz", **snapshot(trainer, history))
    if rank == 0:
        (Path(args.out) / "val.json").write_text(json.dumps(history["val"]))


if __name__ == "__main__":
    run(main)
