"""The backbone names (the one list: ``model.backbone`` accepts these, :func:`paddle_pfc.backbones.build_backbone`
builds them) and insightface's aliases. Imports no Paddle."""
from __future__ import annotations

BACKBONES: tuple[str, ...] = ("iresnet18", "iresnet34", "iresnet50", "iresnet100", "iresnet200", "mobilefacenet",
                             "mobilefacenet_fc", "vit_t", "vit_s", "vit_b", "vit_l")
ALIASES: dict[str, str] = {"r18": "iresnet18", "r34": "iresnet34", "r50": "iresnet50",
                           "r100": "iresnet100", "r200": "iresnet200", "mbf": "mobilefacenet",
                           "w600k_mbf": "mobilefacenet_fc"}
