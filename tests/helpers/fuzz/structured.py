"""Structured hostile inputs, format by format: what a byte flip rarely finds.

* pickles (``.bin``, ``.pdparams``, torch): deep nesting, memo references that share one object
  many times (lists and dicts of dicts: a walk over them is exponential), huge declared sizes
  (``BINBYTES8``, ``BINUNICODE8``, ``LONG4``, ``FRAME``, array shapes), random opcode soups;
* zips (torch, ``.npz``): member sizes declared larger or smaller than stored, deflate bombs,
  tensor geometries (size, stride, offset) at integer limits;
* YAML: alias expansion ("billion laughs"), deep nesting, odd tags, huge numbers;
* ``.rec`` / ``.idx`` and ``label.txt``: lengths, offsets and labels at integer limits.

Each generator takes a ``random.Random`` and returns the bytes of one file.
"""
from __future__ import annotations

import io
import random
import struct
import zipfile

from helpers import crafted_pickles as cp
from helpers.fuzz.mutations import BIG_NUMBERS, BIG_TEXT

PROTO4 = b"\x80\x04"


def long1(value: int) -> bytes:
    """``LONG1``: any Python int (``num`` holds int32 only)."""
    data = value.to_bytes((value.bit_length() + 8) // 8 or 1, "little", signed=True)
    return b"\x8a" + bytes([len(data)]) + data


def _huge_declared(rng: random.Random) -> bytes:
    size = rng.choice((2 ** 31, 2 ** 32 - 1, 2 ** 62, 2 ** 63 - 1, 2 ** 64 - 1))
    opcode = rng.choice((b"\x8e", b"\x8d", b"\x96", b"\x95"))  # BINBYTES8, BINUNICODE8, BYTEARRAY8, FRAME
    if rng.random() < 0.3:
        return b"\x8b" + struct.pack("<I", size % 2 ** 32) + b"\x01" * 8  # LONG4
    if rng.random() < 0.3:
        return b"B" + struct.pack("<I", size % 2 ** 32) + b"abc"  # BINBYTES
    return opcode + struct.pack("<Q", size % 2 ** 64) + b"abc"


def _huge_array(rng: random.Random) -> bytes:
    shape = tuple(rng.choice((0, 1, 2 ** 20, 2 ** 31 - 1)) for _ in range(rng.randint(1, 4)))
    code = rng.choice(("u1", "f4", "f8", "V16", "U8", "O8"))
    ops = cp.reconstruct() + cp.tup(cp.num(1), cp.tup(*map(long1, shape)),
                                    cp.dtype(code, cp.plain_dtype_state("|" if code in ("u1", "V16") else "<")),
                                    cp.FALSE, cp.raw(bytes(rng.randrange(64)))) + cp.BUILD
    return ops


def _shared(rng: random.Random, leaf: bytes, as_dict: bool) -> bytes:
    """``levels`` containers, each holding the one below ``width`` times (memo references)."""
    levels, width = rng.randint(3, 40), rng.randint(2, 10)
    ops = leaf + cp.put(0)
    for level in range(1, min(levels, 250)):
        if as_dict:
            items = b"".join(cp.text(f"k{i}") + cp.get(level - 1) for i in range(width))
            ops += cp.EMPTY_DICT + cp.MARK + items + b"u" + cp.put(level)
        else:
            ops += cp.EMPTY_LIST + cp.MARK + cp.get(level - 1) * width + cp.APPENDS + cp.put(level)
    return ops


def _soup(rng: random.Random) -> bytes:
    alphabet = b"()]}NJKMX\x88\x89\x8a\x8c\x94hqsetuabR.0123456789\x85\x86\x87"
    return bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 80)))


def pickle_value(rng: random.Random) -> bytes:
    """Opcodes pushing one hostile value."""
    kind = rng.randrange(6)
    if kind == 0:
        depth = rng.choice((50, 99, 100, 101, 1000, 100_000))
        return cp.EMPTY_LIST * depth + cp.APPEND * (depth - 1)
    if kind == 1:
        return _huge_declared(rng)
    if kind == 2:
        return _huge_array(rng)
    if kind == 3:
        return _shared(rng, cp.raw(b"\xff\xd8" + bytes(rng.randrange(1, 4096))), as_dict=rng.random() < 0.5)
    if kind == 4:
        return _soup(rng)
    return cp.bytearray_bomb(rng.choice((10 ** 6, 10 ** 9, 2 ** 39)))[2:-1]


def pickle_file(rng: random.Random, wrap: str) -> bytes:
    """A pickle whose payload is :func:`pickle_value`, framed as a ``.bin`` pair, a state dict or bare."""
    value = pickle_value(rng)
    proto = rng.choice((cp.PROTO2, PROTO4))
    if wrap == "bin":
        issame = cp.EMPTY_LIST + cp.MARK + cp.TRUE * rng.randint(0, 3) + cp.APPENDS
        images = cp.EMPTY_LIST + cp.MARK + value + cp.APPENDS
        return proto + cp.tup(images, issame) + cp.STOP
    if wrap == "state":
        return proto + cp.EMPTY_DICT + cp.MARK + cp.text("w") + value + b"u" + cp.STOP
    return proto + value + cp.STOP


def torch_zip_file(rng: random.Random) -> bytes:
    """A torch zip whose tensor geometry, storage size or pickle is hostile."""
    numel = rng.choice((0, 1, 4, 16))
    if rng.random() < 0.6:
        size = tuple(rng.choice((1, 4, 2 ** 31, 2 ** 62)) for _ in range(rng.randint(0, 3)))
        stride = tuple(rng.choice((0, 1, -1, 2 ** 31, 2 ** 62)) for _ in size)
        offset = rng.choice((0, 1, 2 ** 31 - 1, 2 ** 62))
        tensor = torch_tensor("0", numel, size, stride, offset)
        ops = cp.torch_state(w=tensor)
    else:
        ops = pickle_file(rng, "state")
    data = bytes(4 * numel)
    if rng.random() < 0.3:
        return deflate_bomb_zip(rng, ops)
    return resize_members(rng, cp.torch_zip(ops, {"0": data}))


def torch_tensor(key: str, numel: int, size: tuple[int, ...], stride: tuple[int, ...], offset: int) -> bytes:
    """``_rebuild_tensor_v2`` of float32 storage ``key`` with any integers (``LONG1``)."""
    storage = cp.tup(cp.text("storage"), cp.glob("torch", "FloatStorage"), cp.text(key), cp.text("cpu"),
                     long1(numel)) + b"Q"
    return cp.glob("torch._utils", "_rebuild_tensor_v2") + cp.tup(
        storage, long1(offset), cp.tup(*map(long1, size)), cp.tup(*map(long1, stride)), cp.FALSE,
        cp.glob("collections", "OrderedDict") + cp.EMPTY_TUPLE + cp.REDUCE) + cp.REDUCE


def deflate_bomb_zip(rng: random.Random, ops: bytes) -> bytes:
    """A zip whose storage member inflates to far more than the file holds."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("archive/data.pkl", ops)
        zf.writestr("archive/data/0", bytes(rng.choice((1 << 20, 64 << 20))))
    return out.getvalue()


def resize_members(rng: random.Random, data: bytes) -> bytes:
    """A zip with one member's declared sizes (local header or central directory) set to a big number."""
    out = bytearray(data)
    headers = [i for i in range(len(out) - 4) if out[i:i + 4] in (b"PK\x03\x04", b"PK\x01\x02")]
    if not headers:
        return data
    start = rng.choice(headers)
    offsets = (18, 22) if out[start + 2] == 3 else (20, 24)  # compressed / uncompressed size
    value = rng.choice(BIG_NUMBERS) % 2 ** 32
    for offset in rng.sample(offsets, rng.randint(1, 2)):
        out[start + offset:start + offset + 4] = struct.pack("<I", value)
    return bytes(out)


def npz_file(rng: random.Random) -> bytes:
    """An ``.npz`` whose ``.npy`` header declares a hostile shape or dtype, or whose zip lies."""
    shape = tuple(rng.choice((0, 3, 2 ** 31, 2 ** 62, -1)) for _ in range(rng.randint(0, 3)))
    descr = rng.choice(("<f4", "|u1", "|O", "<U1000000000", "|V0", "<f8"))
    header = f"{{'descr': '{descr}', 'fortran_order': {rng.choice(('False', 'True'))}, 'shape': {shape!r}, }}"
    header = header.ljust(118) + "\n"
    npy = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + bytes(rng.randrange(64))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", rng.choice((zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED))) as zf:
        zf.writestr("w.npy", npy)
    data = out.getvalue()
    return resize_members(rng, data) if rng.random() < 0.3 else data


def yaml_text(rng: random.Random) -> bytes:
    kind = rng.randrange(5)
    if kind == 0:  # alias expansion
        levels, width = rng.randint(5, 12), rng.randint(5, 10)
        lines = ["a0: &a0 [x]"] + [f"a{i}: &a{i} [{', '.join(f'*a{i - 1}' for _ in range(width))}]"
                                   for i in range(1, levels)]
        section = rng.choice(("train", "model", "data", "extra"))
        return ("\n".join(lines) + f"\n{section}: {{lr: *a{levels - 1}}}\n").encode()
    if kind == 1:  # deep nesting
        depth = rng.choice((100, 1000, 10_000, 100_000))
        return (b"train: " + b"[" * depth + b"]" * depth + b"\n") if rng.random() < 0.5 else \
            (b"train:\n" + b"".join(b" " * i + b"k:\n" for i in range(1, min(depth, 3000))))
    if kind == 2:  # odd tags
        tag = rng.choice(("!!python/object/apply:os.system", "!!binary", "!!timestamp", "!!set", "!!omap",
                          "!!python/name:os.system", "!custom"))
        return f"train:\n  lr: {tag} 'AAAA'\n".encode()
    if kind == 3:  # numbers
        number = rng.choice(BIG_TEXT).decode()
        key = rng.choice(("train.lr", "train.epochs", "train.batch_size", "data.num_classes", "model.embedding_size"))
        section, name = key.split(".")
        return f"{section}:\n  {name}: {number}\ndata:\n  kind: synthetic\n  num_classes: 10\n".encode()
    return f"_base_: {rng.choice(('/dev/zero', '/proc/self/mem', 'self.yaml', '', '../' * 40 + 'x.yaml'))}\n".encode()


def idx_and_rec(rng: random.Random, rec: bytes, idx: bytes) -> tuple[bytes, bytes]:
    """A ``.rec`` whose record lengths, or a ``.idx`` whose keys / offsets, are at integer limits."""
    if rng.random() < 0.5:
        lines = idx.decode().splitlines()
        line = rng.randrange(len(lines))
        key, offset = lines[line].split("\t")
        value = str(rng.choice(BIG_NUMBERS))
        lines[line] = f"{value}\t{offset}" if rng.random() < 0.5 else f"{key}\t{value}"
        return rec, ("\n".join(lines) + "\n").encode()
    out = bytearray(rec)
    magics = [i for i in range(0, len(out) - 8, 4) if out[i:i + 4] == struct.pack("<I", 0xCED7230A)]
    start = rng.choice(magics)
    length = rng.choice((2 ** 29 - 1, 2 ** 29 - 8, 0, 1, 12))
    cflag = rng.choice((0, 1, 2, 3))
    out[start + 4:start + 8] = struct.pack("<I", (cflag << 29) | length)
    if rng.random() < 0.5 and start + 28 <= len(out):  # IRHeader: flag, label, id, id2 after the frame
        out[start + 8:start + 12] = struct.pack("<I", rng.choice(BIG_NUMBERS) % 2 ** 32)
    return bytes(out), idx


def label_text(rng: random.Random, text: bytes) -> bytes:
    """``label.txt`` with a hostile line: a huge label, a path out of the root, a NUL, a long line."""
    line = rng.choice((f"a/0.jpg\t{rng.choice(BIG_TEXT).decode()}", "../../../../etc/passwd\t0", "/etc/passwd\t0",
                       "a/0.jpg\x00\t0", "a/" + "x" * 5000 + ".jpg\t0", "a/0.jpg\t0\t1", "\t", "a/0.jpg\t\u0661",
                       "a/0.jpg\t" + "9" * 5000, "a/../a/0.jpg\t1", "a/0.jpg " * 200 + "\t0"))
    return text + line.encode("utf-8", "surrogatepass") + b"\n"
