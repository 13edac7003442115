"""The package's version (what ``paddle_pfc.__version__`` and ``export.json`` report)."""
from __future__ import annotations

VERSION = "0.1.0"
