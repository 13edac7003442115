"""paddle_pfc.utils.safe_pickle / pdparams: arrays and containers read back exactly; a payload
is refused and runs nothing."""
from __future__ import annotations

import collections
import os
import pickle
import re
import subprocess
import sys

import numpy as np
import pytest

from paddle_pfc.utils.pdparams import load_pdparams
from paddle_pfc.utils.safe_pickle import (
    ARRAY_GLOBALS,
    MalformedPickleError,
    UnsafePickleError,
    load_file,
    restricted_load,
)


class _Payload:
    """Unpickling it would create ``marker`` (what an attacker's ``__reduce__`` does)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _arrays() -> dict:
    rng = np.random.default_rng(0)
    return {
        "w": rng.standard_normal((3, 4)).astype(np.float32),
        "fortran": np.asfortranarray(rng.standard_normal((5, 2))),
        "i64": np.arange(7, dtype=np.int64),
        "bits": np.array([True, False, True]),
        "half": rng.standard_normal(6).astype(np.float16),
        "empty": np.zeros((0, 3), np.float32),
        "scalar": np.float32(2.5),
    }


@pytest.mark.parametrize("protocol", range(0, pickle.HIGHEST_PROTOCOL + 1))
def test_arrays_and_containers_round_trip(protocol):
    obj = collections.OrderedDict(arrays=_arrays(), items=[b"\x00\xffjpeg", (1, 2.0, "x", None, True)],
                                  nested={"set": {1, 2}, "frozen": frozenset({3})})
    back = restricted_load(pickle.dumps(obj, protocol=protocol), source="mem")
    assert type(back) is collections.OrderedDict
    for key, value in obj["arrays"].items():
        assert back["arrays"][key].dtype == value.dtype
        np.testing.assert_array_equal(back["arrays"][key], value)
    assert back["items"] == obj["items"] and back["nested"] == obj["nested"]


def test_object_array_of_bytes():
    obj = np.array([b"ab", b"cde"], dtype=object)
    back = restricted_load(pickle.dumps(obj, protocol=2), source="mem")
    assert list(back) == [b"ab", b"cde"]


@pytest.mark.parametrize("protocol", [0, 2, 4, 5])
def test_payload_is_refused_and_runs_nothing(tmp_path, protocol):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps({"w": np.ones(2), "x": _Payload(str(marker))}, protocol=protocol))
    with pytest.raises(UnsafePickleError, match=r"evil\.pkl.*(posix|os)\.system"):
        load_file(path)
    assert not marker.exists()
    # The same bytes do run code through plain pickle: the test would see a payload that works.
    pickle.loads(path.read_bytes())
    assert marker.exists()


def test_numpy_subtype_and_object_buffers_are_refused():
    masked = np.ma.masked_array([1.0, 2.0], mask=[0, 1])
    with pytest.raises(UnsafePickleError, match="numpy.ma"):
        restricted_load(pickle.dumps(masked, protocol=2), source="masked")


def test_truncated_and_foreign_files_name_the_file(tmp_path):
    path = tmp_path / "cut.pkl"
    path.write_bytes(pickle.dumps(_arrays(), protocol=4)[:-20])
    with pytest.raises(MalformedPickleError, match=r"cut\.pkl"):
        load_file(path)
    with pytest.raises(MalformedPickleError, match=r"missing\.pkl"):
        load_file(tmp_path / "missing.pkl")
    with pytest.raises(MalformedPickleError, match="mem"):
        restricted_load(b"PK\x03\x04 not a pickle", source="mem")


def test_allow_list_is_exact():
    assert ("builtins", "eval") not in ARRAY_GLOBALS and ("os", "system") not in ARRAY_GLOBALS
    with pytest.raises(UnsafePickleError, match="builtins.getattr"):
        restricted_load(b"cbuiltins\ngetattr\n.", source="mem")


_PADDLE_SAVE = r"""
import sys, numpy as np, paddle
paddle.disable_static()
layer = paddle.nn.Sequential(paddle.nn.Linear(4, 3), paddle.nn.BatchNorm1D(3), paddle.nn.PReLU(3))
with paddle.no_grad():
    for p in layer.parameters():
        p.set_value(paddle.randn(p.shape))
paddle.save(layer.state_dict(), sys.argv[1] + "/dygraph.pdparams")
paddle.save(layer.state_dict(), sys.argv[1] + "/p2.pdparams", protocol=2)
paddle.save({"nested": {"t": paddle.to_tensor([1.0, 2.0])}}, sys.argv[1] + "/nested.pdparams")
np.savez(sys.argv[1] + "/expected.npz", **{k: v.numpy() for k, v in layer.state_dict().items()})
"""


def test_pdparams_written_by_paddle(tmp_path):
    subprocess.run([sys.executable, "-c", _PADDLE_SAVE, str(tmp_path)], check=True, capture_output=True)
    expected = dict(np.load(tmp_path / "expected.npz"))
    for name in ("dygraph.pdparams", "p2.pdparams"):
        state = load_pdparams(tmp_path / name)
        assert sorted(state) == sorted(expected)
        for key, value in expected.items():
            np.testing.assert_array_equal(state[key], value)
    with pytest.raises(MalformedPickleError, match=r"nested\.pdparams.*'nested'"):
        load_pdparams(tmp_path / "nested.pdparams")


def test_pdparams_big_parameter_slices(tmp_path):
    whole = np.arange(12, dtype=np.float32).reshape(3, 4)
    flat = whole.ravel()
    saved = {"small": np.ones(2, np.float32), "big@@.0": flat[:5], "big@@.1": flat[5:],
             "UnpackBigParamInfor@@": {"big": {"OriginShape": (3, 4), "slices": ["big@@.0", "big@@.1"]}},
             "StructuredToParameterName@@": {"small": "p_0", "big": "p_1"}}
    path = tmp_path / "sliced.pdparams"
    path.write_bytes(pickle.dumps(saved, protocol=2))
    state = load_pdparams(path)
    assert sorted(state) == ["big", "small"]
    np.testing.assert_array_equal(state["big"], whole)


def test_pdparams_payload_refused(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pdparams"
    path.write_bytes(pickle.dumps({"w": np.ones(2), "b": _Payload(str(marker))}, protocol=2))
    with pytest.raises(UnsafePickleError, match=r"evil\.pdparams"):
        load_pdparams(path)
    assert not marker.exists()


# ------------------------------------------------------------------------------ crafted files
# Each file below declares something pickle.dumps never writes; see tests/helpers/crafted_pickles.py.
from helpers import crafted_pickles as cp  # noqa: E402
from paddle_pfc.utils.decode_budget import LIMIT_ENV  # noqa: E402
from paddle_pfc.utils.errors import BudgetError, InputDataError  # noqa: E402

_READ_AND_USE = r"""
import sys
from paddle_pfc.utils.errors import InputDataError
from paddle_pfc.utils.safe_pickle import load_file
try:
    state = load_file(sys.argv[1])
except InputDataError as error:
    print(error)
    sys.exit(3)
print(repr(state))  # numpy follows each element's 8 bytes as a PyObject*: SIGSEGV
"""


def test_object_field_dtype_over_raw_bytes_is_refused(tmp_path):
    path = tmp_path / "v9.pkl"
    path.write_bytes(cp.PROTO2 + cp.EMPTY_DICT + cp.text("w") + cp.object_field_array() + cp.SETITEM + cp.STOP)
    cp.assert_is_pickle(path.read_bytes())
    with pytest.raises(MalformedPickleError, match=rf"{re.escape(str(path))} \(byte \d+\): numpy dtype 'V9'"):
        load_file(path)
    done = subprocess.run([sys.executable, "-c", _READ_AND_USE, str(path)], capture_output=True, text=True)
    assert done.returncode == 3, (done.returncode, done.stderr[-500:])
    assert f"{path} (byte" in done.stdout and "V9" in done.stdout


@pytest.mark.parametrize("state, problem", [
    (cp.tup(cp.num(3), cp.text("<"), cp.NONE, cp.tup(cp.text("a")), cp.EMPTY_DICT, cp.num(4), cp.num(1), cp.num(0)),
     "with state"),  # field names on a plain dtype
    (cp.plain_dtype_state(flags=63), "with state"),  # object flags on a float
    (cp.plain_dtype_state(byteorder="x"), "with state"),
])
def test_dtype_state_other_than_a_plain_dtype_is_refused(state, problem):
    data = cp.PROTO2 + cp.array((2,), cp.dtype("f4", state), bytes(8)) + cp.STOP
    with pytest.raises(MalformedPickleError, match=problem):
        restricted_load(data, source="mem")


def test_array_without_data_and_array_with_wrong_byte_count_are_refused():
    with pytest.raises(MalformedPickleError, match=r"mem \(byte \d+\): a numpy array used before its data"):
        restricted_load(cp.PROTO2 + cp.EMPTY_LIST + cp.dataless_array(1 << 30) + cp.APPEND + cp.STOP, source="mem")
    f4 = cp.dtype("f4", cp.plain_dtype_state())
    with pytest.raises(MalformedPickleError, match=r"needs 4,000,000,000 bytes; the file gives 4"):
        restricted_load(cp.PROTO2 + cp.array((10 ** 9,), f4, bytes(4)) + cp.STOP, source="mem")


def test_build_on_anything_but_an_array_or_dtype_is_refused():
    ordered = cp.glob("collections", "OrderedDict") + cp.EMPTY_TUPLE + cp.REDUCE
    for target in (cp.EMPTY_LIST, cp.glob("numpy", "ndarray"), ordered + cp.EMPTY_LIST):
        with pytest.raises(MalformedPickleError, match="BUILD on a"):
            restricted_load(cp.PROTO2 + target + cp.EMPTY_DICT + cp.BUILD + cp.STOP, source="mem")


def test_small_pickles_that_ask_for_gigabytes_are_refused():
    with pytest.raises(MalformedPickleError, match=r"bytearray\(\) of a int"):
        restricted_load(cp.bytearray_bomb(10 ** 9), source="mem")
    assert len(cp.bytearray_bomb(10 ** 9)) < 40
    with pytest.raises(MalformedPickleError, match=r"declares 4,294,967,295 bytes, only 0 are left"):
        restricted_load(cp.PROTO2 + b"B\xff\xff\xff\xff", source="mem")


def test_an_array_referenced_many_times_counts_each_time(tmp_path, monkeypatch):
    image = cp.array((1 << 20,), cp.dtype("u1", cp.plain_dtype_state("|")), bytes(1 << 20))
    data = cp.PROTO2 + cp.EMPTY_LIST + cp.MARK + image + cp.put(0) + cp.get(0) * 99 + cp.APPENDS + cp.STOP
    path = tmp_path / "shared.pkl"
    path.write_bytes(data)
    with pytest.raises(BudgetError) as refused:
        load_file(path)
    error = refused.value
    assert error.path == str(path) and error.entry.startswith("entry [") and error.limit == 4 * len(data) + (64 << 20)
    assert error.limit < error.declared <= 100 << 20 and f"over the limit of {error.limit:,}" in str(error)
    monkeypatch.setenv(LIMIT_ENV, "200M")  # the option that raises the limit
    assert len(load_file(path)) == 100


def test_nesting_deeper_than_any_format_is_refused():
    with pytest.raises(BudgetError, match=r"mem \(byte \d+\): nesting depth is 101, over the limit of 100"):
        restricted_load(cp.nested_lists(200_000), source="mem")
    deep_tuple = cp.PROTO2 + cp.EMPTY_TUPLE + b"\x85" * 200_000 + cp.STOP  # hashing it would recurse in C
    with pytest.raises(BudgetError, match="nesting depth"):
        restricted_load(deep_tuple, source="mem")
    assert len(restricted_load(cp.nested_lists(50), source="mem")) == 1


def test_pickle_errors_are_input_data_errors_naming_the_file(tmp_path):
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps({"x": _Payload(str(tmp_path / "m"))}, protocol=2))
    with pytest.raises(InputDataError) as refused:
        load_file(path)
    assert isinstance(refused.value, UnsafePickleError) and refused.value.path == str(path)
    with pytest.raises(InputDataError, match=r"cut\.pkl \(byte \d+\): not a readable pickle"):
        restricted_load(pickle.dumps([1, 2, 3], protocol=2)[:-3], source=str(tmp_path / "cut.pkl"))


@pytest.mark.parametrize("protocol", [0, 2, 3, 5])
def test_every_numeric_dtype_and_byte_order_reads_bit_exactly(protocol):
    rng = np.random.default_rng(1)
    arrays = {code: rng.integers(0, 256, 64, np.uint8).view(code).reshape(2, -1)
              for code in ("<i2", ">i4", "<u8", ">u2", "<f2", ">f4", "<f8", "<c8", ">c16", "i1", "u1")}
    arrays["bool"] = rng.integers(0, 2, 5).astype(bool)
    arrays["fortran"] = np.asfortranarray(rng.standard_normal((3, 4)))
    back = restricted_load(pickle.dumps(arrays, protocol=protocol), source="mem")
    for key, value in arrays.items():
        assert back[key].dtype == value.dtype and back[key].shape == value.shape, key
        assert back[key].tobytes(order="A") == value.tobytes(order="A"), key
        assert back[key].flags.writeable
    assert back["fortran"].flags.f_contiguous


def test_structured_and_object_arrays_are_not_built():
    for value in (np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]), np.zeros(2, "V4"), np.zeros(2, "U3"),
                  np.array([[b"a", b"b"]], dtype=object)):
        with pytest.raises(MalformedPickleError, match="numpy dtype|object array"):
            restricted_load(pickle.dumps(value, protocol=2), source="mem")
