"""The matrix products of a ViT training step, counted (imports no Paddle).

A step's floor is the time its GEMMs take at the CPU's best GEMM rate: :func:`vit_step_gemm_flop`
counts their floating-point operations (2 per multiply-add) and :func:`floor_seconds` divides by a
measured rate.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["VitShape", "vit_gemm_flop", "vit_step_gemm_flop", "floor_seconds"]


@dataclass(frozen=True)
class VitShape:
    """What sizes a ViT's products: ``embed_dim`` D, ``depth`` blocks of ``num_heads`` heads,
    ``num_patches`` L tokens of ``patch_size``² pixels × ``channels``, ``len_keep`` tokens through
    the blocks (L without masking), MLP hidden ``mlp_ratio`` × D, output ``embedding_size``."""

    embed_dim: int
    depth: int
    num_heads: int
    num_patches: int
    len_keep: int
    embedding_size: int = 512
    mlp_ratio: float = 4.0
    patch_size: int = 9
    channels: int = 3

    @classmethod
    def of(cls, net) -> VitShape:
        """The shape of a built ``paddle_pfc.backbones.vit.VisionTransformer`` (read, not imported)."""
        first = net.blocks[0]
        return cls(net.embed_dim, len(net.blocks), first.attn.num_heads, net.num_patches,
                   net.len_keep if net.masking else net.num_patches, net.embedding_size,
                   first.mlp.fc1.weight.shape[1] / net.embed_dim)


def vit_gemm_flop(shape: VitShape, batch: int) -> dict[str, float]:
    """Forward FLOPs of each product kind for ``batch`` images: ``patch`` (the patch convolution as
    [N·L, 3·p²] x [3·p², D]), ``qkv``, ``attention`` (Q K^T and A V, per head [T, d] x [d, T] and
    [T, T] x [T, d]), ``proj``, ``mlp`` (fc1 and fc2), ``feature`` (Linear L·D -> D and D -> embedding)."""
    n, d, t = batch, shape.embed_dim, shape.len_keep
    hidden = int(d * shape.mlp_ratio)
    rows = n * t  # token rows through the blocks
    per_block = {"qkv": 2.0 * rows * d * 3 * d,
                 "attention": 2 * 2.0 * n * t * t * d,  # heads x (T x T x d/heads), twice
                 "proj": 2.0 * rows * d * d,
                 "mlp": 2 * 2.0 * rows * d * hidden}
    flop = {"patch": 2.0 * n * shape.num_patches * shape.channels * shape.patch_size ** 2 * d}
    flop.update({kind: shape.depth * value for kind, value in per_block.items()})
    flop["feature"] = 2.0 * n * shape.num_patches * d * d + 2.0 * n * d * shape.embedding_size
    return flop


def vit_step_gemm_flop(shape: VitShape, batch: int) -> float:
    """FLOPs of a training step's products: each forward product again for the gradient of each
    operand that needs one (weights and activations: 3× the forward), the patch convolution's twice
    (its input, the images, takes no gradient)."""
    forward = vit_gemm_flop(shape, batch)
    return sum(3 * value for kind, value in forward.items() if kind != "patch") + 2 * forward["patch"]


def floor_seconds(flop: float, gemm_gflops: float) -> float:
    """``flop`` at ``gemm_gflops`` (10⁹ FLOP/s)."""
    return flop / (gemm_gflops * 1e9)
