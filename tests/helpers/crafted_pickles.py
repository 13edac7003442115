"""Crafted pickles, written opcode by opcode: what a file can declare that ``pickle.dumps`` never
writes (a dtype with an object field over raw bytes, an array without data referenced many times,
a tensor whose stride repeats one element, nesting far deeper than any format)."""
from __future__ import annotations

import io
import struct
import zipfile

MARK, TUPLE, REDUCE, BUILD, STOP = b"(", b"t", b"R", b"b", b"."
NONE, TRUE, FALSE, EMPTY_DICT, EMPTY_LIST = b"N", b"\x88", b"\x89", b"}", b"]"
SETITEM, APPEND, APPENDS, EMPTY_TUPLE = b"s", b"a", b"e", b")"
PROTO2 = b"\x80\x02"


def glob(module: str, name: str) -> bytes:
    return b"c" + f"{module}\n{name}\n".encode()


def text(value: str) -> bytes:
    data = value.encode()
    return b"X" + struct.pack("<I", len(data)) + data


def raw(data: bytes) -> bytes:
    return b"B" + struct.pack("<I", len(data)) + data


def num(value: int) -> bytes:
    return b"J" + struct.pack("<i", value)


def tup(*items: bytes) -> bytes:
    return MARK + b"".join(items) + TUPLE


def put(index: int) -> bytes:
    return b"q" + bytes([index])


def get(index: int) -> bytes:
    return b"h" + bytes([index])


def dtype(code: str, state: bytes) -> bytes:
    """``numpy.dtype(code)`` with ``BUILD`` state ``state`` (a pickled tuple)."""
    return glob("numpy", "dtype") + tup(text(code), FALSE, TRUE) + REDUCE + state + BUILD


def plain_dtype_state(byteorder: str = "<", flags: int = 0) -> bytes:
    return tup(num(3), text(byteorder), NONE, NONE, NONE, num(-1), num(-1), num(flags))


def object_field_dtype() -> bytes:
    """A ``V9`` dtype whose field ``f`` is an object at offset 0, its flags 0 (numpy then takes the
    array's raw bytes for ``PyObject*``)."""
    obj = dtype("O8", plain_dtype_state("|", 63))
    fields = EMPTY_DICT + text("f") + tup(obj, num(0)) + SETITEM
    state = tup(num(3), text("|"), NONE, tup(text("f")), fields, num(9), num(1), num(0))
    return dtype("V9", state)


def reconstruct() -> bytes:
    """``_reconstruct(ndarray, (0,), b'b')``: an array waiting for its ``BUILD`` state."""
    return glob("numpy.core.multiarray", "_reconstruct") + tup(glob("numpy", "ndarray"), tup(num(0)),
                                                               raw(b"b")) + REDUCE


def array(shape: tuple[int, ...], dtype_ops: bytes, data: bytes) -> bytes:
    return reconstruct() + tup(num(1), tup(*map(num, shape)), dtype_ops, FALSE, raw(data)) + BUILD


def object_field_array(pointer: int = 0x4141414141414141, count: int = 2) -> bytes:
    """An array of the :func:`object_field_dtype`: each element's 8 bytes a pointer numpy follows."""
    return array((count,), object_field_dtype(), (struct.pack("<Q", pointer) + b"\x00") * count)


def bin_file(images: bytes, issame: bytes) -> bytes:
    """An insightface ``.bin``: the pickled pair ``(images, issame)`` (each already opcodes)."""
    return PROTO2 + tup(images, issame) + STOP


def dataless_array(nbytes: int) -> bytes:
    """``_reconstruct(ndarray, (nbytes,), b'B')`` with no ``BUILD``: an array the file never fills."""
    return glob("numpy.core.multiarray", "_reconstruct") + tup(glob("numpy", "ndarray"), tup(num(nbytes)),
                                                               raw(b"B")) + REDUCE


def shared_dataless_bin(copies: int, nbytes: int = 1 << 30) -> bytes:
    """A ``.bin`` whose image list references one data-less array ``copies`` times."""
    images = EMPTY_LIST + MARK + dataless_array(nbytes) + put(0) + get(0) * (copies - 1) + APPENDS
    return bin_file(images, EMPTY_LIST + MARK + TRUE * (copies // 2) + APPENDS)


def shared_array_bin(nbytes: int, copies: int) -> bytes:
    """A ``.bin`` listing one uint8 array of ``nbytes`` (memoized once) ``copies`` times."""
    image = array((nbytes,), dtype("u1", plain_dtype_state("|")), b"\xff\xd8" + bytes(nbytes - 2))
    images = EMPTY_LIST + MARK + image + put(0) + get(0) * (copies - 1) + APPENDS
    return bin_file(images, EMPTY_LIST + MARK + TRUE * (copies // 2) + APPENDS)


def bytearray_bomb(size: int = 10 ** 9) -> bytes:
    """``bytearray(size)``: a few bytes that ask for ``size`` zero bytes."""
    return PROTO2 + glob("builtins", "bytearray") + tup(b"\x8a" + bytes([5]) + size.to_bytes(5, "little")) + \
        REDUCE + STOP


def nested_lists(depth: int) -> bytes:
    return PROTO2 + EMPTY_LIST * depth + APPEND * (depth - 1) + STOP


def torch_zip(pickle_ops: bytes, storages: dict[str, bytes]) -> bytes:
    """A torch zip file (``archive/data.pkl`` and ``archive/data/<key>``)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("archive/data.pkl", pickle_ops)
        for key, data in storages.items():
            zf.writestr(f"archive/data/{key}", data)
        zf.writestr("archive/version", "3\n")
    return out.getvalue()


def torch_tensor(key: str, numel: int, size: tuple[int, ...], stride: tuple[int, ...], offset: int = 0) -> bytes:
    """``_rebuild_tensor_v2`` of float32 storage ``key`` (``numel`` elements) at ``size``/``stride``."""
    storage = tup(text("storage"), glob("torch", "FloatStorage"), text(key), text("cpu"), num(numel)) + b"Q"
    return glob("torch._utils", "_rebuild_tensor_v2") + tup(
        storage, num(offset), tup(*map(num, size)), tup(*map(num, stride)), FALSE,
        glob("collections", "OrderedDict") + EMPTY_TUPLE + REDUCE) + REDUCE


def torch_state(**tensors: bytes) -> bytes:
    items = b"".join(text(name) + ops for name, ops in tensors.items())
    return PROTO2 + EMPTY_DICT + MARK + items + b"u" + STOP


def assert_is_pickle(data: bytes) -> None:
    """The crafted bytes are a pickle Python itself parses (the opcodes are well formed)."""
    import pickletools

    pickletools.dis(data, out=io.StringIO())

