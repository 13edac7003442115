#!/usr/bin/env python
"""Face-verification accuracy of an exported model (or a checkpoint) on insightface .bin sets.

The command lives in ``paddle_pfc/cli/validate.py`` (options: ``--help``); installed, it is also the
``paddle-pfc-validate`` command.
"""

from paddle_pfc.cli.entry import run
from paddle_pfc.cli.validate import main

if __name__ == "__main__":
    run(main)
