#!/usr/bin/env python
"""Write the torch-made ViT fixtures of tests/interop (run by hand; needs torch and arcface_torch's code).

    python tests/interop/make_vit_fixtures.py --arcface-torch PATH/recognition/arcface_torch

PATH is a checkout of github.com/deepinsight/insightface. arcface_torch's ``backbones/vit.py``
imports ``DropPath``, ``to_2tuple`` and ``trunc_normal_`` from ``timm.models.layers``; without timm
installed (timm imports torchvision) this script puts those three in place first, written as timm
has them (``DropPath`` is not built here: drop path rate 0). Writes into tests/interop/fixtures/:

* ``vit_small.pt``: ``torch.save(net.state_dict())`` of arcface_torch's ``VisionTransformer(img_size=112,
  patch_size=9, num_classes=EMBEDDING, embed_dim=DIM, depth=DEPTH, num_heads=HEADS, drop_path_rate=0,
  norm_layer="ln", mask_ratio=0)`` (the class ``get_model`` builds the ViTs with, at a small size), every
  LayerNorm's and BatchNorm's weight and bias, the BatchNorms' running statistics, ``pos_embed`` and
  ``mask_token`` randomized (seed 0);
* ``vit_small.npz``: ``images`` (6 uint8 RGB 112x112, ``RandomState(0)``), torch's ``eval`` embeddings
  of them (input ``(x / 255 - 0.5) / 0.5``); its ``train()`` embeddings (``train``, mask ratio 0), the
  loss weights ``loss_weights`` (``RandomState(1)`` normal) and ``grad.{name}``: the gradient of
  ``(train * loss_weights).sum()`` with respect to every parameter that takes part (``mask_token``
  does not without masking); ``{bn}.running_mean`` / ``.running_var`` after that one train forward;
  ``noise`` (``RandomState(2)`` uniform [6, 144]) and, on a copy of the network with masking on
  (``mask_ratio`` 0.1, ``torch.rand`` answering ``noise``), ``train_masked`` embeddings and
  ``masked_grad.{name}`` of the same loss for every parameter but the two feature Linears.

torch is imported only when this runs; tests read the files without it.
"""
from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "fixtures"
DIM, DEPTH, HEADS, EMBEDDING = 32, 2, 8, 16
BATCH = 6


def timm_layers(torch) -> None:
    """``timm.models.layers``' three names arcface_torch's vit.py imports, when timm is missing
    (``tools/bench_backbone.py``'s stand-in, which its ViT benchmark uses too)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for helpers
    from helpers.tool_scripts import load_tool

    load_tool("bench_backbone").timm_stand_in(torch)


def randomize(torch, net, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, (torch.nn.LayerNorm, torch.nn.BatchNorm1d)):
                n = m.weight.numel()
                m.weight.copy_(1 + torch.randn(n, generator=g) * 0.2)
                m.bias.copy_(torch.randn(n, generator=g) * 0.1)
            if isinstance(m, torch.nn.BatchNorm1d):
                m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
        net.pos_embed.copy_(torch.randn(net.pos_embed.shape, generator=g) * 0.1)
        net.mask_token.copy_(torch.randn(net.mask_token.shape, generator=g) * 0.5)


def train_step(torch, net, x, weights, out: dict, prefix: str, skip=()) -> np.ndarray:
    """``net.train()`` embeddings of ``x`` and the gradients of ``(emb * weights).sum()`` into ``out``."""
    net.train()
    net.zero_grad(set_to_none=True)
    emb = net(x)
    (emb * weights).sum().backward()
    for name, p in net.named_parameters():
        if p.grad is not None and name not in skip:
            out[f"{prefix}.{name}"] = p.grad.numpy().copy()
    return emb.detach().numpy()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--arcface-torch", required=True, help="insightface's recognition/arcface_torch folder")
    args = p.parse_args()
    import torch

    timm_layers(torch)
    sys.path.insert(0, args.arcface_torch)
    from backbones.vit import VisionTransformer  # arcface_torch's

    OUT.mkdir(exist_ok=True)
    torch.manual_seed(0)
    net = VisionTransformer(img_size=112, patch_size=9, num_classes=EMBEDDING, embed_dim=DIM, depth=DEPTH,
                            num_heads=HEADS, drop_path_rate=0.0, norm_layer="ln", mask_ratio=0.0)
    randomize(torch, net, 0)
    net.eval()
    torch.save(net.state_dict(), OUT / "vit_small.pt")
    masked_net = copy.deepcopy(net)
    images = np.random.RandomState(0).randint(0, 256, (BATCH, 112, 112, 3)).astype(np.uint8)
    x = torch.from_numpy(((images.astype(np.float32) / 255 - 0.5) / 0.5).transpose(0, 3, 1, 2).copy())
    weights = np.random.RandomState(1).standard_normal((BATCH, EMBEDDING)).astype(np.float32)
    out = {"images": images, "loss_weights": weights}
    with torch.no_grad():
        out["eval"] = net(x).numpy()
    out["train"] = train_step(torch, net, x, torch.from_numpy(weights), out, "grad")
    for name, m in net.named_modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            out[f"{name}.running_mean"] = m.running_mean.numpy().copy()
            out[f"{name}.running_var"] = m.running_var.numpy().copy()

    noise = np.random.RandomState(2).uniform(size=(BATCH, net.num_patches)).astype(np.float32)
    out["noise"] = noise
    masked_net.mask_ratio = 0.1
    real_rand = torch.rand
    torch.rand = lambda *shape, **kw: torch.from_numpy(noise.copy())
    try:
        out["train_masked"] = train_step(torch, masked_net, x, torch.from_numpy(weights), out, "masked_grad",
                                         skip=("feature.0.weight", "feature.2.weight"))
    finally:
        torch.rand = real_rand
    np.savez_compressed(OUT / "vit_small.npz", **out)
    print(f"wrote {OUT} with torch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
