#!/usr/bin/env python
"""Run a command on several ranks of this machine, quietly.

The command lives in ``paddle_pfc/cli/launch.py`` (options: ``--help``); installed, it is also the
``paddle-pfc-launch`` command.
"""

from paddle_pfc.cli.entry import run
from paddle_pfc.cli.launch import main

if __name__ == "__main__":
    run(main)
