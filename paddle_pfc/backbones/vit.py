"""Vision Transformer face backbones (arcface_torch ``backbones/vit.py`` ``VisionTransformer`` in Paddle).

Contract
--------
* Input ``float32 [N, 3, H, W]`` (NCHW, ``(H, W)`` = ``input_size``), output ``float32
  [N, embedding_size]`` (not L2-normalised); dygraph and Paddle 3 static PIR programs, the mode in
  force when the layer is called baked into a static program (as the other backbones).
* Stochastic depth (``drop_path_rate``) and random patch masking (``mask_ratio``) act in training
  only; both draw from Paddle's random generator at run time (``paddle.seed`` before a run repeats
  them; a static program repeats them under the serial executor ``configure_process`` sets). An
  eval program holds neither.
* In a static training program on CPU the LayerNorms, the Linears' bias adds (fc1's with its
  ReLU6; ``proj``'s and ``fc2``'s with the drop path and the residual add, without dropout), the
  attention between ``qkv`` and ``proj``, the masking's token gathers and the patch tokens' bias and
  position add build native ops
  (:mod:`paddle_pfc.backbones.transformer_layers`; the same values up to float32 rounding).

Architecture, as arcface_torch's (state-dict names the same):
``patch_embed.proj`` Conv2D(3 -> D, kernel 9, stride 9, bias) on the image, its ``(H//9) x (W//9)``
cells as ``L`` tokens in row-major order, plus ``pos_embed`` [1, L, D]; in training with
``mask_ratio > 0`` each sample keeps ``int(L * (1 - mask_ratio))`` tokens, those of the smallest
uniform noise (torch's ``random_masking``); ``depth`` pre-norm ``blocks`` (``norm1`` LayerNorm eps 1e-5
-> ``attn``: ``qkv`` Linear without bias, heads of ``D / num_heads``, scale ``head_dim ** -0.5``,
softmax, ``proj`` Linear; residual through drop path; ``norm2`` -> ``mlp`` fc1 (D -> 4D) - ReLU6 - fc2;
residual through drop path), block ``i`` dropping a path with probability ``linspace(0,
drop_path_rate, depth)[i]``; ``norm`` LayerNorm; with masking, ``mask_token`` fills the removed
places (after ``norm``, without position) and the tokens are put back in order; flattened to
``[N, L * D]``; ``feature``: Linear(L*D -> D, no bias) - BatchNorm1D(D, eps 2e-5) - Linear(D ->
embedding, no bias) - BatchNorm1D(embedding, eps 2e-5), both norms momentum 0.9 (torch's 0.1).
``dropout`` is arcface_torch's ``drop_rate`` (after the position embedding, in the MLP and after
the attention projection; its default 0).

arcface_torch's ``forward_features`` calls ``random_masking(x)`` without its ``mask_ratio``, so
every arcface_torch ViT with ``mask_ratio > 0`` masks 10 % (``*_mask_005`` variants included);
here ``mask_ratio`` is the fraction masked, and the builders' defaults are what arcface_torch's
``get_model`` runs: vit_t / vit_s / vit_b drop path 0.1, mask 0.1; vit_l (``vit_l_dp005_mask_005``)
drop path 0.05, mask 0.1. Every variant has 8 heads and MLP ratio 4.
"""
from __future__ import annotations

import math

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

from paddle_pfc.backbones.common import BN_MOMENTUM, check_head_args, check_spatial, normalize_input_size
from paddle_pfc.backbones.transformer_layers import (
    LayerNorm,
    Linear,
    attention,
    gather_tokens,
    linear_residual,
    patch_tokens,
)
from paddle_pfc.utils.errors import UsageError

__all__ = ["VisionTransformer", "VIT_SIZES", "PATCH_SIZE", "vit_backbone", "vit_t", "vit_s", "vit_b", "vit_l"]

PATCH_SIZE = 9
LN_EPSILON = 1e-5
FEATURE_BN_EPSILON = 2e-5
#: name -> (embed_dim, depth, num_heads, default drop_path_rate, default mask_ratio): arcface_torch's get_model
VIT_SIZES = {
    "vit_t": (256, 12, 8, 0.1, 0.1),
    "vit_s": (512, 12, 8, 0.1, 0.1),
    "vit_b": (512, 24, 8, 0.1, 0.1),
    "vit_l": (768, 24, 8, 0.05, 0.1),
}


def _trunc_normal() -> paddle.ParamAttr:
    # timm's trunc_normal_(std=.02): normal(0, .02) cut at -2 and 2
    return paddle.ParamAttr(initializer=nn.initializer.TruncatedNormal(mean=0.0, std=0.02, a=-2.0, b=2.0))


def _linear(fan_in: int, fan_out: int, bias: bool = True, relu6: bool = False) -> Linear:
    """arcface_torch's ``_init_weights``: weights trunc_normal(.02), biases 0; ``relu6``: ReLU6 after."""
    bias_attr = paddle.ParamAttr(initializer=nn.initializer.Constant(0.0)) if bias else False
    return Linear(fan_in, fan_out, weight_attr=_trunc_normal(), bias_attr=bias_attr, relu6=relu6)


def _dropout(p: float) -> nn.Layer:
    return nn.Dropout(p) if p > 0 else nn.Identity()


def _batch_dims(x, *dims: int) -> list:
    """``[batch of x, *dims]``: a shape whose first entry follows a static program's fed batch."""
    return [x.shape[0] if paddle.in_dynamic_mode() else paddle.shape(x)[0], *dims]


def drop_path_keep(x, p: float, training: bool):
    """Each sample's drop-path factor for ``x`` [N, ...], [N, 1, 1]: 0 with probability ``p``, else
    ``1 / (1 - p)``; None outside training or with ``p == 0``."""
    if not training or p <= 0:
        return None
    return F.dropout(paddle.ones_like(x[:, :1, :1]), p=p, training=True)


def drop_path(x, p: float, training: bool):
    """timm's ``DropPath``: each sample's ``x`` zeroed with probability ``p``, kept ones scaled by
    ``1 / (1 - p)``; identity outside training or with ``p == 0``."""
    keep = drop_path_keep(x, p, training)
    return x if keep is None else x * keep


class PatchEmbed(nn.Layer):
    """Conv2D(3 -> D, kernel = stride = 9) and the ``(H//9) * (W//9)`` cells as tokens [N, L, D]."""

    def __init__(self, embed_dim: int, patch_size: int = PATCH_SIZE):
        super().__init__()
        bound = 1.0 / math.sqrt(3 * patch_size * patch_size)  # torch's Conv2d default
        uniform = paddle.ParamAttr(initializer=nn.initializer.Uniform(-bound, bound))
        self.proj = nn.Conv2D(3, embed_dim, patch_size, stride=patch_size, weight_attr=uniform,
                              bias_attr=paddle.ParamAttr(initializer=nn.initializer.Uniform(-bound, bound)))

    def forward(self, x):
        return self.proj(x).flatten(start_axis=2).transpose([0, 2, 1])


class Attention(nn.Layer):
    """Multi-head self-attention: qkv Linear (no bias), softmax(q k^T * head_dim^-0.5) v, proj Linear."""

    def __init__(self, dim: int, num_heads: int, drop: float):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.qkv = _linear(dim, dim * 3, bias=False)
        self.proj = _linear(dim, dim)
        self.proj_drop = _dropout(drop)

    def mix(self, x):
        """The heads' outputs side by side, before ``proj``."""
        return attention(self, self.qkv(x), self.num_heads, self.scale)

    def forward(self, x):
        return self.proj_drop(self.proj(self.mix(x)))


class Mlp(nn.Layer):
    """fc1 (D -> hidden) - ReLU6 - dropout - fc2 (hidden -> D) - dropout (fc1 applies the ReLU6)."""

    def __init__(self, dim: int, hidden: int, drop: float):
        super().__init__()
        self.fc1 = _linear(dim, hidden, relu6=True)
        self.fc2 = _linear(hidden, dim)
        self.drop = _dropout(drop)

    def hidden(self, x):
        """fc1's output after its ReLU6 and dropout, before ``fc2``."""
        return self.drop(self.fc1(x))

    def forward(self, x):
        return self.drop(self.fc2(self.hidden(x)))


class Block(nn.Layer):
    """Pre-norm transformer block; both residual branches through drop path of ``drop_path_rate``."""

    def __init__(self, dim: int, num_heads: int, mlp_ratio: float, drop: float, drop_path_rate: float):
        super().__init__()
        self.drop_path_rate = float(drop_path_rate)
        self.norm1 = LayerNorm(dim, epsilon=LN_EPSILON)
        self.attn = Attention(dim, num_heads, drop)
        self.norm2 = LayerNorm(dim, epsilon=LN_EPSILON)
        self.mlp = Mlp(dim, int(dim * mlp_ratio), drop)

    def forward(self, x):
        x = self._residual(x, self.attn.mix(self.norm1(x)), self.attn.proj, self.attn.proj_drop)
        return self._residual(x, self.mlp.hidden(self.norm2(x)), self.mlp.fc2, self.mlp.drop)

    def _residual(self, x, hidden, linear: Linear, dropout: nn.Layer):
        """``x + drop_path(dropout(linear(hidden)))``; without dropout one op after the product
        where the layers build native ops (:func:`linear_residual`)."""
        if isinstance(dropout, nn.Identity):
            keep = drop_path_keep(x, self.drop_path_rate, self.training)  # x: the branch's [N, T, D]
            return linear_residual(linear, x, hidden, None if keep is None else keep.reshape([-1]))
        return x + drop_path(dropout(linear(hidden)), self.drop_path_rate, self.training)


def _check_rate(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) < 1.0:
        raise UsageError(f"{name} must be a float in [0, 1), got {value!r}")
    return float(value)


class VisionTransformer(nn.Layer):
    """arcface_torch's ViT face backbone; see the module docstring."""

    def __init__(self, embed_dim: int, depth: int, num_heads: int, embedding_size: int = 512, input_size=112,
                 dropout: float = 0.0, drop_path_rate: float = 0.0, mask_ratio: float = 0.0,
                 mlp_ratio: float = 4.0):
        super().__init__()
        check_head_args(embedding_size, dropout)
        if embed_dim % num_heads:
            raise UsageError(f"embed_dim {embed_dim} is not a multiple of num_heads {num_heads}")
        self.input_size = normalize_input_size(input_size)
        self.embedding_size = int(embedding_size)
        self.embed_dim = int(embed_dim)
        self.drop_path_rate = _check_rate("drop_path_rate", drop_path_rate)
        self.mask_ratio = _check_rate("mask_ratio", mask_ratio)
        self.num_patches = (self.input_size[0] // PATCH_SIZE) * (self.input_size[1] // PATCH_SIZE)
        # arcface_torch's random_masking: len_keep = int(L * (1 - mask_ratio))
        self.len_keep = int(self.num_patches * (1 - self.mask_ratio))
        if self.len_keep < 1:
            raise UsageError(f"mask_ratio {mask_ratio} keeps no token of {self.num_patches}")
        self.patch_embed = PatchEmbed(self.embed_dim)
        self.pos_embed = self.create_parameter([1, self.num_patches, self.embed_dim],
                                               attr=_trunc_normal())
        self.pos_drop = _dropout(float(dropout))
        rates = np.linspace(0.0, self.drop_path_rate, depth, dtype=np.float32).tolist()  # torch.linspace
        self.blocks = nn.LayerList([Block(self.embed_dim, num_heads, mlp_ratio, float(dropout), rates[i])
                                    for i in range(depth)])
        self.norm = LayerNorm(self.embed_dim, epsilon=LN_EPSILON)
        self.feature = nn.Sequential(  # Paddle's Linears: memory-bound products, float32 under amp=bf16 too
            nn.Linear(self.embed_dim * self.num_patches, self.embed_dim, weight_attr=_trunc_normal(), bias_attr=False),
            nn.BatchNorm1D(self.embed_dim, momentum=BN_MOMENTUM, epsilon=FEATURE_BN_EPSILON),
            nn.Linear(self.embed_dim, self.embedding_size, weight_attr=_trunc_normal(), bias_attr=False),
            nn.BatchNorm1D(self.embedding_size, momentum=BN_MOMENTUM, epsilon=FEATURE_BN_EPSILON),
        )
        self.mask_token = self.create_parameter(
            [1, 1, self.embed_dim], attr=paddle.ParamAttr(initializer=nn.initializer.Normal(0.0, 0.02)))

    @property
    def masking(self) -> bool:
        """Whether a call now masks tokens (training with ``mask_ratio > 0``)."""
        return self.training and self.mask_ratio > 0

    def random_masking(self, x, noise=None):
        """``(kept tokens [N, len_keep, D], ids_restore [N, L])``: per sample the ``len_keep`` tokens
        of the smallest ``noise`` [N, L] (uniform draws when None), in its order (torch's ``random_masking``)."""
        if noise is None:
            noise = paddle.rand(_batch_dims(x, self.num_patches))
        ids_shuffle = paddle.argsort(noise, axis=1)
        ids_restore = paddle.argsort(ids_shuffle, axis=1)
        return gather_tokens(self, x, ids_shuffle[:, :self.len_keep]), ids_restore

    def restore(self, x, ids_restore):
        """The kept tokens ``x`` and ``mask_token`` in the removed places, back in image order [N, L, D]."""
        masked = self.num_patches - self.len_keep
        tokens = paddle.tile(self.mask_token, _batch_dims(x, masked, 1))
        return gather_tokens(self, paddle.concat([x, tokens], axis=1), ids_restore)

    def forward_features(self, x, noise=None):
        """Images [N, 3, H, W] -> the normed tokens flattened, [N, L * D]; ``noise``: the masking's
        [N, L] values (drawn when None; unused without masking)."""
        check_spatial(x, self.input_size)
        x = self.pos_drop(patch_tokens(self, self.patch_embed.proj, self.pos_embed, x))
        masking = self.masking
        if masking:
            x, ids_restore = self.random_masking(x, noise)
        for block in self.blocks:
            x = block(x)
        x = self.norm(x)
        if masking:
            x = self.restore(x, ids_restore)
        return x.reshape([-1, self.num_patches * self.embed_dim])

    def forward(self, x, noise=None):
        return self.feature(self.forward_features(x, noise))


def vit_backbone(name: str, embedding_size: int = 512, input_size=112, dropout: float = 0.0,
                 drop_path_rate: float | None = None, mask_ratio: float | None = None) -> VisionTransformer:
    """The ViT ``name`` of :data:`VIT_SIZES`; ``None`` rates are its defaults."""
    dim, depth, heads, default_drop_path, default_mask = VIT_SIZES[name]
    return VisionTransformer(dim, depth, heads, embedding_size=embedding_size, input_size=input_size,
                             dropout=dropout,
                             drop_path_rate=default_drop_path if drop_path_rate is None else drop_path_rate,
                             mask_ratio=default_mask if mask_ratio is None else mask_ratio)


def vit_t(embedding_size: int = 512, input_size=112, dropout: float = 0.0, drop_path_rate: float | None = None,
          mask_ratio: float | None = None) -> VisionTransformer:
    """D 256, depth 12, 8 heads; defaults drop path 0.1, mask 0.1."""
    return vit_backbone("vit_t", embedding_size, input_size, dropout, drop_path_rate, mask_ratio)


def vit_s(embedding_size: int = 512, input_size=112, dropout: float = 0.0, drop_path_rate: float | None = None,
          mask_ratio: float | None = None) -> VisionTransformer:
    """D 512, depth 12, 8 heads; defaults drop path 0.1, mask 0.1."""
    return vit_backbone("vit_s", embedding_size, input_size, dropout, drop_path_rate, mask_ratio)


def vit_b(embedding_size: int = 512, input_size=112, dropout: float = 0.0, drop_path_rate: float | None = None,
          mask_ratio: float | None = None) -> VisionTransformer:
    """D 512, depth 24, 8 heads; defaults drop path 0.1, mask 0.1."""
    return vit_backbone("vit_b", embedding_size, input_size, dropout, drop_path_rate, mask_ratio)


def vit_l(embedding_size: int = 512, input_size=112, dropout: float = 0.0, drop_path_rate: float | None = None,
          mask_ratio: float | None = None) -> VisionTransformer:
    """D 768, depth 24, 8 heads; defaults drop path 0.05, mask 0.1 (arcface_torch's vit_l_dp005_mask_005)."""
    return vit_backbone("vit_l", embedding_size, input_size, dropout, drop_path_rate, mask_ratio)
