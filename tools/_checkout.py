"""Imported first by every tool: this checkout's ``paddle_pfc`` wins over any installed copy.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
