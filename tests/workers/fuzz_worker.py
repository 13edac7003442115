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

import importlib
import json
import os
import resource
import sys
import time
import traceback
import warnings
from collections.abc import Callable


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


#: reader name -> (module, public entry point, keyword arguments, whether the result is a dataset whose
#: first items are read too, other modules to import before the limit is set). The read is
#: ``entry_point(path, **keyword_arguments)``; a path is a file or, for rec / labels / checkpoint, a folder.
#: Paddle is imported first where a read imports it (so that it is not charged to the read's limit).
READERS: dict[str, tuple[str, str, dict, bool, tuple[str, ...]]] = {
    "bin": ("paddle_pfc.evaluation.bin_set", "load_bin", {"flip": False}, False, ()),
    "pdparams": ("paddle_pfc.utils.pdparams", "load_pdparams", {}, False, ("paddle",)),
    "torch": ("paddle_pfc.interop.torch_reader", "read_torch_state", {}, False, ()),
    "onnx": ("paddle_pfc.interop.convert", "convert", {}, False,
             ("paddle", "onnx", "paddle_pfc.interop.onnx_reader", "paddle_pfc.backbones")),
    "rec": ("paddle_pfc.data.recordio", "RecordDataset", {"image_size": None}, True, ()),
    "labels": ("paddle_pfc.data.image_folder", "ImageFolderDataset", {"image_size": None}, True, ()),
    "npz": ("paddle_pfc.utils.npz_state", "load_state", {}, False, ()),
    "checkpoint": ("paddle_pfc.engine.pretrained", "read_pretrained", {}, False,
                   ("paddle", "paddle_pfc.engine.checkpoint", "paddle_pfc.deploy.model_format")),
    "yaml": ("paddle_pfc.engine.config.loading", "load_config", {}, False, ()),
    "harness-check": ("__main__", "_read_harness_check", {}, False, ("paddle_pfc.utils.errors",)),
}
#: items of a dataset read after it is built (each decodes an image)
DATASET_ITEMS = 64


def _reader(name: str) -> Callable[[str], None]:
    """The read of reader ``name``, its modules imported."""
    module, entry_point, kwargs, dataset, preload = READERS[name]
    for other in preload:
        importlib.import_module(other)
    function = getattr(importlib.import_module(module), entry_point)

    def read(path: str) -> None:
        result = function(path, **kwargs)
        for index in range(min(len(result), DATASET_ITEMS) if dataset else 0):
            result[index]
    return read


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
    read = _reader(reader)
    limit = _address_space() + extra
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    warnings.simplefilter("ignore")
    with open(listing) as paths:
        files = [line.rstrip("\n") for line in paths if line.strip()]
    for path in files:
        with open(progress_file, "w") as progress:
            progress.write(path)
        start = time.perf_counter()
        try:
            read(path)
            error = None
        except Exception as caught:  # classifying every exception is the point
            error = caught
        seconds = time.perf_counter() - start
        outcome, text = classify(error, path)
        error = None
        rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({"file": path, "outcome": outcome, "error": text, "rss_kb": rss_kb,
                          "seconds": round(seconds, 4)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
