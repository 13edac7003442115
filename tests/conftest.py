import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


def pytest_configure(config):
    config.addinivalue_line("markers", "multirank: launches several ranks with paddle.distributed.launch (slow)")


@pytest.fixture(autouse=True)
def paddle_dynamic_mode_by_default():
    """Each test starts in Paddle's default (dynamic) mode; tests that build static programs
    switch to static mode themselves, so no test depends on which module ran before it."""
    import paddle

    if not paddle.in_dynamic_mode():
        paddle.disable_static()
    yield
