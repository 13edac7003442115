#!/usr/bin/env python
"""Export a trained backbone as a Paddle Inference model (optionally also ONNX).

The command lives in ``paddle_pfc/cli/export.py`` (options: ``--help``); installed, it is also the
``paddle-pfc-export`` command.
"""

from paddle_pfc.cli.entry import run
from paddle_pfc.cli.export import main

if __name__ == "__main__":
    run(main)
