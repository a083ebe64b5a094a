"""A watched run's incidents, each written down once and sent once to every notifier.

Every new incident is first a line of `alerts.jsonl` beside the run's index, so nothing is
lost while a notifier is down; then it waits in the outbox for each notifier URL (apprise:
Slack, Discord, e-mail, a generic webhook, ...).  A delivery is a line of the same file, so a
restarted watcher sends what a notifier named then did not get, and nothing twice (a notifier
added later gets the incidents found from then on, not the run's past).  A notifier that fails is
tried again after a growing pause (BACKOFF_SECONDS, doubled each time, up to MAX_BACKOFF);
at most PER_MINUTE messages go to one notifier a minute.  No failure stops the watch.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from xxhash import xxh3_64_hexdigest

LOG_NAME = "alerts.jsonl"
PER_MINUTE = 6
BACKOFF_SECONDS = 5.0
MAX_BACKOFF = 600.0
log = logging.getLogger(__name__)
Send = Callable[[str, str, str], bool]  # (url, title, body) -> delivered


@dataclass
class Pending:
    incident: str
    url: str
    title: str
    body: str
    tries: int = 0
    due: float = 0.0  # monotonic time of the next try


@dataclass
class Outbox:
    log_path: Path
    urls: list[str]
    send: Send
    clock: Callable[[], float] = time.monotonic
    pending: list[Pending] = field(default_factory=list)
    found: list[dict] = field(default_factory=list)  # the incidents' records, oldest first
    _known: set[str] = field(default_factory=set)  # incidents written down
    _sent: list[tuple[str, float]] = field(default_factory=list)  # (url, when) this minute

    def __post_init__(self) -> None:
        """What an earlier watch of this run wrote down and did not deliver goes first."""
        self.found, delivered = _read(self.log_path)
        self._known = {record["incident"] for record in self.found}
        for record in self.found:  # to the notifiers named then
            named, incident = record.get("notify"), record["incident"]
            self.pending += [
                Pending(incident, url, str(record.get("title", "")), str(record.get(
                    "body", ""))) for url in self.urls
                if isinstance(named, list) and _key(url) in named
                and (incident, _key(url)) not in delivered]

    def add(self, incident: str, title: str, body: str, record: dict) -> bool:
        """Write a new incident down and queue it for every notifier; False when it was
        known already (found by this watch or an earlier one)."""
        if incident in self._known:
            return False
        self._known.add(incident)
        record = {"incident": incident, "title": title, "body": body, "found_at": time.time(),
                  **record, "notify": [_key(url) for url in self.urls]}
        self.found.append(record)
        _append(self.log_path, record)
        self.pending += [Pending(incident, url, title, body) for url in self.urls]
        return True

    def flush(self) -> int:
        """Try every message that is due and within its notifier's rate; how many went."""
        now = self.clock()
        self._sent = [(url, when) for url, when in self._sent if now - when < 60.0]
        went = 0
        for item in [p for p in self.pending if p.due <= now]:
            if sum(url == item.url for url, _ in self._sent) >= PER_MINUTE:
                continue  # the rest of this minute's share waits
            if self._try(item, now):
                went += 1
        return went

    def _try(self, item: Pending, now: float) -> bool:
        try:
            ok = self.send(item.url, item.title, item.body)
        except Exception as err:  # a notifier's library may raise anything: never fatal
            log.warning("watch: %s not sent to %s: %s", item.incident, shown(item.url), err)
            ok = False
        if not ok:
            item.tries += 1
            item.due = now + min(BACKOFF_SECONDS * 2 ** min(item.tries - 1, 30), MAX_BACKOFF)
            log.warning("watch: %s not sent to %s (try %d); again in %.0f s", item.incident,
                        shown(item.url), item.tries, item.due - now)
            return False
        self._sent.append((item.url, now))
        self.pending.remove(item)
        _append(self.log_path, {"incident": item.incident, "delivered_to": shown(item.url),
                                "url_key": _key(item.url), "delivered_at": time.time()})
        log.info("watch: %s sent to %s", item.incident, shown(item.url))
        return True


def shown(url: str) -> str:
    """A notifier URL as logged: its scheme and a hash of the rest (for several schemes the
    host part is the token itself: tgram://BOT_TOKEN/..., pbul://ACCESS_TOKEN)."""
    return f"{url.partition('://')[0]}://#{_key(url)[:8]}"


def _key(url: str) -> str:
    """What the log keeps of a notifier URL to know it again: a hash (the URL itself may
    hold a token)."""
    return xxh3_64_hexdigest(url.encode())


def _append(path: Path, record: dict) -> None:
    """A line of the log; a disk that refuses it is logged, and the watch goes on."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as handle:
            handle.write(orjson.dumps(record, default=str) + b"\n")
    except OSError as err:
        log.warning("watch: cannot write %s: %s", path, err.strerror or err)


def _read(path: Path) -> tuple[list[dict], set[tuple[str, str]]]:
    """(the incidents' records, the (incident, notifier key) deliveries) of a log; a line
    that is not a record of this module (a half-written last line) is skipped."""
    found: list[dict] = []
    delivered: set[tuple[str, str]] = set()
    try:
        lines = path.read_bytes().splitlines()
    except OSError:
        return found, delivered
    for line in lines:
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(record, dict) or not isinstance(record.get("incident"), str):
            continue
        if "url_key" in record:
            delivered.add((record["incident"], str(record["url_key"])))
        elif "found_at" in record:
            found.append(record)
    return found, delivered
