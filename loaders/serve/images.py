"""A sample's images decoded in the server by Pillow and re-encoded as PNG: full size (capped)
for the Sample page, a thumbnail as a data URL for a table row.  Nothing is linked or
fetched (loaders.parse.images says what is read, and from where)."""
from __future__ import annotations

import base64
import io
import threading
import warnings
from collections import OrderedDict
from pathlib import Path

import pandas as pd
from PIL import Image, UnidentifiedImageError

from loaders import schema as S
from loaders.parse.images import FORMATS, MAX_PIXELS, Decoded, ImageRef, raw_of
from loaders.serve.cache import SampleStore
from loaders.serve.sample import Sample

THUMB_SIDE = 96  # a table row's image
FULL_SIDE = 1024  # the Sample page's: larger ones are scaled down (the server's work)
MAX_THUMBS = 4096  # thumbnails kept: a page of 500 rows, several steps
_THUMBS: OrderedDict[tuple, str | None] = OrderedDict()
_LOCK = threading.Lock()


def decoded(ref: ImageRef, root: Path, base: Path, side: int = FULL_SIDE) -> Decoded:
    """One image as PNG no larger than side x side, or why there is none."""
    raw = raw_of(ref, root, base)
    if isinstance(raw, Decoded):
        return raw
    try:
        image = _opened(raw)
    except _NotShown as why:
        return Decoded(None, problem=str(why))
    image.thumbnail((side, side))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return Decoded(out.getvalue(), image.width, image.height)


class _NotShown(Exception):
    """Why an image is not shown (a bomb, a truncated file, not a raster image)."""


def _opened(raw: bytes | object) -> Image.Image:
    """A decoded, RGB(A) image within MAX_PIXELS; _NotShown for anything else."""
    if hasattr(raw, "pil_state"):  # slime's pickled image: mode, size, raw pixels
        mode, size, data = raw.pil_state
        try:
            image = Image.frombytes(mode, size, data)
        except (ValueError, OSError) as err:
            raise _NotShown(f"a pickled image that does not decode: {err}") from None
        return image.convert("RGBA" if "A" in mode else "RGB")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(raw), formats=FORMATS)
            width, height = image.size
            if width * height > MAX_PIXELS:
                raise _NotShown(f"an image of {width} x {height} pixels (over "
                                f"{MAX_PIXELS:,}: a decompression bomb, or too large)")
            image.load()
    except UnidentifiedImageError:
        raise _NotShown(f"not an image in {', '.join(FORMATS)} (SVG and others are not "
                        "decoded)") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise _NotShown(f"a decompression bomb (its header claims more than {MAX_PIXELS:,} "
                        "pixels)") from None
    except (OSError, ValueError, SyntaxError) as err:  # truncated, corrupt
        raise _NotShown(f"an image that does not decode: {str(err)[:120]}") from None
    return image.convert("RGBA" if image.mode in ("RGBA", "LA", "P") else "RGB")


def thumbnail(key: str, check: int, ref: ImageRef, root: Path, base: Path) -> str | None:
    """A data URL of the image as a THUMB_SIDE thumbnail (None when it does not decode),
    kept for the sample's line as indexed (its line check)."""
    held = (str(root), key, check)
    with _LOCK:
        if held in _THUMBS:
            _THUMBS.move_to_end(held)
            return _THUMBS[held]
    image = decoded(ref, root, base, THUMB_SIDE)
    url = None if image.png is None else (
        "data:image/png;base64," + base64.b64encode(image.png).decode("ascii"))
    with _LOCK:
        _THUMBS[held] = url
        while len(_THUMBS) > MAX_THUMBS:
            _THUMBS.popitem(last=False)
    return url


def sample_images(root: Path, sample: Sample) -> list[Decoded]:
    """The images of one sample (read back whole), each decoded at FULL_SIDE."""
    base = (root / sample.file).parent
    return [decoded(ref, root, base) for ref in sample.images]


def row_thumbnails(root: Path, store: SampleStore, rows: pd.DataFrame) -> list[str | None]:
    """A thumbnail data URL for each row that has an image (its first), None for the rest;
    only the rows with images are read back."""
    out: list[str | None] = [None] * len(rows)
    if S.IMAGES not in rows or not (rows[S.IMAGES] > 0).any():
        return out
    wanted = rows[rows[S.IMAGES].to_numpy() > 0]
    samples = store.without_tokens(wanted[S.KEY].tolist())
    at = {key: i for i, key in enumerate(rows[S.KEY].tolist())}
    checks = dict(zip(wanted[S.KEY], wanted[S.LINE_CHECK])) if S.LINE_CHECK in wanted else {}
    for key, sample in samples.items():
        if sample.images:
            out[at[key]] = thumbnail(key, int(checks.get(key, 0)), sample.images[0], root,
                                     (root / sample.file).parent)
    return out
