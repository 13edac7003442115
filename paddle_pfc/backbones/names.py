"""The backbone names (``model.backbone`` accepts these, :func:`paddle_pfc.backbones.build_backbone`
builds them) and insightface's aliases, read from the backbone table
(:mod:`paddle_pfc.backbones.table`). Imports no Paddle."""
from __future__ import annotations

from paddle_pfc.backbones.table import ROWS

BACKBONES: tuple[str, ...] = tuple(row.name for row in ROWS)
ALIASES: dict[str, str] = {alias: row.name for row in ROWS for alias in row.aliases}
