#!/usr/bin/env python
"""Write the torch-made fixtures of tests/interop (run by hand; needs torch and arcface_torch's code).

    python tests/interop/make_interop_fixtures.py --arcface-torch PATH/recognition/arcface_torch

PATH is a checkout of github.com/deepinsight/insightface. Writes into tests/interop/fixtures/:

* ``mbf128_fp16.pt``: ``torch.save(net.state_dict())`` (zip format) of arcface_torch
  ``get_mbf(fp16=False, num_features=128)`` with randomized BatchNorm statistics, affine
  parameters, PReLU slopes and convolutions, stored in float16 (``net.half()``);
  ``mbf128_images.npy``: 3 random uint8 RGB 112x112 images; ``mbf128_emb.npy``: torch's eval
  embeddings of them (the float16 weights widened to float32, input ``(x / 255 - 0.5) / 0.5``);
* ``mbf128_train.npz``: the same network on one batch of 8 other random uint8 RGB images
  (``images``): torch's ``train()`` embeddings (``train``: every BatchNorm on the batch's
  statistics), its ``eval()`` ones (``eval``: the stored statistics), and every BatchNorm's running
  statistics after that one train-mode forward (``{name}.running_mean`` / ``.running_var``, torch's
  momentum 0.1 and unbiased batch variance) and the number of values per channel each one
  normalised (``{name}.count``: batch x positions);
* ``tensors_zip.pt`` / ``tensors_legacy.pt``: the same dict of tensors in torch's zip and legacy
  (``_use_new_zipfile_serialization=False``) formats: float16, bfloat16, float32, float64, int64,
  a transposed (strided) view, a slice at an offset sharing its storage, an ``nn.Parameter``;
  ``tensors_expected.npz``: their values (bfloat16 widened to float32).

torch is imported only when this runs; tests read the files without it.
"""
from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "fixtures"


def randomize(torch, net, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, (torch.nn.BatchNorm2d, torch.nn.BatchNorm1d)):
                n = m.num_features
                m.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(n, generator=g) + 0.5)
                m.weight.copy_(1 + torch.randn(n, generator=g) * 0.1)
                m.bias.copy_(torch.randn(n, generator=g) * 0.1)
            elif isinstance(m, torch.nn.Conv2d):
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) / m.weight[0].numel() ** 0.5)
            elif isinstance(m, torch.nn.PReLU):
                m.weight.copy_(torch.rand(m.weight.shape, generator=g) * 0.5)


def write_train_mode(torch, net) -> None:
    """``mbf128_train.npz`` (see the module doc); ``net``: the float32 network in eval mode."""
    images = np.random.RandomState(1).randint(0, 256, (8, 112, 112, 3)).astype(np.uint8)
    x = torch.from_numpy(((images.astype(np.float32) / 255 - 0.5) / 0.5).transpose(0, 3, 1, 2).copy())
    norms = {name: m for name, m in net.named_modules()
             if isinstance(m, (torch.nn.BatchNorm2d, torch.nn.BatchNorm1d))}
    counts = {}

    def count(name):
        return lambda m, inputs, _: counts.__setitem__(name, inputs[0].numel() // m.num_features)

    hooks = [m.register_forward_hook(count(name)) for name, m in norms.items()]
    with torch.no_grad():
        out = {"images": images, "eval": net.eval()(x).numpy(), "train": net.train()(x).numpy()}
    net.eval()
    for hook in hooks:
        hook.remove()
    for name, m in norms.items():
        out[f"{name}.running_mean"] = m.running_mean.numpy().copy()
        out[f"{name}.running_var"] = m.running_var.numpy().copy()
        out[f"{name}.count"] = np.int64(counts[name])
    np.savez_compressed(OUT / "mbf128_train.npz", **out)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--arcface-torch", required=True, help="insightface's recognition/arcface_torch folder")
    args = p.parse_args()
    import torch

    sys.path.insert(0, args.arcface_torch)
    from backbones import get_model  # arcface_torch's

    OUT.mkdir(exist_ok=True)
    torch.manual_seed(0)
    net = get_model("mbf", fp16=False, num_features=128)
    randomize(torch, net, 0)
    net.eval().half()
    torch.save(net.state_dict(), OUT / "mbf128_fp16.pt")
    net.float()
    images = np.random.RandomState(0).randint(0, 256, (3, 112, 112, 3)).astype(np.uint8)
    x = torch.from_numpy(((images.astype(np.float32) / 255 - 0.5) / 0.5).transpose(0, 3, 1, 2).copy())
    with torch.no_grad():
        np.save(OUT / "mbf128_emb.npy", net(x).numpy())
    np.save(OUT / "mbf128_images.npy", images)
    write_train_mode(torch, net)

    base = torch.arange(60, dtype=torch.float32).reshape(6, 10) / 7
    tensors = collections.OrderedDict()
    tensors["half"] = (torch.arange(12, dtype=torch.float32) / 3).half()
    tensors["bfloat16"] = (torch.arange(12, dtype=torch.float32) / 3 - 1).bfloat16()
    tensors["float64"] = torch.arange(5, dtype=torch.float64) / 9
    tensors["int64"] = torch.tensor([3, -1, 2 ** 40], dtype=torch.int64)
    tensors["transposed"] = base.t()  # strides (1, 10)
    tensors["offset_slice"] = base[2:5, 3:7]  # offset 23 into base's storage
    tensors["base"] = base
    tensors["parameter"] = torch.nn.Parameter(torch.linspace(-1, 1, 8).reshape(2, 4))
    tensors["scalar"] = torch.tensor(2.5)
    torch.save(tensors, OUT / "tensors_zip.pt")
    torch.save(tensors, OUT / "tensors_legacy.pt", _use_new_zipfile_serialization=False)
    np.savez(OUT / "tensors_expected.npz",
             **{k: (v.detach().float() if v.dtype == torch.bfloat16 else v.detach()).numpy()
                for k, v in tensors.items()})
    print(f"wrote {OUT} with torch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
