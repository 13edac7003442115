"""An insightface .bin is read without running code from it: a payload is refused (naming the
file and the global) by read_bin, tools/validate.py --bin and a training run's validation.sets,
and its marker file is never created; Python-2 era files still read."""
from __future__ import annotations

import os
import pickle
import re
import struct

import numpy as np
import pytest

from launcher import REPO
from paddle_pfc.evaluation.bin_set import read_bin
from paddle_pfc.utils.safe_pickle import UnsafePickleError

CONFIG = str(REPO / "tests" / "train_tiny.yaml")


class _System:
    """Unpickling it runs ``touch marker`` (what an attacker's ``__reduce__`` does)."""

    def __init__(self, marker) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


class _Exec:
    def __init__(self, marker) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').close()",))


def write_payload_bin(path, marker, kind=_System, where="bins") -> None:
    bins, issame = [b"\xff\xd8jpeg", b"\xff\xd8jpeg"], [True]
    if where == "bins":
        bins[1] = kind(marker)
    else:
        issame = [kind(marker)]
    with open(path, "wb") as f:
        pickle.dump((bins, issame), f, protocol=2)


@pytest.mark.parametrize("kind, global_name", [(_System, "posix.system"), (_Exec, "__builtin__.exec")])
@pytest.mark.parametrize("where", ["bins", "issame"])
def test_read_bin_refuses_a_payload_and_runs_nothing(tmp_path, kind, global_name, where):
    marker, path = tmp_path / "pwned", tmp_path / "evil.bin"
    write_payload_bin(path, marker, kind, where)
    with pytest.raises(UnsafePickleError, match=re.escape(f"{path}: refused to load: the pickle asks for {global_name}")):
        read_bin(str(path))
    assert not marker.exists()
    pickle.loads(path.read_bytes())  # the file is a working payload: plain pickle runs it
    assert marker.exists()


def _py2_bin(images: list[bytes], issame: list[bool]) -> bytes:
    """The opcodes Python 2's cPickle writes for ``(list of str, list of bool)``, protocol 2."""
    out = [b"\x80\x02]("]
    for data in images:
        out.append(b"U" + bytes([len(data)]) + data if len(data) < 256 else b"T" + struct.pack("<I", len(data)) + data)
    out.append(b"e](" + b"".join(b"\x88" if v else b"\x89" for v in issame) + b"e\x86.")
    return b"".join(out)


def test_python2_and_numpy_bins_still_read(tmp_path):
    images = [bytes([0xFF, 0xD8, 0x80 + i]) * (50 + 100 * i) for i in range(4)]  # non-ASCII, short and long
    (tmp_path / "py2.bin").write_bytes(_py2_bin(images, [True, False]))
    assert read_bin(str(tmp_path / "py2.bin")) == (images, [True, False])
    columns = [np.frombuffer(b, np.uint8).reshape(-1, 1) for b in images]  # insightface's numpy form
    for protocol in (2, 4, 5):
        with open(tmp_path / "np.bin", "wb") as f:
            pickle.dump((columns, np.array([True, False])), f, protocol=protocol)
        assert read_bin(str(tmp_path / "np.bin")) == (images, [True, False])


def _tool(name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"_tool_{name}", REPO / "tools" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_validate_tool_refuses_a_payload_bin(tmp_path, capsys):
    from paddle_pfc.backbones.state import random_state
    from paddle_pfc.deploy.export import export_backbone

    model = export_backbone("mobilefacenet", 32, 32, random_state("mobilefacenet", 32, 32), tmp_path / "model")
    marker, path = tmp_path / "pwned", tmp_path / "evil.bin"
    write_payload_bin(path, marker)
    assert _tool("validate").main(["--model", str(model), "--bin", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: refused to load: the pickle asks for posix.system" in err
    assert not marker.exists()


def test_training_refuses_a_payload_validation_set_before_the_first_step(tmp_path):
    import paddle_pfc
    from paddle_pfc.engine.config import load_config
    from paddle_pfc.engine.trainer import Trainer, ValidationSetError

    marker, path = tmp_path / "pwned", tmp_path / "evil.bin"
    write_payload_bin(path, marker)
    cfg = load_config(CONFIG, [f"train.output_dir={tmp_path / 'run'}",
                               f"validation.sets=[{{name: evil, path: {path}}}]"])
    paddle_pfc.init_distributed()
    with pytest.raises(ValidationSetError, match=r"validation.sets 'evil': .*evil\.bin: refused to load: the "
                                                 r"pickle asks for posix.system"):
        Trainer(cfg, 0, 1)
    assert not marker.exists()
