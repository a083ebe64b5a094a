"""Images in a sample's prompt (vision-language RL): where a record keeps them, and each one
decoded in the server and re-encoded as PNG, never linked.

Where: the forks' `img_path` (a path, or a list of them), `images` / `image` (a data URL, a
path, raw bytes, or slime's pickled PIL image, loaders.parse.pil_image), and OpenAI-style
message parts (`{"type": "image_url", "image_url": {"url": ...}}`).  A path is read only
inside the dump dir (no link out of it); a remote URL is never fetched: it is shown as
text.  Pillow decodes only the raster formats in FORMATS, after checking the header's
pixel count against MAX_PIXELS and the bytes against MAX_IMAGE_BYTES: a bomb, a truncated
file or an SVG is a problem with a placeholder, never a crash.
"""
from __future__ import annotations

import base64
import binascii
import os
from dataclasses import dataclass
from pathlib import Path

from loaders.schema import IMAGE_KEYS

FORMATS = ("PNG", "JPEG", "GIF", "WEBP", "BMP")  # raster formats Pillow may decode here
MAX_IMAGE_BYTES = 32 << 20  # one encoded image
MAX_PIXELS = 40_000_000  # about 6,300 x 6,300: past it, decoding alone costs too much
MAX_IMAGES = 16  # per sample: a table row shows its first, the Sample page these


@dataclass(frozen=True)
class ImageRef:
    kind: str  # "path", "data" (a data URL), "bytes", "pil" (mode, size, raw) or "url"
    value: object


@dataclass(frozen=True)
class Decoded:
    png: bytes | None  # the image re-encoded (None: see problem)
    width: int = 0
    height: int = 0
    problem: str = ""  # why there is no image ("" when there is one)
    text: str = ""  # what to show instead (a remote URL, as text)


def refs_of(record: dict) -> list[ImageRef]:
    """The images a record holds, in order, at most MAX_IMAGES."""
    found: list[ImageRef] = []
    for key in IMAGE_KEYS:
        value = record.get(key)
        for item in value if isinstance(value, list) else [value]:
            if (ref := _ref(item)) is not None:
                found.append(ref)
    for message in record.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for part in content if isinstance(content, list) else []:
            url = _part_url(part)
            if url is not None and (ref := _ref(url)) is not None:
                found.append(ref)
    return found[:MAX_IMAGES]


def count_of(value: object) -> int:
    """How many images one value of an IMAGE_KEYS key names (for the index)."""
    items = value if isinstance(value, list) else [value]
    return sum(_ref(item) is not None for item in items)


def _part_url(part: object) -> object:
    if not isinstance(part, dict) or part.get("type") not in ("image_url", "image"):
        return None
    url = part.get("image_url", part.get("image"))
    return url.get("url") if isinstance(url, dict) else url


def _ref(item: object) -> ImageRef | None:
    if isinstance(item, (bytes, bytearray)):
        return ImageRef("bytes", bytes(item)) if item else None
    if hasattr(item, "pil_state"):  # loaders.parse.pil_image.PilImage
        return ImageRef("pil", item)
    if not isinstance(item, str) or not item.strip():
        return None
    if item.startswith("data:"):
        return ImageRef("data", item)
    if "://" in item:
        return ImageRef("url", item)
    return ImageRef("path", item)


def raw_of(ref: ImageRef, root: Path, base: Path) -> bytes | object | Decoded:
    """The encoded bytes of a ref (a path read inside root only), or the Decoded saying
    why there are none."""
    if ref.kind == "url":
        return Decoded(None, problem="a remote image is never fetched", text=str(ref.value))
    if ref.kind in ("bytes", "pil"):  # a pickled image's pixels go to PIL as they are
        return ref.value
    if ref.kind == "data":
        head, _, payload = str(ref.value).partition(",")
        if ";base64" not in head or len(payload) > MAX_IMAGE_BYTES * 4 // 3 + 4:
            return Decoded(None, problem="a data URL that is not base64 or too large")
        try:
            return base64.b64decode(payload, validate=False)
        except (binascii.Error, ValueError):
            return Decoded(None, problem="a data URL whose base64 does not decode")
    return _read_inside(str(ref.value), root, base)


def _read_inside(name: str, root: Path, base: Path) -> bytes | Decoded:
    """A path's bytes when it is a regular file inside root (after links); relative ones
    are taken from the sample's own dir, then from root."""
    real_root = os.path.realpath(root)
    tries = [Path(name)] if os.path.isabs(name) else [base / name, root / name]
    for path in tries:
        real = os.path.realpath(path)
        if os.path.commonpath([real, real_root]) != real_root:
            continue
        try:
            if not os.path.isfile(real):
                continue
            if os.path.getsize(real) > MAX_IMAGE_BYTES:
                return Decoded(None, problem=f"{name}: over {MAX_IMAGE_BYTES >> 20} MB")
            with open(real, "rb") as handle:
                return handle.read(MAX_IMAGE_BYTES + 1)
        except OSError as err:
            return Decoded(None, problem=f"{name}: cannot read ({err.strerror})")
    return Decoded(None, problem=f"{name}: no such image inside the dump dir")
