"""Imported first by every tool: this checkout's ``paddle_pfc`` wins over any installed copy.

Importing the package also applies its process defaults (math-library settings) before Paddle
runs its first kernel.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import paddle_pfc  # noqa: E402,F401
