"""paddle_pfc.utils.atomic: a file is replaced whole or left as it was."""
import pytest

from paddle_pfc.utils.atomic import atomic_write, write_bytes_atomic, write_text_atomic


def test_writes_replace_the_file_whole(tmp_path):
    target = tmp_path / "meta.json"
    write_text_atomic(target, "old\n")
    write_text_atomic(target, "new\n")
    assert target.read_text() == "new\n"
    write_bytes_atomic(target, b"\x00\x01")
    assert target.read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["meta.json"]  # no temporary left


def test_an_error_while_writing_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "state.bin"
    target.write_bytes(b"complete")
    with pytest.raises(RuntimeError, match="disk gone"):
        with atomic_write(target, "wb") as handle:
            handle.write(b"half")
            raise RuntimeError("disk gone")
    assert target.read_bytes() == b"complete"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.bin"]


def test_only_write_modes(tmp_path):
    with pytest.raises(ValueError, match="mode must be 'w' or 'wb'"):
        with atomic_write(tmp_path / "x", "a"):
            pass
