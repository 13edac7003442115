import os
import sys
import tarfile
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
# The shared helpers (launcher, reference, helpers/, workers/) import from tests/; test modules import
# only those, never each other.
sys.path.insert(0, str(TESTS))


def pytest_configure(config):
    config.addinivalue_line("markers", "multirank: launches several ranks with paddle.distributed.launch (slow)")
    config.addinivalue_line("markers", "fuzz: feeds fuzzed files to the file readers in worker processes "
                                       "(tests/fuzz; deselect with -m 'not fuzz')")
    config.addinivalue_line("markers", "quick: a representative subset of every layer, a few minutes on 2 cores "
                                       "(pytest -m quick; listed in QUICK below)")
    config.addinivalue_line("markers", "gpu: needs a visible CUDA GPU (run them with pytest -m gpu); skipped "
                                       "with the reason otherwise")
    config.addinivalue_line("markers", "starts_early(start): the test's jobs, start(folder), are started before "
                                       "the first test (see the started_early fixture)")
    # The native CPU kernels are part of what is tested: a failed build is an error here (not the
    # silent fallback of the default "auto"), and it happens once, before any rank is launched:
    # all of them, compiled side by side on a fresh checkout.
    os.environ.setdefault("PADDLE_PFC_NATIVE", "on")
    from paddle_pfc.cli.quiet import quiet_paddle

    quiet_paddle()  # Paddle's lines ("using custom operator only" per extension) kept out, as the commands do
    from paddle_pfc.kernels import extensions

    extensions.build_all()
    for name in extensions.EXTENSIONS:
        extensions.load(name)


#: The ``quick`` selection: whole modules (path under tests/) or single tests (``path::name``), one or
#: two of each layer, the commands a user runs first included; nothing multi-rank.
QUICK = (
    "test_layers.py", "utils/test_errors.py", "utils/test_atomic.py", "utils/test_progress.py",
    "utils/test_npz_state.py", "kernels/test_backend_warning.py",
    "kernels/test_native_ops.py::test_block_softmax_and_its_gradient", "kernels/test_native_ops.py::test_row_norms",
    "data/test_data.py", "data/test_photos.py", "head/test_reference.py", "head/test_bad_inputs.py",
    "evaluation/test_verification.py", "evaluation/test_face_align.py", "evaluation/test_face_detect.py",
    "evaluation/test_bin_safety.py", "deploy/test_onnx_quiet.py",
    "deploy/test_export_infer.py::test_paddle_inference_equals_eval_program",
    "deploy/test_export_infer.py::test_tools_validate_and_infer",
    "engine/test_config.py", "engine/test_output_lock.py",
    "cli/test_cli_arguments.py", "cli/test_command_help.py", "cli/test_failures.py", "cli/test_thresholds.py",
    "cli/test_im2rec_photos.py", "cli/test_launch.py",
    "cli/test_train_cli.py::test_trains_on_image_folder_and_recordio",
    "cli/test_train_cli.py::test_bad_config_names_the_key_before_starting",
)


def _mark_quick(items) -> None:
    for item in items:
        path = Path(str(item.fspath)).relative_to(TESTS).as_posix()
        name = item.originalname if hasattr(item, "originalname") else item.name
        if (path in QUICK or f"{path}::{name}" in QUICK) and item.get_closest_marker("multirank") is None:
            item.add_marker(pytest.mark.quick)


def pytest_collection_modifyitems(config, items):
    """Tests marked ``gpu`` skip, naming why, where Paddle sees no GPU (or fewer than they need:
    ``@pytest.mark.gpu(n)``). The head worker's runs learn which test modules this session runs
    (``helpers.head_runs.COLLECTED``: a world size's job makes those modules' runs only)."""
    import paddle

    from helpers import head_runs

    head_runs.COLLECTED.update(Path(str(item.fspath)).stem for item in items)
    _mark_quick(items)

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


@pytest.fixture(scope="session", autouse=True)
def started_early(request, tmp_path_factory):
    """{test id: (folder, {name: process})} for every selected test marked ``starts_early(start)``:
    ``start(folder)``'s processes, all started before the first test. Jobs that mostly wait (a
    rank kept out of a collective for longer than gloo's 30 s) then wait while other tests run,
    and the test itself only checks their outcome. The head worker's jobs of the selected tests
    start then too (``helpers.head_runs.start_early``). Processes still running at the end are
    killed."""
    from helpers import head_runs

    started = {}
    for item in request.session.items:
        marker = item.get_closest_marker("starts_early")
        if marker is not None:
            folder = tmp_path_factory.mktemp(item.name)
            started[item.nodeid] = folder, marker.args[0](folder)
    head_runs.start_early({Path(str(item.fspath)).stem for item in request.session.items}, tmp_path_factory)
    yield started
    head_runs.stop_pending()
    for _, processes in started.values():
        for process in processes.values():
            if process.poll() is None:
                process.kill()


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
# The file names of ../shared/data/small_dataset.tar, kept so that tests read the same paths
# whichever source made the folder.
SMALL_FOLDER_NAMES = ["00000001", "00000111", "00000130", "00000213", "00000228", "00000303",
                      "00000385", "00000488", "00000576", "00000672"]


def write_small_folder(root: Path) -> Path:
    """An insightface image folder made by the package's own writers: ten 112x112 JPEG faces of
    ten synthetic identities, ``images/<name>.jpg`` and ``label.txt`` (label i for the i-th)."""
    from paddle_pfc.data._image import encode_jpeg
    from paddle_pfc.data.synthetic import SyntheticFaces

    faces = SyntheticFaces(num_classes=10, samples_per_class=1, image_size=112, seed=11)
    (root / "images").mkdir(parents=True)
    lines = []
    for i, name in enumerate(SMALL_FOLDER_NAMES):
        image, label = faces[i]
        (root / "images" / f"{name}.jpg").write_bytes(encode_jpeg(image))
        lines.append(f"images/{name}.jpg\t{label}")
    (root / "label.txt").write_text("\n".join(lines) + "\n")
    return root


@pytest.fixture(scope="session")
def small_folder(tmp_path_factory) -> Path:
    """A 10-image, 10-identity insightface image folder: ``../shared/data/small_dataset.tar``
    (real faces) when it is beside the repository, else the same layout made synthetically."""
    root = tmp_path_factory.mktemp("small")
    tar_path = SHARED_DATA / "small_dataset.tar"
    if not tar_path.exists():
        return write_small_folder(root / "small_dataset")
    with tarfile.open(tar_path) as tar:
        tar.extractall(root, filter="data")
    return root / "small_dataset"


@pytest.fixture(scope="session")
def small_lfw(tmp_path_factory) -> Path:
    """A 10-pair ``.bin`` verification set of 112x112 JPEGs named ``small_lfw.bin``:
    ``../shared/data/small_lfw.bin`` (real faces) when present, else one written by
    ``paddle_pfc.evaluation.bin_set.write_bin`` from synthetic identities."""
    shared = SHARED_DATA / "small_lfw.bin"
    if shared.is_file():
        return shared
    from paddle_pfc.data import make_verification_set
    from paddle_pfc.evaluation.bin_set import write_bin

    path = tmp_path_factory.mktemp("bin") / "small_lfw.bin"
    bins, issame = make_verification_set(num_identities=8, num_pairs=10, image_size=112, seed=5)
    write_bin(str(path), bins, issame)
    return path


@pytest.fixture(scope="session")
def tiny_two_rank_run(tmp_path_factory) -> Path:
    """The output folder of ``tests/train_tiny.yaml`` trained uninterrupted for 12 steps on 2 ranks
    (``tools/train.py``; its schedule does not depend on ``train.max_steps``): what a crashed,
    preempted and re-run job, or the same job on two nodes, must give bit for bit. Its final
    checkpoint is ``checkpoints/step_000000012``."""
    from launcher import REPO, launch

    out = tmp_path_factory.mktemp("tiny_two_ranks")
    launch(REPO / "tools" / "train.py", 2, ["-c", str(REPO / "tests" / "train_tiny.yaml"), "-o", "train.max_steps=12",
                                            "-o", "train.checkpoint_every_steps=0",
                                            "-o", f"train.output_dir={out / 'run'}"],
           out / "log")
    return out / "run"


@pytest.fixture(scope="session")
def tiny_two_rank_losses(tiny_two_rank_run) -> dict[int, float]:
    """{step: loss} of :func:`tiny_two_rank_run`."""
    from launcher import metrics_losses

    losses = metrics_losses(tiny_two_rank_run)
    assert sorted(losses) == list(range(1, 13)), losses
    return losses
