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

from helpers.tool_scripts import load_tool
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
    with pytest.raises(UnsafePickleError,
                       match=re.escape(f"{path}: refused to load: the pickle asks for {global_name}")):
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


def test_validate_tool_refuses_a_payload_bin(tmp_path, capsys):
    from paddle_pfc.backbones.state import random_state
    from paddle_pfc.deploy.export import export_backbone

    model = export_backbone("mobilefacenet", 32, 32, random_state("mobilefacenet", 32, 32), tmp_path / "model")
    marker, path = tmp_path / "pwned", tmp_path / "evil.bin"
    write_payload_bin(path, marker)
    assert load_tool("validate").main(["--model", str(model), "--bin", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: refused to load: the pickle asks for posix.system" in err
    assert not marker.exists()


def test_training_refuses_a_payload_validation_set_before_the_first_step(tmp_path):
    import paddle_pfc
    from paddle_pfc.engine.config import load_config
    from paddle_pfc.engine.trainer import Trainer
    from paddle_pfc.engine.validator import ValidationSetError

    marker, path = tmp_path / "pwned", tmp_path / "evil.bin"
    write_payload_bin(path, marker)
    cfg = load_config(CONFIG, [f"train.output_dir={tmp_path / 'run'}",
                               f"validation.sets=[{{name: evil, path: {path}}}]"])
    paddle_pfc.init_distributed()
    with pytest.raises(ValidationSetError, match=r"validation.sets 'evil': .*evil\.bin: refused to load: the "
                                                 r"pickle asks for posix.system"):
        Trainer(cfg, 0, 1)
    assert not marker.exists()


# ------------------------------------------------------------------------------ crafted files
import subprocess  # noqa: E402
import sys  # noqa: E402
import zlib  # noqa: E402

from helpers import crafted_pickles as cp  # noqa: E402
from paddle_pfc.evaluation.bin_set import MAX_IMAGE_PIXELS, decode_bin_image, load_bin  # noqa: E402
from paddle_pfc.utils.errors import BudgetError, InputDataError  # noqa: E402
from paddle_pfc.utils.safe_pickle import MalformedPickleError  # noqa: E402

_JPEGS = cp.EMPTY_LIST + cp.MARK + cp.raw(b"\xff\xd8jpeg") * 2 + cp.APPENDS


def _object_field_bins(tmp_path) -> list:
    """(path, where) of .bin files holding the object-field array as issame and as an image."""
    as_issame = tmp_path / "v9_issame.bin"
    as_issame.write_bytes(cp.bin_file(_JPEGS, cp.object_field_array()))
    as_image = tmp_path / "v9_image.bin"
    images = cp.EMPTY_LIST + cp.MARK + cp.object_field_array() + cp.raw(b"\xff\xd8jpeg") + cp.APPENDS
    as_image.write_bytes(cp.bin_file(images, cp.EMPTY_LIST + cp.TRUE + cp.APPEND))
    return [as_issame, as_image]


def test_read_bin_refuses_an_object_field_dtype(tmp_path):
    for path in _object_field_bins(tmp_path):
        with pytest.raises(MalformedPickleError, match=rf"{re.escape(str(path))}: not a valid insightface \.bin "
                                                       r"pickle \(numpy dtype 'V9'"):
            read_bin(str(path))


def test_validate_command_does_not_crash_on_an_object_field_dtype(tmp_path):
    from paddle_pfc.backbones.state import random_state
    from paddle_pfc.deploy.export import export_backbone

    model = export_backbone("mobilefacenet", 32, 32, random_state("mobilefacenet", 32, 32), tmp_path / "model")
    for path in _object_field_bins(tmp_path):
        done = subprocess.run([sys.executable, "-c", "from paddle_pfc.cli.entry import validate; validate()",
                               "--model", str(model), "--bin", str(path)], capture_output=True, text=True,
                              env={**os.environ, "PADDLE_PFC_VERBOSE": ""})
        assert done.returncode == 2, (done.returncode, done.stderr[-800:])
        assert f"error: {path}: not a valid insightface .bin pickle (numpy dtype 'V9'" in done.stderr
        assert "Traceback" not in done.stderr


def test_one_array_referenced_many_times_is_refused(tmp_path):
    dataless = tmp_path / "dataless.bin"
    dataless.write_bytes(cp.shared_dataless_bin(2000))  # 1 GB x 2000 on a reader that builds it
    assert dataless.stat().st_size < 6000
    with pytest.raises(MalformedPickleError, match=r"dataless\.bin: .*array used before its data"):
        read_bin(str(dataless))
    shared = tmp_path / "shared.bin"
    shared.write_bytes(cp.shared_array_bin(1 << 20, 200))  # 1 MB file, 200 MB of images
    with pytest.raises(BudgetError, match=rf"{re.escape(str(shared))} \(entry \[0\]\[\d+\]\): bytes returned, each "
                                          r"reference counted .* over the limit of 71,\d+,\d+"):
        read_bin(str(shared))


def _png_header(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + chunk + struct.pack(">I", zlib.crc32(chunk))


def test_images_are_checked_against_the_pixel_budget_before_decoding(tmp_path):
    import cv2

    huge = _png_header(30000, 30000) + b"\x00\x00\x00\x00IEND\xaeB`\x82"  # 5.2 GB of pixels if decoded
    small = cv2.imencode(".png", np.full((40, 30, 3), 7, np.uint8))[1].tobytes()
    path = tmp_path / "huge.bin"
    path.write_bytes(pickle.dumps(([small, huge, small, small], [True, False]), protocol=2))
    with pytest.raises(BudgetError, match=rf"{re.escape(str(path))} \(image 1\): pixels \(30000x30000\) of an image "
                                          rf"is 900,000,000, over the limit of {MAX_IMAGE_PIXELS:,}"):
        load_bin(str(path), image_size=None)
    assert decode_bin_image(small, str(path), 0).shape == (40, 30, 3)
    with pytest.raises(BudgetError, match=r"image 0\): pixels \(30x40\) of an image is 1,200, over the limit of 1,000"):
        decode_bin_image(small, str(path), 0, max_pixels=1000)
    with pytest.raises(InputDataError, match=r"image 3: cannot decode image \(4 bytes\): not a JPEG, PNG or BMP"):
        decode_bin_image(b"GIF8", str(path), 3)


def test_a_bin_of_non_bytes_is_named_not_allocated(tmp_path):
    path = tmp_path / "ints.bin"
    path.write_bytes(pickle.dumps(([10 ** 9, 10 ** 9], [True]), protocol=2))  # bytes(10**9) on a lax reader
    with pytest.raises(ValueError, match=r"ints\.bin: malformed bins/issame lists \(image 0 is a int"):
        read_bin(str(path))


def _py2_str(data: bytes) -> bytes:
    return b"U" + bytes([len(data)]) + data if len(data) < 256 else b"T" + struct.pack("<i", len(data)) + data


def test_python2_numpy_columns_still_read(tmp_path):
    """numpy arrays as Python 2 pickled them: dtype code, byte order and data as ``str`` opcodes."""
    images = [bytes([0xFF, 0xD8, 0x80 + i]) * (40 + 100 * i) for i in range(2)]
    u1 = cp.glob("numpy", "dtype") + cp.tup(_py2_str(b"u1"), b"K\x00", b"K\x01") + cp.REDUCE + cp.tup(
        b"K\x03", _py2_str(b"|"), cp.NONE, cp.NONE, cp.NONE, cp.num(-1), cp.num(-1), b"K\x00") + cp.BUILD
    columns = b"".join(cp.reconstruct() + cp.tup(b"K\x01", cp.tup(cp.num(len(data)), b"K\x01"), u1, cp.FALSE,
                                                 _py2_str(data)) + cp.BUILD for data in images)
    path = tmp_path / "py2_numpy.bin"
    path.write_bytes(cp.bin_file(cp.EMPTY_LIST + cp.MARK + columns + cp.APPENDS,
                                 cp.EMPTY_LIST + cp.MARK + cp.TRUE + cp.APPENDS))
    assert read_bin(str(path)) == (images, [True])


def test_issame_values_out_of_any_integer_range_are_named(tmp_path):
    path = tmp_path / "big.bin"
    path.write_bytes(pickle.dumps(([b"\xff\xd8a"] * 2, [10 ** 30]), protocol=2))
    with pytest.raises(ValueError, match=r"big\.bin: issame_list\[0\] is 10{30}, not a bool"):
        read_bin(str(path))
