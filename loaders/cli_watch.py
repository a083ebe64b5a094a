"""python -m loaders watch DIR [--metrics PATH] [--alerts-config F] [--notify URL ...]
[--board-url URL] [--interval S] [--settle S] [--once [--drain S]]

Follows a run without a browser and sends each new strong incident once to every --notify
URL (apprise's URLs: slack://, discord://, mailto://, json:// and jsons:// webhooks, ...),
writing it first to alerts.jsonl beside the run's index.  Runs until SIGTERM or Ctrl-C;
--once checks the run as it is (every step complete), tries to deliver for up to --drain
seconds and exits: 0 when everything went, 3 when a message waits in alerts.jsonl for the
next run (cron).  One watcher a run: a second one exits with 4 (watch_lock).  See
docs/metrics-and-alerts.md.
"""
from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from loaders.index.ondisk import index_dir
from loaders.serve.outbox import LOG_NAME, Outbox, Send, shown
from loaders.serve.watch_lock import Watched, hold
from loaders.serve.watcher import SETTLE_SECONDS, Watch, WatchOptions

INTERVAL_SECONDS = 5.0
WATCHED = 4  # the exit code when another watcher holds the run
DRAIN_SECONDS = 30.0


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    root = Path(args.dump_dir).expanduser().resolve()
    if not root.is_dir():
        print(f"error: no such directory: {root}", file=sys.stderr)
        return 2
    try:
        send = apprise_sender(args.notify)
    except (ImportError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    logging.getLogger("apprise").setLevel(logging.WARNING)  # its own lines: a failure only
    try:
        lock = hold(index_dir(root))  # noqa: F841 -- held until the process exits
    except Watched as other:
        by = f" (pid {other.pid})" if other.pid else ""
        print(f"error: another watcher{by} is watching {root}: one watcher a run, or each "
              "would send the same incident", file=sys.stderr)
        return WATCHED
    outbox = Outbox(index_dir(root) / LOG_NAME, list(args.notify), send)
    watch = Watch(WatchOptions(root, args.metrics, args.alerts_config, args.board_url,
                               args.settle), outbox)
    if args.once:
        watch.tick(final=True)
        return 0 if drained(outbox, args.drain) else 3
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    while True:
        _guarded(watch.tick)
        _guarded(outbox.flush)
        if stop.wait(args.interval):
            _guarded(outbox.flush)
            return 0


def _guarded(step: Callable[[], int]) -> None:
    """One poll or flush; what it raises is logged, and the watch goes on (a dump dir that
    went away for a moment, a rule on odd data): nothing stops a watch but a signal."""
    try:
        step()
    except Exception as err:
        logging.getLogger(__name__).exception("watch: %s", err)


def drained(outbox: Outbox, seconds: float) -> bool:
    """Flush until nothing waits or `seconds` passed (sleeping until the next try is due);
    whether everything went."""
    deadline = time.monotonic() + seconds
    while True:
        outbox.flush()
        if not outbox.pending:
            return True
        wait = min(p.due for p in outbox.pending) - time.monotonic()
        if time.monotonic() + max(wait, 0.0) > deadline:
            return False
        time.sleep(max(wait, 0.05))


def apprise_sender(urls: list[str]) -> Send:
    """A sender through apprise, one notifier a URL; ImportError without apprise (only
    when a URL is given), ValueError for a URL apprise does not know."""
    if not urls:
        return lambda url, title, body: True
    try:
        import apprise
    except ImportError:
        raise ImportError("--notify needs the apprise package: pip install apprise") from None
    notifiers = {}
    for url in urls:
        notifier = apprise.Apprise()
        if not notifier.add(url):
            raise ValueError(f"--notify {shown(url)}...: not a notifier URL apprise knows")
        notifiers[url] = notifier
    return lambda url, title, body: bool(notifiers[url].notify(body=body, title=title))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m loaders watch", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dump_dir", help="the run's dump dir")
    parser.add_argument("--metrics", type=Path, help="another file or dir of training metrics")
    parser.add_argument("--alerts-config", type=Path,
                        help="TOML thresholds (default: DUMP_DIR/alerts.toml when present)")
    parser.add_argument("--notify", action="append", default=[], metavar="URL",
                        help="an apprise URL to send each new strong incident to (repeat)")
    parser.add_argument("--board-url", default="http://localhost:8901",
                        help="where the board serves, for the link in each message")
    parser.add_argument("--interval", type=float, default=INTERVAL_SECONDS,
                        help="seconds between polls (stats only)")
    parser.add_argument("--settle", type=float, default=SETTLE_SECONDS,
                        help="seconds of quiet after which the newest step is complete")
    parser.add_argument("--once", action="store_true", help="check once and exit (cron)")
    parser.add_argument("--drain", type=float, default=DRAIN_SECONDS,
                        help="with --once: seconds to keep trying undelivered messages")
    return parser
