#!/usr/bin/env python
"""Convert an insightface image folder (``root/label.txt`` + images) to ``train.rec`` / ``train.idx``.

The command lives in ``paddle_pfc/cli/im2rec.py`` (options: ``--help``); installed, it is also the
``paddle-pfc-im2rec`` command.
"""

from paddle_pfc.cli.entry import run
from paddle_pfc.cli.im2rec import main

if __name__ == "__main__":
    run(main)
