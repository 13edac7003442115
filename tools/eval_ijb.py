#!/usr/bin/env python
"""IJB-B / IJB-C 1:1 verification (TAR at FAR) of an exported model or a checkpoint.

The command lives in ``paddle_pfc/cli/eval_ijb.py`` (options: ``--help``); installed, it is also the
``paddle-pfc-eval-ijb`` command.
"""

from paddle_pfc.cli.entry import run
from paddle_pfc.cli.eval_ijb import main

if __name__ == "__main__":
    run(main)
