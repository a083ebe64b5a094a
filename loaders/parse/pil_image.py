"""A PIL image inside a torch.save file (slime/miles `multimodal_inputs`), read without PIL
and without running anything from the file.

PIL pickles an image as `PIL.Image.Image` made empty (NEWOBJ) and given its state by BUILD:
`[info, mode, size, palette, data]`, its raw pixels as `_codecs.encode(text, "latin1")` in
protocol 2.  torch_pickle's allow-list maps that class here, to PilImage, which keeps only a
mode it knows, a size within MAX_PIXELS and the raw bytes (checked against mode x size);
`_codecs.encode` to latin1_bytes, which encodes latin-1 and nothing else.  The image is made
with PIL later, in the server, from those three (loaders.serve.images).
"""
from __future__ import annotations

import zlib

from loaders.parse.images import MAX_PIXELS
from loaders.parse.torch_tensors import PickleRefused

BYTES_PER_PIXEL = {"1": None, "L": 1, "P": 1, "RGB": 3, "RGBA": 4, "CMYK": 4, "YCbCr": 3,
                   "LA": 2, "I;16": 2, "I": 4, "F": 4}


class PilImage:
    """What a pickled PIL image holds: mode, size and raw pixel bytes; nothing runs."""

    __slots__ = ("mode", "size", "data")

    def __setstate__(self, state: object) -> None:
        if not (isinstance(state, list) and len(state) >= 5):
            raise PickleRefused("a PIL image whose state is not [info, mode, size, ...]")
        mode, size, data = state[1], state[2], state[4]
        if mode not in BYTES_PER_PIXEL or not (isinstance(size, tuple) and len(size) == 2
                                               and all(isinstance(n, int) and n > 0
                                                       for n in size)):
            raise PickleRefused(f"a PIL image of mode {str(mode)[:12]!r}, size {str(size)[:24]}")
        if size[0] * size[1] > MAX_PIXELS or not isinstance(data, bytes):
            raise PickleRefused(f"a PIL image of {size[0]} x {size[1]} pixels, or no bytes")
        per = BYTES_PER_PIXEL[mode]
        want = (size[0] + 7) // 8 * size[1] if per is None else per * size[0] * size[1]
        if len(data) != want:
            raise PickleRefused(f"a PIL image whose {len(data)} bytes do not fit {mode} {size}")
        self.mode, self.size, self.data = mode, size, data

    @property
    def pil_state(self) -> tuple[str, tuple[int, int], bytes]:
        return self.mode, self.size, self.data

    def __repr__(self) -> str:  # stable: a record's check (record_check) reads it
        return f"PilImage({self.mode}, {self.size}, crc32={zlib.crc32(self.data):08x})"


def latin1_bytes(text: object, encoding: object = "latin1") -> bytes:
    """_codecs.encode as protocol-2 pickles of bytes use it: latin-1 only."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise PickleRefused("_codecs.encode with anything but a text and latin-1")
    return text.encode("latin-1")
