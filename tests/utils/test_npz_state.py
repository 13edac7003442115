"""paddle_pfc.utils.npz_state: any name and the dtypes a checkpoint holds round-trip exactly, with
no pickle on either side; damaged files are named."""
from __future__ import annotations

import zipfile

import numpy as np
import pytest

from paddle_pfc.utils.npz_state import NAMES_KEY, StateFileError, load_state, state_bytes


def test_any_name_and_dtype_round_trips(tmp_path):
    rng = np.random.default_rng(0)
    state = {
        "layers.0.conv.weight": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
        "bn._variance": rng.uniform(0.5, 1.5, 4).astype(np.float32),
        "loss_scaling@scale": np.array([1024.0], np.float32),
        "momentum/velocity 0": rng.standard_normal(5),                  # '/' and a space
        "__dunder": np.arange(3, dtype=np.int64),                        # looks like our own keys
        "ünïcode": np.array([True, False]),
        "bf16 bits": np.array([0x3F80, 0x7FC0, 0xFF80], np.uint16),     # bfloat16 as Paddle hands it over
        "": np.zeros((0, 2), np.float16),
    }
    path = tmp_path / "s.npz"
    path.write_bytes(state_bytes(state))
    back = load_state(path)
    assert sorted(back) == sorted(state)
    for key, value in state.items():
        assert back[key].dtype == value.dtype and back[key].shape == value.shape, key
        np.testing.assert_array_equal(back[key], value, err_msg=key)
    # plain names are visible to numpy itself; only the others go through the names table
    with np.load(path, allow_pickle=False) as npz:
        assert "layers.0.conv.weight" in npz.files and NAMES_KEY in npz.files
        assert sorted(npz[NAMES_KEY].tolist()) == sorted(["momentum/velocity 0", "__dunder", "ünïcode",
                                                          "bf16 bits", ""])


def test_a_plain_np_savez_file_reads_as_written(tmp_path):
    np.savez(tmp_path / "w.npz", **{"a.weight": np.ones(3, np.float32), "b": np.arange(2)})
    back = load_state(tmp_path / "w.npz")
    assert sorted(back) == ["a.weight", "b"] and back["a.weight"].tolist() == [1.0, 1.0, 1.0]


def test_objects_are_refused_on_writing_and_never_unpickled_on_reading(tmp_path):
    with pytest.raises(StateFileError, match="entry 'x' has dtype object"):
        state_bytes({"x": np.array([object()], dtype=object)})
    np.savez(tmp_path / "o.npz", x=np.array([{"a": 1}], dtype=object))  # np.savez pickles it
    with pytest.raises(StateFileError, match=r"o\.npz: not a readable \.npz state .*allow_pickle"):
        load_state(tmp_path / "o.npz")


def test_damaged_files_are_named(tmp_path):
    path = tmp_path / "s.npz"
    data = state_bytes({"w": np.ones(1000, np.float32)})
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(StateFileError, match=r"s\.npz: not a readable \.npz state"):
        load_state(path)
    np.save(tmp_path / "one.npy", np.ones(2))
    (tmp_path / "one.npy").rename(tmp_path / "one.npz")
    with pytest.raises(StateFileError, match="a single .npy array"):
        load_state(tmp_path / "one.npz")
    with zipfile.ZipFile(tmp_path / "t.npz", "w") as z:  # a names table without its array
        z.writestr(f"{NAMES_KEY}.npy", _npy(np.array(["odd name"])))
    with pytest.raises(StateFileError, match=r"names 'odd name' but __key0__ is missing"):
        load_state(tmp_path / "t.npz")


def _npy(array: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()
