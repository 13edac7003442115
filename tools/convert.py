#!/usr/bin/env python
"""Convert an arcface_torch / insightface ONNX / PLSC face model into a paddle_pfc exported model.

The command lives in ``paddle_pfc/cli/convert.py`` (options: ``--help``); installed, it is also the
``paddle-pfc-convert`` command.
"""

from paddle_pfc.cli.convert import main
from paddle_pfc.cli.entry import run

if __name__ == "__main__":
    run(main)
