"""Train a face recognizer with Partial FC.

The command lives in ``paddle_pfc/cli/train.py`` (options: ``--help``); installed, it is also the
``paddle-pfc-train`` command.
"""

from paddle_pfc.cli.entry import run
from paddle_pfc.cli.train import main

if __name__ == "__main__":
    run(main)
