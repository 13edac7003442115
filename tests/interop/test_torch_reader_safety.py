"""paddle_pfc.interop.torch_reader against crafted files: tensor geometry checked against its storage,
storages against the zip member, nesting and decoded bytes against the file's budget, and the
storage markers untouched by the file (each read is independent of the ones before)."""
from __future__ import annotations

import io
import re
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

from helpers import crafted_pickles as cp
from paddle_pfc.interop.torch_reader import read_torch_state
from paddle_pfc.utils.errors import BudgetError
from paddle_pfc.utils.safe_pickle import MalformedPickleError

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FLOATS = struct.pack("<4f", 1.5, -2.0, 3.25, 0.0)


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_crafted_tensor_reads_as_written(tmp_path):
    path = _write(tmp_path, "ok.pt", cp.torch_zip(cp.torch_state(w=cp.torch_tensor("0", 4, (2, 2), (1, 2))),
                                                   {"0": FLOATS}))
    np.testing.assert_array_equal(read_torch_state(path)["w"], np.frombuffer(FLOATS, "<f4").reshape(2, 2).T)


@pytest.mark.parametrize("numel, size, stride, offset, problem", [
    (1, (1 << 28,), (0,), 0, r"size \[268435456\] with stride \[0\]: a stride of 0 repeats one element"),
    (4, (4, 4), (1, 0), 0, r"a stride of 0 repeats one element"),
    (4, (3,), (2,), 0, r"reaches element 4 of a storage of 4"),
    (4, (4,), (1,), 1, r"reaches element 4 of a storage of 4"),
    (4, (2, 3), (1, 1), 0, r"size \[2, 3\] .* of a storage of 4"),  # overlapping: more elements than storage
])
def test_tensor_geometry_outside_its_storage_is_refused(tmp_path, numel, size, stride, offset, problem):
    ops = cp.torch_state(w=cp.torch_tensor("0", numel, size, stride, offset))
    path = _write(tmp_path, "bad.pt", cp.torch_zip(ops, {"0": FLOATS}))
    assert path.stat().st_size < 600
    with pytest.raises(MalformedPickleError, match=rf"{re.escape(str(path))} \(byte \d+\): .*{problem}"):
        read_torch_state(path)


def test_size_one_dimensions_may_have_any_stride(tmp_path):
    ops = cp.torch_state(w=cp.torch_tensor("0", 4, (1, 4, 1), (0, 1, 0)), s=cp.torch_tensor("0", 4, (), ()))
    state = read_torch_state(_write(tmp_path, "ok.pt", cp.torch_zip(ops, {"0": FLOATS})))
    np.testing.assert_array_equal(state["w"].ravel(), np.frombuffer(FLOATS, "<f4"))
    assert state["s"].shape == () and state["s"] == 1.5


def test_storage_shorter_than_its_header_is_refused(tmp_path):
    ops = cp.torch_state(w=cp.torch_tensor("0", 1000, (4,), (1,)))
    path = _write(tmp_path, "short.pt", cp.torch_zip(ops, {"0": FLOATS}))
    with pytest.raises(MalformedPickleError, match=r"short\.pt \(storage 0\): has 4 elements, its header says 1000"):
        read_torch_state(path)


def test_storage_member_inflating_past_the_budget_is_refused_before_reading(tmp_path):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("archive/data.pkl", cp.torch_state(w=cp.torch_tensor("0", 100 << 18, (4,), (1,))))
        with zf.open("archive/data/0", "w") as member:
            for _ in range(100):
                member.write(bytes(1 << 20))  # 100 MB of zeros: about 100 KB deflated
    path = _write(tmp_path, "bomb.pt", out.getvalue())
    assert path.stat().st_size < 200_000
    with pytest.raises(BudgetError, match=r"bomb\.pt \(storage 0\): decoded bytes .* is 104,857,\d+, over the limit"):
        read_torch_state(path)


def test_nesting_200k_levels_is_refused_not_a_recursion_error(tmp_path):
    depth = 200_000
    ops = cp.PROTO2 + (cp.EMPTY_DICT + cp.text("state_dict")) * depth + cp.EMPTY_DICT + cp.SETITEM * depth + cp.STOP
    path = _write(tmp_path, "deep.pt", cp.torch_zip(ops, {}))
    with pytest.raises(BudgetError, match=rf"{re.escape(str(path))} \(byte \d+\): nesting depth is 101, over the "
                                          "limit of 100"):
        read_torch_state(path)


def test_build_on_a_storage_marker_is_refused_and_later_reads_are_unchanged(tmp_path):
    steer = cp.glob("torch", "FloatStorage") + cp.EMPTY_DICT + cp.text("dtype") + cp.text("float64") + cp.SETITEM
    ops = cp.PROTO2 + steer + cp.BUILD + b"0" + cp.torch_state(w=cp.torch_tensor("0", 2, (2,), (1,)))[2:]
    path = _write(tmp_path, "steer.pt", cp.torch_zip(ops, {"0": FLOATS[:8]}))
    with pytest.raises(MalformedPickleError, match=r"steer\.pt \(byte \d+\): BUILD on a PickleGlobal"):
        read_torch_state(path)
    expected = np.load(FIXTURES / "tensors_expected.npz")
    for name in ("tensors_zip.pt", "tensors_legacy.pt"):
        state = read_torch_state(FIXTURES / name)
        for key in expected.files:
            assert state[key].dtype == expected[key].dtype, key
            np.testing.assert_array_equal(state[key], expected[key])


def test_convert_command_reports_one_line_and_exits_2(tmp_path, capsys):
    from paddle_pfc.cli.convert import main

    path = _write(tmp_path, "bad.pt", cp.torch_zip(cp.torch_state(w=cp.torch_tensor("0", 1, (1 << 28,), (0,))),
                                                    {"0": FLOATS[:4]}))
    assert main([str(path), "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}") and "a stride of 0" in err and err.count("\n") == 1


def _damaged_zip(kind: str) -> bytes:
    """torch's zip fixture with one damage zipfile itself raises on (found by tests/fuzz)."""
    data = bytearray((FIXTURES / "tensors_zip.pt").read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        info = zf.getinfo("tensors_zip/byteorder")
    central = data.index(b"tensors_zip/byteorder", data.index(b"PK\x01\x02")) - 46
    if kind == "crc":  # the member's bytes changed, its recorded CRC-32 not
        name_length, extra_length = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
        start = info.header_offset + 30 + name_length + extra_length
        assert data[start:start + len(b"little")] == b"little"
        data[start:start + len(b"little")] = b"big\0\0\0"
    elif kind == "local header":  # its local header's signature damaged
        data[info.header_offset:info.header_offset + 4] = b"PK\0\0"
    else:  # its name flagged UTF-8 in the central directory, but not UTF-8
        data[central + 8] |= 0x08
        data[central + 46:central + 46 + 4] = b"\xff\xff\xff\xff"
    return bytes(data)


@pytest.mark.parametrize("kind, problem", [
    ("crc", r"byteorder or data.pkl cannot be read \(BadZipFile: Bad CRC-32"),
    ("local header", r"byteorder or data.pkl cannot be read \(BadZipFile: Bad magic number"),
    ("name", r"not a readable torch zip file \(.*utf-8"),
])
def test_zip_damage_zipfile_raises_on_is_refused_naming_the_file(tmp_path, kind, problem):
    path = _write(tmp_path, "damaged.pt", _damaged_zip(kind))
    with pytest.raises(MalformedPickleError, match=re.escape(str(path)) + ".*" + problem):
        read_torch_state(path)
