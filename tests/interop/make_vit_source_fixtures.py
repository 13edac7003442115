#!/usr/bin/env python
"""Write the ViT fixtures of tests/interop made by the field's own exporters (run by hand; needs torch,
onnx, paddle and the sources' code).

    python tests/interop/make_vit_source_fixtures.py --arcface-torch INSIGHTFACE/recognition/arcface_torch \\
        --plsc PLSC

INSIGHTFACE is a checkout of github.com/deepinsight/insightface, PLSC one of github.com/PaddlePaddle/PLSC.
Writes into tests/interop/fixtures/:

* ``vit_small.onnx``: arcface_torch's ``VisionTransformer`` at the size of ``vit_small.pt`` (width 32,
  depth 2, 8 heads, embedding 16), LayerNorm / BatchNorm weights, biases and running statistics,
  ``pos_embed`` and the Linear biases randomized (seeds 1 and 11; ``blocks.1.attn.proj.bias`` a copy of
  ``blocks.0.attn.proj.bias``, so the exporter stores that tensor once), saved with ``torch.save`` and
  exported by ``torch2onnx.py``'s own ``convert_onnx`` (opset 11; torch 2.13's default exporter needs
  onnxscript, so ``torch.onnx.export`` is called with ``dynamo=False``, the TorchScript exporter
  ``torch2onnx.py`` was written for; ``np.float``, gone from numpy, is ``float``);
* ``vit_small_onnx.npz``: ``images`` (6 uint8 RGB 112x112, ``RandomState(0)``) and ``eval``: torch's eval
  embeddings of them (input ``(x / 255 - 0.5) / 0.5``);
* ``plsc_vit_small.pdparams``: PLSC's ``FaceViT`` (``plsc/models/face_vit.py``: ``img_size=112,
  patch_size=9, embed_dim=32, depth=2, num_heads=8, mlp_ratio=4, num_features=16, class_num=20``, the
  configs' ``pfc_config`` ``model_parallel: True``, which one process turns off) with the same kinds of
  tensors randomized (seed 2), saved by ``FaceViT.save`` (``paddle.save(state_dict)``: the backbone and
  ``head.weight``, PartialFC's class centers);
* ``plsc_vit_small.npz``: ``images`` (6 uint8 RGB 112x112, ``RandomState(3)``) and ``eval``: the PLSC
  model's eval embeddings, its data pipeline's ``NormalizeImage`` (``scale 1/255, mean 0.5, std 0.5``
  on RGB, then CHW).

PLSC's package ``__init__`` imports its whole training stack and ``plsc.nn.partialfc`` imports
``paddle.fluid`` (gone in Paddle 3): the script loads ``face_vit.py``, ``vision_transformer.py``,
``base_model.py`` and ``plsc/nn/{partialfc,init,norm}.py`` as they are, with ``paddle.fluid`` the
``paddle.base`` it became and PLSC's logger a stub.
"""
from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import types
from pathlib import Path

import numpy as np
from make_vit_fixtures import DEPTH, DIM, EMBEDDING, HEADS, OUT, randomize, timm_layers

BATCH = 6


def _randomize_biases(torch, net, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.Linear) and m.bias is not None:
                m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.1)
        net.blocks[1].attn.proj.bias.copy_(net.blocks[0].attn.proj.bias)


def write_onnx(arcface_torch: str) -> None:
    import functools

    import torch

    timm_layers(torch)
    sys.path.insert(0, arcface_torch)
    from backbones.vit import VisionTransformer  # arcface_torch's

    np.float = float  # torch2onnx.py's img.astype(np.float)
    torch.onnx.export = functools.partial(torch.onnx.export, dynamo=False)
    import torch2onnx

    torch.manual_seed(1)
    net = VisionTransformer(img_size=112, patch_size=9, num_classes=EMBEDDING, embed_dim=DIM, depth=DEPTH,
                            num_heads=HEADS, drop_path_rate=0.0, norm_layer="ln", mask_ratio=0.0)
    randomize(torch, net, 1)
    _randomize_biases(torch, net, 11)
    with tempfile.TemporaryDirectory() as tmp:
        torch.save(net.state_dict(), Path(tmp) / "model.pt")
        np.random.seed(0)  # the random image convert_onnx traces with
        torch2onnx.convert_onnx(net, str(Path(tmp) / "model.pt"), str(OUT / "vit_small.onnx"))
    images = np.random.RandomState(0).randint(0, 256, (BATCH, 112, 112, 3)).astype(np.uint8)
    x = torch.from_numpy(((images.astype(np.float32) / 255 - 0.5) / 0.5).transpose(0, 3, 1, 2).copy())
    net.eval()
    with torch.no_grad():
        np.savez_compressed(OUT / "vit_small_onnx.npz", images=images, eval=net(x).numpy())


def _plsc_modules(plsc: Path) -> types.ModuleType:
    """PLSC's ``plsc.models.face_vit`` loaded from its files, without the package's training stack."""
    import logging

    import paddle

    fluid = types.ModuleType("paddle.fluid")
    fluid.core, fluid.framework = paddle.base.core, paddle.base.framework
    sys.modules.update({"paddle.fluid": fluid, "paddle.fluid.framework": paddle.base.framework})
    paddle.fluid = fluid
    for name in ("plsc", "plsc.models", "plsc.nn", "plsc.utils"):
        package = types.ModuleType(name)
        package.__path__ = [str(plsc.joinpath(*name.split(".")))]
        sys.modules[name] = package
    logger = types.ModuleType("plsc.utils.logger")
    logger.info = logger.warning = logger.debug = logging.getLogger("plsc").info
    sys.modules["plsc.utils.logger"] = sys.modules["plsc.utils"].logger = logger
    nn = sys.modules["plsc.nn"]
    nn.PartialFC = importlib.import_module("plsc.nn.partialfc").PartialFC
    nn.init = importlib.import_module("plsc.nn.init")
    return importlib.import_module("plsc.models.face_vit")


def _randomize_paddle(paddle, net, seed: int) -> None:
    rng = np.random.RandomState(seed)
    state = {}
    for name, value in net.state_dict().items():
        shape = value.shape
        if name.endswith("_variance"):
            state[name] = rng.uniform(0.5, 1.5, shape)
        elif name.endswith("_mean") or name.endswith(".bias") or name in ("pos_embed", "mask_token"):
            state[name] = rng.standard_normal(shape) * 0.1
        elif (".norm" in name or name.startswith(("norm.", "feature.1.", "feature.3."))) and len(shape) == 1:
            state[name] = 1 + rng.standard_normal(shape) * 0.2
    net.set_state_dict({k: paddle.to_tensor(v.astype(np.float32)) for k, v in state.items()})


def write_plsc(plsc: str) -> None:
    import paddle

    face_vit = _plsc_modules(Path(plsc))
    paddle.seed(2)
    net = face_vit.FaceViT(img_size=112, patch_size=9, embed_dim=DIM, depth=DEPTH, num_heads=HEADS, mlp_ratio=4,
                           num_features=EMBEDDING, class_num=20, mask_ratio=0.0,
                           pfc_config={"model_parallel": True, "sample_ratio": 1.0})
    _randomize_paddle(paddle, net, 2)
    net.eval()
    net.save(str(OUT / "plsc_vit_small"))
    images = np.random.RandomState(3).randint(0, 256, (BATCH, 112, 112, 3)).astype(np.uint8)
    x = ((images.astype(np.float32) * (1.0 / 255.0) - 0.5) / 0.5).transpose(0, 3, 1, 2).copy()
    with paddle.no_grad():
        embeddings = net(paddle.to_tensor(x)).numpy()
    np.savez_compressed(OUT / "plsc_vit_small.npz", images=images, eval=embeddings)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--arcface-torch", required=True, help="insightface's recognition/arcface_torch folder")
    p.add_argument("--plsc", required=True, help="a PLSC checkout (the folder holding plsc/)")
    args = p.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    write_onnx(args.arcface_torch)
    write_plsc(args.plsc)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
