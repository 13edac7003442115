"""Byte-level mutations of a valid file: bit flips, truncations, big integers written over integer
positions (binary or decimal text), duplicated / expanded / deleted chunks, random splices.

Every mutation takes a ``random.Random`` and the bytes and returns new bytes, so a case is
reproducible from its seed.
"""
from __future__ import annotations

import random
import struct

#: What an attacker writes into a length, count, offset or shape.
BIG_NUMBERS = (2 ** 31, 2 ** 31 - 1, 2 ** 32 - 1, 2 ** 63 - 1, 2 ** 64 - 1, -1, -(2 ** 31), 0, 10 ** 12)
BIG_TEXT = (b"2147483648", b"9223372036854775808", b"-1", b"1e308", b"nan", b"inf", b"99999999999999999999",
            b"0", b"-9223372036854775809")


def flip(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if out:
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[:rng.randrange(len(data))] if data else data


def _aligned_position(rng: random.Random, data: bytes, width: int) -> int:
    if len(data) <= width:
        return 0
    position = rng.randrange(len(data) - width)
    return position - position % width if rng.random() < 0.5 else position


def big_binary(rng: random.Random, data: bytes) -> bytes:
    """A big (or negative) 4- or 8-byte integer, little or big endian, over a random position."""
    value = rng.choice(BIG_NUMBERS)
    width, order = rng.choice((4, 8)), rng.choice("<>")
    packed = struct.pack(order + ("Q" if width == 8 else "I"), value % 2 ** (8 * width))  # -1 as all ones
    position = _aligned_position(rng, data, width)
    return data[:position] + packed + data[position + width:]


def big_text(rng: random.Random, data: bytes) -> bytes:
    """A decimal number of a text format replaced by a big (or odd) one."""
    digits = [i for i in range(len(data)) if data[i:i + 1].isdigit() and (i == 0 or not data[i - 1:i].isdigit())]
    if not digits:
        return data + rng.choice(BIG_TEXT)
    start = rng.choice(digits)
    end = start
    while end < len(data) and (data[end:end + 1].isdigit() or data[end:end + 1] == b"."):
        end += 1
    return data[:start] + rng.choice(BIG_TEXT) + data[end:]


def duplicate(rng: random.Random, data: bytes) -> bytes:
    """A chunk repeated (up to 64 times) in place, or copied elsewhere."""
    if not data:
        return data
    start = rng.randrange(len(data))
    chunk = data[start:start + rng.randint(1, 256)]
    where = start if rng.random() < 0.5 else rng.randrange(len(data))
    return data[:where] + chunk * rng.choice((1, 2, 8, 64)) + data[where:]


def delete(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return data
    start = rng.randrange(len(data))
    return data[:start] + data[start + rng.randint(1, 64):]


def splice(rng: random.Random, data: bytes) -> bytes:
    """Random bytes over (or into) a random position."""
    noise = bytes(rng.randrange(256) for _ in range(rng.randint(1, 32)))
    position = rng.randrange(len(data) + 1)
    cut = len(noise) if rng.random() < 0.5 else 0
    return data[:position] + noise + data[position + cut:]


BINARY = (flip, truncate, big_binary, duplicate, delete, splice)
TEXT = (flip, truncate, big_text, duplicate, delete, splice)


def mutate(rng: random.Random, data: bytes, text: bool = False) -> bytes:
    """``data`` after one to three mutations of the binary (or text) set."""
    for _ in range(rng.choice((1, 1, 2, 3))):
        data = rng.choice(TEXT if text else BINARY)(rng, data)
    return data
