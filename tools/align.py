#!/usr/bin/env python
"""Aligned face crops of photos (a face detector, or five landmarks per image).

The command lives in ``paddle_pfc/cli/align.py`` (options: ``--help``); installed, it is also the
``paddle-pfc-align`` command.
"""

from paddle_pfc.cli.align import main
from paddle_pfc.cli.entry import run

if __name__ == "__main__":
    run(main)
