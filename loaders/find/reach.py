"""Which URLs the board may open, decided before any DNS lookup or connection.

A dump URL names a store the server will connect to, so it must come from the operator: the
DUMP_DIR (or --metrics) given at start, a URL --root, or an --allow-remote prefix.  A link or
the sidebar may name a URL only under one of those, and only on an object store (s3, gs,
hdfs, …): http(s)://, file://, archive schemes (zip://, tar://) and every other fsspec
protocol (ftp://, github://, webhdfs://, …) are refused from the page in every case.  Every
URL is normalised first (percent-decoding, empty segments) and refused when it carries what
a store could read as something else: `.`/`..` segments, a query (s3fs reads `?versionId=`),
a fragment, credentials, a backslash or a control character.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote

URL = re.compile(r"^([a-z][a-z0-9+.-]*)://", re.IGNORECASE)
# the stores whose fsspec package docs/cli.md documents; the optional package each needs
PACKAGES = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "hdfs": "pyarrow",
            "abfs": "adlfs", "az": "adlfs", "oss": "ossfs"}
STORE_SCHEMES = frozenset(PACKAGES)  # the only schemes a page may name, under a prefix
_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}")
_AMBIGUOUS = ("?", "#", "\\")  # a query, a fragment, a Windows-style separator


class RemoteError(OSError):
    """A URL that cannot be used: a missing package, credentials in it, a bad path."""


def is_url_text(text: str) -> bool:
    return bool(URL.match(text))


def checked_url(text: str) -> str:
    """The URL normalised (scheme lower-cased, percent-escapes decoded once, no empty or
    trailing segments); RemoteError when what is left could name anything else."""
    scheme, rest = text.strip().split("://", 1)
    decoded = unquote(rest)
    if any(c in decoded for c in _AMBIGUOUS) or _ESCAPE.search(decoded):
        raise RemoteError(f"Refused: a URL with a query (?), a fragment (#), a backslash or "
                          f"a percent-escape of one: {_shown(text)}")
    if any(ord(c) < 32 or ord(c) == 127 for c in decoded):
        raise RemoteError(f"not a usable URL (a control character): {_shown(text)}")
    host, _, path = decoded.partition("/")
    if "@" in host:
        raise RemoteError("credentials in a URL are not accepted: the store's standard "
                          "environment variables and config files provide them")
    parts = [p for p in path.split("/") if p]
    if not host or any(p in (".", "..") for p in parts):
        raise RemoteError(f"not a usable URL: {_shown(text)}")
    return f"{scheme.lower()}://{'/'.join([host, *parts])}"


@dataclass(frozen=True)
class RemoteReach:
    """The URLs the operator opened the board to: their own dump dir (any scheme they chose)
    and the prefixes under which a page may name an object-store URL."""
    operator_urls: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()

    @classmethod
    def of(cls, operator_paths: Iterable[str], prefixes: Iterable[str]) -> RemoteReach:
        """From the start-up arguments; a malformed one is left out (it then opens nothing)."""
        urls = {_normalised(p) for p in operator_paths} - {""}
        return cls(frozenset(urls), tuple(p for p in map(_normalised, prefixes) if p))


NO_REACH = RemoteReach()


def unusable_prefixes(prefixes: Iterable[str]) -> list[str]:
    """The --allow-remote values that name no URL prefix (left out by RemoteReach.of), so the
    operator hears of them at start instead of finding links refused later."""
    return [p for p in prefixes if p.strip() and not _normalised(p)]


def refusal(text: str, reach: RemoteReach, root: str | None = None) -> str | None:
    """Why a URL may not be opened from the page (one line), or None when it may.  Only the
    text is looked at: nothing is resolved or connected to."""
    scheme = URL.match(text.strip()).group(1).lower()
    url = _normalised(text)
    if url and url in reach.operator_urls:
        return None
    if scheme not in STORE_SCHEMES:
        return (f"Refused: {scheme}:// URLs are never opened from a link or the sidebar "
                f"({_shown(text.strip())}); only the dump dir the board was started with "
                "may be one.")
    if not url:
        try:
            checked_url(text)
        except RemoteError as err:
            return str(err)
    if not any(url == p or url.startswith(p + "/") for p in reach.prefixes):
        where = f"the allowed root {root}" if root else \
            "a URL the board was started with (--root URL or --allow-remote PREFIX)"
        return f"Refused: {_shown(text.strip())} is outside {where}."
    return None


def _normalised(text: str) -> str:
    try:
        return checked_url(text) if is_url_text(text.strip()) else ""
    except RemoteError:
        return ""


def _shown(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text):,} chars)"
