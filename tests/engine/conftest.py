"""The engine tests' shared fixture: ``run``, a tiny run with checkpoints at steps 2 and 4 (a test
module may define its own ``run``)."""
from pathlib import Path

import pytest

from helpers.checkpoint_runs import tiny_run


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    return tiny_run(tmp_path_factory)
