"""The engine tests' shared fixture: ``run``, a tiny run with checkpoints at steps 2 and 4, made once
for every module that reads it (tests copy it before they change it; a test module may define its
own ``run``)."""
from pathlib import Path

import pytest

from helpers.checkpoint_runs import tiny_run


@pytest.fixture(scope="session")
def run(tmp_path_factory) -> Path:
    return tiny_run(tmp_path_factory)
