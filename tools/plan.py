"""Plan the per-rank memory of a Partial FC head (paddle_pfc.head.planner), or invert it.

The command lives in ``paddle_pfc/cli/plan.py`` (options: ``--help``); installed, it is also the
``paddle-pfc-plan`` command.
"""

from paddle_pfc.cli.entry import run
from paddle_pfc.cli.plan import main

if __name__ == "__main__":
    run(main)
