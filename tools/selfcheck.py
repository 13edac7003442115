"""paddle_pfc self-check: every backend of the Partial FC head this machine can run, against float64.

The command lives in ``paddle_pfc/cli/selfcheck.py`` (options: ``--help``); installed, it is also the
``paddle-pfc-selfcheck`` command.
"""

from paddle_pfc.cli.entry import run
from paddle_pfc.cli.selfcheck import main

if __name__ == "__main__":
    run(main)
