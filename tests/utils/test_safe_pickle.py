"""paddle_pfc.utils.safe_pickle / pdparams: arrays and containers read back exactly; a payload
is refused and runs nothing."""
from __future__ import annotations

import collections
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

from paddle_pfc.utils.pdparams import load_pdparams
from paddle_pfc.utils.safe_pickle import (ARRAY_GLOBALS, MalformedPickleError, UnsafePickleError,
                                          load_file, restricted_load)


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
