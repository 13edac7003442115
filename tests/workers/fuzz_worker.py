"""Worker process of the reader fuzz harness (helpers.fuzz.harness runs it as a script).

``python fuzz_worker.py READER LIST_FILE PROGRESS_FILE EXTRA_ADDRESS_SPACE`` reads the file paths of
``LIST_FILE``, one a line, and for each: writes the path to ``PROGRESS_FILE`` (so a death is attributed to it), reads
it with ``READER``'s public entry point and prints one JSON line ``{"file", "outcome", "error",
"rss_kb", "seconds"}``. Outcomes: ``read``; ``refused`` (an exception of the package's family, or
a ``ValueError`` / ``OSError``, whose message names the file or folder); ``unnamed`` (such an
exception that does not name it); ``oom`` (``MemoryError``); ``traceback`` (any other exception).
A signal or a hang is seen by the harness, not here. The address space is limited (RLIMIT_AS) to
what the imports took plus ``EXTRA_ADDRESS_SPACE`` bytes, so an unbounded allocation fails here.
"""
from __future__ import annotations

import json
import os
import resource
import sys
import time
import traceback
import warnings
from typing import Callable


def _read_bin(path: str) -> None:
    from paddle_pfc.evaluation.bin_set import load_bin

    load_bin(path, flip=False)


def _read_pdparams(path: str) -> None:
    from paddle_pfc.utils.pdparams import load_pdparams

    load_pdparams(path)


def _read_torch(path: str) -> None:
    from paddle_pfc.interop.torch_reader import read_torch_state

    read_torch_state(path)


def _read_onnx(path: str) -> None:
    from paddle_pfc.interop.convert import convert

    convert(path)


def _read_rec(folder: str) -> None:
    from paddle_pfc.data.recordio import RecordDataset

    dataset = RecordDataset(rec_path=os.path.join(folder, "train.rec"), image_size=None)
    for index in range(min(len(dataset), 64)):
        dataset[index]


def _read_labels(folder: str) -> None:
    from paddle_pfc.data.image_folder import ImageFolderDataset

    dataset = ImageFolderDataset(folder, image_size=None)
    for index in range(min(len(dataset), 64)):
        dataset[index]


def _read_npz(path: str) -> None:
    from paddle_pfc.utils.npz_state import load_state

    load_state(path)


def _read_checkpoint(folder: str) -> None:
    from paddle_pfc.engine.pretrained import read_pretrained

    read_pretrained(folder)


def _read_yaml(path: str) -> None:
    from paddle_pfc.engine.config.loading import load_config

    load_config(path)


def _read_harness_check(path: str) -> None:
    """Does what the file says (the harness's own test): ``read``, ``refuse``, ``raise``, ``allocate``,
    ``segfault``, ``hang``."""
    import ctypes
    import signal

    from paddle_pfc.utils.errors import InputDataError

    action = open(path).read().strip()
    if action == "refuse":
        raise InputDataError(path, "refused on purpose")
    if action == "raise":
        raise KeyError("not a named refusal")
    if action == "allocate":
        bytearray(64 << 30)
    if action == "segfault":
        ctypes.string_at(0)
        os.kill(os.getpid(), signal.SIGSEGV)
    if action == "hang":
        time.sleep(3600)


#: reader name -> (the modules to import before the limit is set, the read)
READERS: dict[str, tuple[tuple[str, ...], Callable[[str], None]]] = {
    "bin": (("paddle_pfc.evaluation.bin_set",), _read_bin),
    "pdparams": (("paddle_pfc.utils.pdparams",), _read_pdparams),
    "torch": (("paddle_pfc.interop.torch_reader",), _read_torch),
    "onnx": (("paddle_pfc.interop.convert", "paddle_pfc.interop.onnx_reader", "onnx", "paddle_pfc.backbones"), _read_onnx),
    "rec": (("paddle_pfc.data.recordio",), _read_rec),
    "labels": (("paddle_pfc.data.image_folder",), _read_labels),
    "npz": (("paddle_pfc.utils.npz_state",), _read_npz),
    "checkpoint": (("paddle_pfc.engine.pretrained", "paddle_pfc.engine.checkpoint",
                    "paddle_pfc.deploy.model_format"), _read_checkpoint),
    "yaml": (("paddle_pfc.engine.config.loading",), _read_yaml),
    "harness-check": (("paddle_pfc.utils.errors",), _read_harness_check),
}


def _address_space() -> int:
    """Bytes of address space this process holds (VmSize)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _where(error: BaseException) -> str:
    """``(at file:line, from the package's last frame)`` of where ``error`` was raised."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return ""
    ours = [f for f in frames if f"{os.sep}paddle_pfc{os.sep}" in f.filename]
    last = frames[-1]
    where = f" (at {os.path.basename(last.filename)}:{last.lineno}"
    if ours and ours[-1] is not last:
        where += f", from {ours[-1].filename.split(os.sep + 'paddle_pfc' + os.sep)[-1]}:{ours[-1].lineno}"
    return where + ")"


def classify(error: BaseException | None, path: str) -> tuple[str, str]:
    """``(outcome, one-line description)`` of a read of ``path`` that raised ``error``."""
    if error is None:
        return "read", ""
    line = f"{type(error).__name__}: {error}".replace("\n", " ")[:500]
    if isinstance(error, MemoryError):
        return "oom", line + _where(error)
    from paddle_pfc.utils.errors import PfcError

    if isinstance(error, (PfcError, ValueError, OSError)) and not isinstance(error, UnicodeError):
        named = path in str(error) or os.path.basename(path.rstrip("/")) in str(error)
        return ("refused", line) if named else ("unnamed", line + _where(error))
    return "traceback", line + _where(error)


def main(reader: str, listing: str, progress_file: str, extra: int) -> None:
    import importlib

    modules, read = READERS[reader]
    for module in modules:
        importlib.import_module(module)
    limit = _address_space() + extra
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    warnings.simplefilter("ignore")
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    with open(listing) as paths:
        files = [line.rstrip("\n") for line in paths if line.strip()]
    for path in files:
        with open(progress_file, "w") as progress:
            progress.write(path)
        start = time.perf_counter()
        try:
            read(path)
            error = None
        except Exception as caught:  # noqa: BLE001 - classifying every exception is the point
            error = caught
        seconds = time.perf_counter() - start
        outcome, text = classify(error, path)
        error = None
        rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({"file": path, "outcome": outcome, "error": text, "rss_kb": rss_kb,
                          "seconds": round(seconds, 4)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
