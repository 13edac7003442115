#!/usr/bin/env python
"""Embed face images with an exported model and compare them.

The command lives in ``paddle_pfc/cli/infer.py`` (options: ``--help``); installed, it is also the
``paddle-pfc-infer`` command.
"""

from paddle_pfc.cli.entry import run
from paddle_pfc.cli.infer import main

if __name__ == "__main__":
    run(main)
