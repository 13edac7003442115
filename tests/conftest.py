import os
import sys
import tarfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


def pytest_configure(config):
    config.addinivalue_line("markers", "multirank: launches several ranks with paddle.distributed.launch (slow)")
    config.addinivalue_line("markers", "gpu: needs a visible CUDA GPU (run them with pytest -m gpu); skipped "
                                       "with the reason otherwise")
    # The native CPU kernels are part of what is tested: a failed build is an error here (not the
    # silent fallback of the default "auto"), and it happens once, before any rank is launched.
    os.environ.setdefault("PADDLE_PFC_NATIVE", "on")
    from paddle_pfc import native_ops

    native_ops.kernels()


def pytest_collection_modifyitems(config, items):
    """Tests marked ``gpu`` skip, naming why, where Paddle sees no GPU (or fewer than they need:
    ``@pytest.mark.gpu(n)``)."""
    import paddle

    compiled = paddle.is_compiled_with_cuda()
    count = paddle.device.cuda.device_count() if compiled else 0
    for item in items:
        marker = item.get_closest_marker("gpu")
        if marker is None:
            continue
        needed = marker.args[0] if marker.args else 1
        if count < needed:
            why = (f"paddle {paddle.__version__} is not compiled with CUDA" if not compiled
                   else f"{count} GPU(s) visible")
            item.add_marker(pytest.mark.skip(reason=f"needs {needed} GPU(s): {why}"))


@pytest.fixture(autouse=True)
def paddle_dynamic_mode_by_default():
    """Each test starts in Paddle's default (dynamic) mode; tests that build static programs
    switch to static mode themselves, so no test depends on which module ran before it."""
    import paddle

    if not paddle.in_dynamic_mode():
        paddle.disable_static()
    yield


@pytest.fixture
def static_mode(paddle_dynamic_mode_by_default):
    """Static (PIR) mode for one test."""
    import paddle

    paddle.enable_static()
    yield


SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="session")
def small_folder(tmp_path_factory) -> Path:
    """``../shared/data/small_dataset.tar`` extracted once: an insightface image folder."""
    root = tmp_path_factory.mktemp("small")
    with tarfile.open(SHARED_DATA / "small_dataset.tar") as tar:
        tar.extractall(root, filter="data")
    return root / "small_dataset"
