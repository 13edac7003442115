"""The width and height an encoded image declares, read from its header without decoding it.

JPEG (the first start-of-frame segment), PNG (``IHDR``) and BMP (``BITMAPINFOHEADER``); anything
else is ``None``. A decoder allocates what the header declares, so a caller compares it with a
pixel budget before decoding.
"""
from __future__ import annotations

import struct

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# start-of-frame markers (baseline, extended, progressive, lossless; Huffman and arithmetic)
_JPEG_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
_JPEG_STANDALONE = {0x01, *range(0xD0, 0xD9)}  # TEM, RSTn, SOI: no length field


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in _JPEG_STANDALONE:
            i += 2
            continue
        if marker in _JPEG_SOF:
            if i + 9 > len(data):
                return None
            height, width = struct.unpack(">HH", data[i + 5:i + 9])
            return width, height
        if marker in (0xD9, 0xDA):  # end of image, start of scan: no frame header before the data
            return None
        i += 2 + struct.unpack(">H", data[i + 2:i + 4])[0]
    return None


def image_size(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` declared by the JPEG, PNG or BMP header of ``data``; ``None`` for another
    format or a header that is cut off."""
    if data[:2] == b"\xff\xd8":
        return _jpeg_size(data)
    if data[:8] == _PNG_SIGNATURE and data[12:16] == b"IHDR" and len(data) >= 24:
        return struct.unpack(">II", data[16:24])
    if data[:2] == b"BM" and len(data) >= 22 and data[14:18] == b"\x0c\x00\x00\x00":  # BITMAPCOREHEADER
        return struct.unpack("<HH", data[18:22])
    if data[:2] == b"BM" and len(data) >= 26:
        width, height = struct.unpack("<ii", data[18:26])
        return abs(width), abs(height)
    return None
