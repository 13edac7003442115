#!/usr/bin/env python
"""Check paddle-pfc-convert against the source frameworks themselves (needs torch; PLSC's sources for
--plsc): builds each model with randomized BatchNorm statistics and affine parameters, PReLU slopes
and convolutions, saves it as its framework does, converts it, and compares embeddings of the same
random uint8 images (each framework with its own normalization):

* torch: arcface_torch ``get_model(name)`` -> ``torch.save(state_dict)`` -> converted, through
  Paddle Inference (the exported folder, ``FaceEmbedder.embed`` on the uint8 images) and the
  static eval program, vs torch eval; and the ``.pt`` given to ``model.pretrained`` of a training
  program: its first step's embeddings of the images (one batch, BatchNorms on its statistics) vs
  torch ``train()``;
* onnx: the same model exported as arcface_torch's ``torch2onnx.py`` does (TorchScript exporter,
  opset 11, input ``data``, dynamic batch dim) -> converted, vs onnxruntime on the ONNX file;
* plsc: PLSC's dygraph ``IResNet50`` / ``MobileFaceNet`` (its source, with stand-ins for its
  ``plsc.nn`` PartialFC head) -> ``paddle.save(state_dict)`` -> converted, vs its dygraph output.

Usage::

    python tools/check_conversion.py --arcface-torch PATH/recognition/arcface_torch [--plsc PLSC_CHECKOUT] \
        [--models r50 mbf r100] [--work DIR]

Prints one line per model and source: min cosine and max relative error (max |a - b| / max |b|)
over the images. Exit 1 when any is below cosine 0.99999 or above relative error 1e-4.
"""
from __future__ import annotations

import argparse
import copy
import sys
import tempfile
from pathlib import Path

import numpy as np

from paddle_pfc.deploy.parity import SOURCE_COSINE, SOURCE_RTOL, agreement

_PLSC_STUB = '''from . import init
import paddle
class PartialFC(paddle.nn.Layer):
    """Stand-in for PLSC's PartialFC: its class centers as ``weight``."""
    def __init__(self, num_classes, embedding_size, name=None, model_parallel=False, sample_ratio=1.0, **kw):
        super().__init__()
        self.weight = self.create_parameter([num_classes, embedding_size])
'''


def randomize_torch(torch, net, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, m in net.named_modules():
            if isinstance(m, (torch.nn.BatchNorm2d, torch.nn.BatchNorm1d)):
                n = m.num_features
                m.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(n, generator=g) + 0.5)
                m.weight.copy_((1 + torch.randn(n, generator=g) * 0.1) * (0.3 if name.endswith("bn3") else 1))
                m.bias.copy_(torch.randn(n, generator=g) * 0.1)
                m.num_batches_tracked.fill_(1000)
            elif isinstance(m, torch.nn.Conv2d):
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) / m.weight[0].numel() ** 0.5)
            elif isinstance(m, torch.nn.PReLU):
                m.weight.copy_(torch.rand(m.weight.shape, generator=g) * 0.5)


def converted_embeddings(source: Path, images: np.ndarray, work: Path) -> dict[str, np.ndarray]:
    """Embeddings of the converted model: Paddle Inference on the uint8 images (FaceEmbedder,
    normalized as export.json says) and the static eval program on (x - 127.5) / 128."""
    from paddle_pfc.cli.convert import main as convert_main
    from paddle_pfc.deploy.export import EvalProgram
    from paddle_pfc.deploy.inference import FaceEmbedder
    from paddle_pfc.interop.convert import convert

    out = work / (source.name + ".converted")
    if convert_main([str(source), "--output", str(out)]) != 0:
        raise SystemExit(f"paddle-pfc-convert failed on {source}")
    converted = convert(source)
    x = ((images.astype(np.float32) - 127.5) / 128).transpose(0, 3, 1, 2).copy()
    prog = EvalProgram.from_spec(converted.spec, converted.state)
    return {"Paddle Inference (FaceEmbedder)": FaceEmbedder(out).embed(list(images), normalize=False),
            "static eval program": prog(x)}


def training_step_embeddings(source: Path, images: np.ndarray, work: Path) -> np.ndarray:
    """The embeddings of a training program's first step on ``images`` (one batch, the backbone in
    train mode), its backbone read from ``source`` as ``model.pretrained`` is."""
    import paddle

    import paddle_pfc
    from paddle_pfc.engine.builder import build_programs
    from paddle_pfc.engine.config import load_config
    from paddle_pfc.engine.pretrained import init_from_pretrained
    from paddle_pfc.interop.convert import convert

    converted = convert(source)
    n = len(images)
    cfg = load_config(None, [f"model.backbone={converted.backbone}", f"model.embedding_size={converted.embedding_size}",
                             f"model.pretrained={source}", "data.kind=synthetic", f"data.num_classes={n}",
                             f"train.batch_size={n}", f"train.output_dir={work / 'train'}"])
    x = ((images.astype(np.float32) - 127.5) / 128).transpose(0, 3, 1, 2).copy()
    was_dynamic = paddle.in_dynamic_mode()
    paddle.enable_static()
    paddle_pfc.init_distributed()
    try:
        with paddle.static.scope_guard(paddle.static.Scope()):
            programs = build_programs(cfg, 0, 1, 0.1, 1, sync=lambda phase: 0.0)
            init_from_pretrained(cfg, programs, [], 0)
            feed = {"images": x, "labels": np.arange(n, dtype=np.int64)}
            return programs.exe.run(programs.main, feed=feed, fetch_list=[programs.head.input_dict["feature"]])[0]
    finally:
        if was_dynamic:  # the PLSC checks run its dygraph model
            paddle.disable_static()


def check_torch(args, name: str, images: np.ndarray, work: Path, rows: list) -> None:
    import onnx
    import onnxruntime as ort
    import torch

    sys.path.insert(0, args.arcface_torch)
    from backbones import get_model  # arcface_torch's

    net = get_model(name, dropout=0.0, fp16=False, num_features=512)
    randomize_torch(torch, net, 0)
    net.eval()
    pt = work / f"{name}.pt"
    torch.save(net.state_dict(), pt)
    x = torch.from_numpy(((images.astype(np.float32) / 255 - 0.5) / 0.5).transpose(0, 3, 1, 2).copy())
    with torch.no_grad():
        ref = net(x).numpy()
    for how, emb in converted_embeddings(pt, images, work).items():
        rows.append((name, "torch .pt", how, "torch eval", *agreement(emb, ref)))
    with torch.no_grad():  # on a copy: a train-mode forward moves the running statistics
        train_ref = copy.deepcopy(net).train()(x).numpy()
    rows.append((name, "torch .pt", "training program, first step", "torch train",
                 *agreement(training_step_embeddings(pt, images, work), train_ref)))
    # torch2onnx.convert_onnx, with the TorchScript exporter (torch >= 2.9 defaults to another one)
    path = work / f"{name}.onnx"
    torch.onnx.export(net, x[:1], str(path), input_names=["data"], keep_initializers_as_inputs=False,
                      verbose=False, opset_version=11, dynamo=False)
    model = onnx.load(str(path))
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "None"
    onnx.save(model, str(path))
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    # one image per run: arcface_torch's MobileFaceNet flattens with x.view(x.size(0), -1), which
    # the exporter records as a fixed batch of 1
    ort_ref = np.concatenate([session.run(None, {"data": x[i:i + 1].numpy()})[0] for i in range(len(x))])
    rows.append((name, "onnx", "onnxruntime", "torch eval", *agreement(ort_ref, ref)))
    for how, emb in converted_embeddings(path, images, work).items():
        rows.append((name, "onnx", how, "onnxruntime", *agreement(emb, ort_ref)))


def check_plsc(args, name: str, images: np.ndarray, work: Path, rows: list) -> None:
    import subprocess

    src = work / "plsc_src"
    if not src.exists():
        for rel in ("plsc/models/iresnet.py", "plsc/models/mobilefacenet.py", "plsc/models/base_model.py",
                    "plsc/nn/init.py"):
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            (src / rel).write_bytes((Path(args.plsc) / rel).read_bytes())
        for rel in ("plsc/__init__.py", "plsc/models/__init__.py"):
            (src / rel).write_text("")
        (src / "plsc/nn/__init__.py").write_text(_PLSC_STUB)
    script = f'''
import sys, numpy as np, paddle
sys.path.insert(0, {str(src)!r})
from plsc.models.iresnet import IResNet50, IResNet100
from plsc.models.mobilefacenet import MobileFaceNet
paddle.seed(0)
net = {{"r50": IResNet50, "r100": IResNet100, "mbf": MobileFaceNet}}[{name!r}](class_num=100)
rng = np.random.RandomState(0)
for key, p in net.state_dict().items():
    shape = p.shape
    if key.endswith("_mean"): v = rng.randn(*shape) * 0.1
    elif key.endswith("_variance"): v = rng.rand(*shape) + 0.5
    elif key.endswith("_weight"): v = rng.rand(*shape) * 0.5
    elif len(shape) == 4: v = rng.randn(*shape) / np.sqrt(np.prod(shape[1:]))
    elif len(shape) == 1 and key.endswith("weight"): v = (1 + rng.randn(*shape) * 0.1) * (0.3 if "bn3" in key else 1)
    elif len(shape) == 1: v = rng.randn(*shape) * 0.1
    else: continue
    p.set_value(v.astype("float32"))
net.eval()
paddle.save(net.state_dict(), {str(work / f"plsc_{name}.pdparams")!r})
images = np.load({str(work / "images.npy")!r})
x = paddle.to_tensor(((images.astype(np.float32) / 255 - 0.5) / 0.5).transpose(0, 3, 1, 2).copy())
np.save({str(work / f"plsc_{name}.emb.npy")!r}, net(x).numpy())
'''
    subprocess.run([sys.executable, "-c", script], check=True)
    ref = np.load(work / f"plsc_{name}.emb.npy")
    for how, emb in converted_embeddings(work / f"plsc_{name}.pdparams", images, work).items():
        rows.append((name, "PLSC .pdparams", how, "PLSC dygraph", *agreement(emb, ref)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--arcface-torch", help="insightface's recognition/arcface_torch folder (torch checks)")
    p.add_argument("--plsc", help="a PLSC checkout (master) (PLSC checks)")
    p.add_argument("--models", nargs="+", default=["mbf", "r50"], help="arcface_torch names: mbf r18 ... r200")
    p.add_argument("--images", type=int, default=4)
    p.add_argument("--work", help="folder for the files (default: a temporary one)")
    args = p.parse_args(argv)
    work = Path(args.work or tempfile.mkdtemp(prefix="check_conversion_"))
    work.mkdir(parents=True, exist_ok=True)
    images = np.random.RandomState(0).randint(0, 256, (args.images, 112, 112, 3)).astype(np.uint8)
    np.save(work / "images.npy", images)
    rows: list = []
    for name in args.models:
        if args.arcface_torch:
            check_torch(args, name, images, work, rows)
        if args.plsc and name in ("r50", "r100", "mbf"):
            check_plsc(args, name, images, work, rows)
    print(f"\n{'model':6} {'source':15} {'converted, run by':32} {'reference':13} "
          f"{'min cosine':>12} {'max rel err':>12}")
    failed = False
    for name, source, how, ref, cos, rel in rows:
        ok = cos >= SOURCE_COSINE and rel <= SOURCE_RTOL
        failed |= not ok
        print(f"{name:6} {source:15} {how:32} {ref:13} {cos:12.8f} {rel:12.3g}{'' if ok else '  FAILED'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
