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
    with pytest.raises(StateFileError,
                       match=r"o\.npz: member 'x\.npy' holds objects \(dtype object\), which are never unpickled"):
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


def _npy_header(dtype, shape) -> bytes:
    import io

    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": np.dtype(dtype).str, "fortran_order": False,
                                                  "shape": shape})
    return buffer.getvalue()


def _bomb(path, size: int) -> int:
    """A genuine state plus a deflated member ``extra.npy`` of ``size`` zero bytes (a uint8
    array); the bytes the file's members declare."""
    path.write_bytes(state_bytes({"w": np.ones(4, np.float32)}))
    header = _npy_header(np.uint8, (size,))
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as z, \
            z.open("extra.npy", "w", force_zip64=True) as f:
        f.write(header)
        chunk = bytes(1 << 24)
        for _ in range(size // len(chunk)):
            f.write(chunk)
    with zipfile.ZipFile(path) as z:
        return sum(info.file_size for info in z.infolist())


def test_a_deflated_bomb_member_is_refused_before_it_is_decompressed(tmp_path):
    """512 MiB of zeros deflate to 0.5 MB: refused by its declared size, nothing inflated (a
    subprocess's peak memory grows by far less)."""
    import subprocess
    import sys

    path = tmp_path / "bomb.npz"
    declared = _bomb(path, 512 << 20)
    assert path.stat().st_size < 2 << 20
    code = ("import resource\nfrom paddle_pfc.utils.npz_state import load_state, StateFileError\n"
            "from paddle_pfc.utils.errors import BudgetError\n"
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            f"try:\n    load_state({str(path)!r})\nexcept BudgetError as e:\n    print(e)\n"
            "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    message, grown_mib = proc.stdout.splitlines()
    assert message.startswith(f"{path}: the uncompressed size its arrays declare is {declared:,}, over the "
                              "limit of 67,108,864")
    assert int(grown_mib) < 64


def test_member_headers_and_names_are_checked_before_reading(tmp_path):
    path = tmp_path / "s.npz"
    path.write_bytes(state_bytes({"w": np.ones(4, np.float32)}))
    with zipfile.ZipFile(path, "a") as z:  # a header that claims more than the member holds
        z.writestr("big.npy", _npy_header(np.float32, (1 << 20, 1 << 10)) + bytes(16))
    with pytest.raises(StateFileError, match=r"member 'big\.npy' declares 144 bytes, its \.npy header a "
                                             r"\[1048576, 1024\] float32 array of 4,294,967,424 bytes"):
        load_state(path)
    path.write_bytes(state_bytes({"w": np.ones(4, np.float32)}))
    with zipfile.ZipFile(path, "a") as z:
        z.writestr("notes.txt", b"hello")
    with pytest.raises(StateFileError, match=r"member 'notes\.txt' is not an array"):
        load_state(path)
    path.write_bytes(state_bytes({"w": np.ones(4, np.float32), "extra": np.zeros(2)}))
    with pytest.raises(StateFileError, match=r"s\.npz: unexpected entry 'extra'"):
        load_state(path, expected={"w"})
    assert sorted(load_state(path, expected={"w", "extra"})) == ["extra", "w"]
