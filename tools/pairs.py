#!/usr/bin/env python
"""Hold identities of an image folder out of training and write their verification pairs.

The command lives in ``paddle_pfc/cli/pairs.py`` (options: ``--help``); installed, it is also the
``paddle-pfc-pairs`` command.
"""

from paddle_pfc.cli.entry import run
from paddle_pfc.cli.pairs import main

if __name__ == "__main__":
    run(main)
