"""Image bytes the tests write: a real PNG made by Pillow, and a decompression bomb."""
from __future__ import annotations

import io
import struct
import zlib

from PIL import Image


def png(size: tuple[int, int] = (8, 6), colour: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, format="PNG")
    return out.getvalue()


def bomb() -> bytes:
    """A valid PNG header claiming 100,000 x 100,000 pixels, with almost no data."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))
    header = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b""))
