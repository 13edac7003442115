"""How the native CPU extensions are built and loaded (the machinery, no op): Paddle's
``cpp_extension`` compiles a C++ source with the system compiler, once per source, compiler
options, Paddle version and CPU, under ``$PADDLE_PFC_BUILD_DIR`` or ``~/.cache/paddle_pfc``; one
process at a time per machine compiles, the others wait and load the result.

``PADDLE_PFC_NATIVE`` chooses: ``auto`` (default: build; if that fails, warn once and let the
caller use Paddle's kernels), ``on`` (a failed build is an error), ``off`` (never build).
Used by :mod:`paddle_pfc.kernels.native_ops` and :mod:`paddle_pfc.kernels.onednn_ops`.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import platform
import warnings
from pathlib import Path

import paddle

MODES = ("auto", "on", "off")
_loaded: dict[str, object] = {}


def mode() -> str:
    """``$PADDLE_PFC_NATIVE`` (default ``auto``); ValueError naming the variable otherwise."""
    value = os.environ.get("PADDLE_PFC_NATIVE", "auto") or "auto"
    if value not in MODES:
        raise ValueError(f"PADDLE_PFC_NATIVE must be one of {MODES}, got {value!r}")
    return value


def _cpu_identity() -> bytes:
    """The CPU's model and flags: the build uses ``-march=native``, so a home directory shared
    by machines with other CPUs must not share the binary."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="ignore") as cpuinfo:
            lines = [line for line in cpuinfo if line.startswith(("model name", "flags"))][:2]
    except OSError:
        lines = []
    return (platform.machine() + "".join(lines)).encode()


def build_directory(name: str, source: Path, extra_key: bytes = b"", **load_args) -> Path:
    """One build per source (with the headers beside it), compiler options (``load_args``),
    Paddle version and CPU (and ``extra_key``), under ``$PADDLE_PFC_BUILD_DIR`` or
    ``~/.cache/paddle_pfc``."""
    root = Path(os.environ.get("PADDLE_PFC_BUILD_DIR") or Path.home() / ".cache" / "paddle_pfc")
    headers = b"".join(header.read_bytes() for header in sorted(source.parent.glob("*.h")))
    key = (source.read_bytes() + headers + paddle.__version__.encode() + _cpu_identity() + extra_key
           + repr(sorted(load_args.items())).encode())
    return root / f"{name}_{hashlib.sha256(key).hexdigest()[:12]}"


def shared_object(name: str, source: Path, extra_key: bytes = b"", **load_args) -> Path:
    """Where :func:`build` puts extension ``paddle_pfc_<name>``'s shared object."""
    module = f"paddle_pfc_{name}"
    return build_directory(name, source, extra_key, **load_args) / module / f"{module}.so"


def is_built(name: str, source: Path, extra_key: bytes = b"", **load_args) -> bool:
    """True when :func:`build` of these arguments finds a finished build (nothing to compile)."""
    library = shared_object(name, source, extra_key, **load_args)
    return library.exists() and (library.parent.parent / "built").exists()


def build(name: str, source: Path, extra_key: bytes = b"", **load_args):
    """Compile (or reuse) extension ``paddle_pfc_<name>`` from ``source`` in its
    :func:`build_directory` with Paddle's ``cpp_extension.load`` (``load_args``: its compiler and
    linker options); one process at a time per machine (ranks share it).

    A finished build (marked by a ``built`` file written after its first successful load) is
    imported directly: ``load`` itself runs a ``setup.py`` subprocess each time, per extension
    and process, even when nothing is to be compiled (its cost: docs/paddle-notes.md)."""
    from paddle.utils.cpp_extension import load
    from paddle.utils.cpp_extension.extension_utils import _import_module_from_library

    library = shared_object(name, source, extra_key, **load_args)
    directory, marker = library.parent.parent, library.parent.parent / "built"
    directory.mkdir(parents=True, exist_ok=True)
    if not (marker.exists() and library.exists()):
        say(f"compiling native kernel {name} (once per machine and Paddle version, 15-60 s; cached in "
            f"{directory.parent})")
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if marker.exists() and library.exists():
                return _import_module_from_library(library.stem, str(library.parent), False)
            module = load(name=library.stem, sources=[str(source)], build_directory=str(directory),
                          verbose=False, **load_args)
            marker.write_text(f"{library}\n")
            return module
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def load_or_fall_back(name: str, builder, what: str):
    """``builder()``'s extension, built once per process and kept as ``name``; None when
    ``PADDLE_PFC_NATIVE=off``, or ``auto`` and the build failed (one warning naming ``what``:
    Paddle's own kernels are used); with ``on`` a failed build raises."""
    chosen = mode()
    if chosen == "off":
        return None
    if name not in _loaded:
        try:
            _loaded[name] = builder()
        except Exception as error:  # compiler missing, headers missing, ...
            if chosen == "on":
                raise RuntimeError(f"PADDLE_PFC_NATIVE=on: building {what} failed: {error}") from error
            warnings.warn(f"paddle_pfc: native CPU kernels unavailable ({what}: {error}); using Paddle's "
                          "kernels (slower). Set PADDLE_PFC_NATIVE=off to silence this.", RuntimeWarning)
            _loaded[name] = None
    return _loaded[name]


def say(message: str) -> None:
    """A progress line on stderr (the compiler runs silently for tens of seconds)."""
    import sys

    print(f"paddle_pfc: {message}", file=sys.stderr, flush=True)
