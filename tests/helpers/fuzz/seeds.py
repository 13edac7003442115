"""Valid seed inputs of every fuzzed reader, written by the package's own writers or by the libraries
that write these files for real (``pickle`` as insightface does, ``paddle.save``, ``onnx.helper``,
torch's files from tests/interop/fixtures). Each is small so that a case reads in milliseconds.

:func:`write_seeds` ``(reader, folder)`` -> the seed paths: files, or folders for the readers of
several files (``rec``: ``train.rec`` + ``train.idx``; ``labels``: ``label.txt`` + images;
``checkpoint``: ``meta.json`` + ``backbone.npz``).
"""
from __future__ import annotations

import hashlib
import json
import pickle
import shutil
from pathlib import Path

import numpy as np

TESTS = Path(__file__).resolve().parents[2]
FIXTURES = TESTS / "interop" / "fixtures"


def encoded_image(seed: int, side: int = 12, ext: str = ".jpg") -> bytes:
    import cv2

    rng = np.random.default_rng(seed)
    ok, data = cv2.imencode(ext, rng.integers(0, 256, (side, side, 3), dtype=np.uint8))
    assert ok
    return data.tobytes()


def _bin(folder: Path) -> list[Path]:
    images = [encoded_image(i, ext=".jpg" if i % 2 else ".png") for i in range(4)]
    paths = []
    for protocol, name in ((4, "set_p4.bin"), (2, "set_p2.bin")):
        path = folder / name
        path.write_bytes(pickle.dumps((images, [True, False]), protocol=protocol))  # insightface's format
        paths.append(path)
    return paths


def _pdparams(folder: Path) -> list[Path]:
    import paddle

    layer = paddle.nn.Sequential(paddle.nn.Conv2D(3, 4, 3), paddle.nn.BatchNorm2D(4), paddle.nn.Linear(4, 2))
    paths = []
    for protocol in (2, 4):
        path = folder / f"state_p{protocol}.pdparams"
        paddle.save(layer.state_dict(), str(path), protocol=protocol)
        paths.append(path)
    return paths


def _torch(folder: Path) -> list[Path]:
    paths = []
    for name in ("tensors_zip.pt", "tensors_legacy.pt"):
        shutil.copy(FIXTURES / name, folder / name)
        paths.append(folder / name)
    return paths


def tiny_onnx_graph():
    """Conv -> BatchNormalization -> PRelu -> Flatten -> Gemm on a 3x8x8 input (a valid ONNX model the
    converter reads and then refuses as no known backbone)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = {"w": rng.normal(size=(4, 3, 3, 3)), "b": np.zeros(4), "g": np.ones(4), "beta": np.zeros(4),
             "m": np.zeros(4), "v": np.ones(4), "slope": np.full((4, 1, 1), 0.25), "fc": rng.normal(size=(8, 144)),
             "fcb": np.zeros(8)}
    nodes = [helper.make_node("Conv", ["data", "w", "b"], ["c"], kernel_shape=[3, 3]),
             helper.make_node("BatchNormalization", ["c", "g", "beta", "m", "v"], ["n"], epsilon=1e-5),
             helper.make_node("PRelu", ["n", "slope"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "fc", "fcb"], ["out"], transB=1)]
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 8])],
                              [numpy_helper.from_array(v.astype(np.float32), k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


def _onnx(folder: Path) -> list[Path]:
    import onnx

    path = folder / "tiny.onnx"
    onnx.save(tiny_onnx_graph(), str(path))
    return [path]


def _rec(folder: Path) -> list[Path]:
    from paddle_pfc.data.recordio import write_insightface_rec

    seed = folder / "rec"
    write_insightface_rec(str(seed), [(i % 3, encoded_image(i)) for i in range(6)])
    return [seed]


def _labels(folder: Path) -> list[Path]:
    seed = folder / "images"
    (seed / "a").mkdir(parents=True)
    lines = []
    for i in range(4):
        (seed / "a" / f"{i}.jpg").write_bytes(encoded_image(i))
        lines.append(f"a/{i}.jpg\t{i % 2}")
    (seed / "label.txt").write_text("\n".join(lines) + "\n")
    return [seed]


def _state() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"conv.weight": rng.normal(size=(4, 3, 3, 3)).astype(np.float32),
            "bn._variance": np.ones(4, np.float32), "bn._mean": np.zeros(4, np.float32),
            "odd name/with slash": np.arange(3, dtype=np.int64)}


def _npz(folder: Path) -> list[Path]:
    from paddle_pfc.utils.npz_state import state_bytes

    path = folder / "state.npz"
    path.write_bytes(state_bytes(_state()))
    return [path]


def reseal(folder: Path, name: str) -> None:
    """Record ``folder/name``'s current sha256 and size in ``meta.json`` (so a mutated member is read,
    not refused by its checksum)."""
    meta = json.loads((folder / "meta.json").read_text())
    data = (folder / name).read_bytes()
    meta["files"][name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    (folder / "meta.json").write_text(json.dumps(meta, indent=1))


def _checkpoint(folder: Path) -> list[Path]:
    from paddle_pfc.engine.checkpoint import BACKBONE_FILE, write_meta
    from paddle_pfc.utils.npz_state import state_bytes

    seed = folder / "step_000000010"
    seed.mkdir()
    (seed / BACKBONE_FILE).write_bytes(state_bytes(_state()))
    config = {"model": {"backbone": "mobilefacenet", "embedding_size": 128, "input_size": 112}}
    write_meta(seed, {"global_step": 10, "config": config}, world_size=1, num_heads=1, files={})
    reseal(seed, BACKBONE_FILE)
    return [seed]


def _yaml(folder: Path) -> list[Path]:
    texts = {
        "base.yaml": "model:\n  backbone: iresnet18\n  embedding_size: 512\ntrain:\n  lr: 0.1\n  epochs: 2\n"
                     "  batch_size: 8\n  weight_decay: 5e-4\ndata:\n  kind: synthetic\n  num_classes: 10\n",
        "child.yaml": "_base_: base.yaml\ntrain:\n  lr: 0.2\n  warmup_epochs: 0\n"
                      "data:\n  kind: synthetic\n  num_classes: 100\n",
        "flow.yaml": "model: {backbone: mobilefacenet, embedding_size: 128}\ntrain: {lr: 0.05, epochs: 1}\n"
                     "data: {kind: synthetic, num_classes: 4}\n",
    }
    paths = []
    for name, text in texts.items():
        (folder / name).write_text(text)
        paths.append(folder / name)
    return paths


WRITERS = {"bin": _bin, "pdparams": _pdparams, "torch": _torch, "onnx": _onnx, "rec": _rec, "labels": _labels,
           "npz": _npz, "checkpoint": _checkpoint, "yaml": _yaml}


def write_seeds(reader: str, folder: Path) -> list[Path]:
    """The valid seed inputs of ``reader``, written under ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return WRITERS[reader](folder)
