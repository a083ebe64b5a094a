"""python -m loaders DUMP_DIR [--json] [--no-cache]: load a dump and print a summary.

Also `python -m loaders convert SRC_DIR DST_DIR` (JSONL -> the board's Parquet dump),
`python -m loaders index DIR [--ray [ADDRESS]]` (build the index, optionally on Ray) and
`python -m loaders watch DIR [--notify URL ...]` (alerts without a browser: cli_watch.py)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import orjson

from loaders.health.check import check
from loaders.health.signals import HEALTH_COLUMNS
from loaders.serve.decided import decided
from loaders.serve.open_run import DumpError, open_run
from loaders.serve.report import summary_dict, summary_text

if TYPE_CHECKING:
    from loaders.serve.run import Run


def main(argv: list[str] | None = None, held: list[Run] | None = None) -> int:
    """The CLI (a dump's summary, or a subcommand); its exit status.  `held`: where the
    summary's run is kept past this return, for a process that then ends by finished()
    (freeing the long run object by object took 0.15-0.2 s after its summary was written)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["convert"]:  # python -m loaders convert SRC_DIR DST_DIR
        from loaders.writer.convert import main as convert

        return convert(argv[1:])
    if argv[:1] == ["watch"]:  # python -m loaders watch DIR [--notify URL ...] [--once]
        from loaders.cli_watch import main as watch

        return watch(argv[1:])
    if argv[:1] == ["index"]:  # python -m loaders index DIR [--ray [ADDRESS]]
        from loaders.cli_index import main as index

        return index(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m loaders", description=__doc__)
    parser.add_argument("dump_dir", help="folder of *.jsonl rollout dumps (searched recursively)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--no-cache", action="store_true", help="ignore and keep the index")
    parser.add_argument("--max-problems", type=int, default=50, help="problems listed (cap)")
    parser.add_argument("--alerts", action="store_true",
                        help="evaluate the health alert rules over metrics and dump instead")
    parser.add_argument("--metrics", type=Path, help="another file or dir of training metrics")
    parser.add_argument("--alerts-config", type=Path,
                        help="TOML thresholds (default: RUN_DIR/alerts.toml when present)")
    args = parser.parse_args(argv)
    if args.alerts:
        return print_alerts(args)
    try:
        run = open_run(args.dump_dir, use_cache=not args.no_cache)
    except DumpError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if held is not None:
        held.append(run)
    info = summary_dict(run, args.max_problems)
    if args.json:  # and, per file, what decided its samples' flags
        info["decided"] = decided(run)
        sys.stdout.write(orjson.dumps(info, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write(summary_text(info))
    return 0


def print_alerts(args: argparse.Namespace) -> int:
    """The alerts as a JSON list of {rule, severity, step, evidence} (or one line each)."""
    root = Path(args.dump_dir)
    if not root.is_dir():
        print(f"error: no such directory: {root}", file=sys.stderr)
        return 2
    try:
        samples = open_run(root, use_cache=not args.no_cache).columns(HEALTH_COLUMNS)
    except DumpError:
        samples = None  # a run dir with metrics only
    try:
        health = check(root, samples, args.metrics, args.alerts_config)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if samples is None and health.metrics.empty:
        print(f"error: no dump and no training metrics under {root}", file=sys.stderr)
        return 2
    alerts = [a.as_dict() for a in health.alerts]
    if args.json:
        sys.stdout.write(orjson.dumps(alerts, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        for alert in alerts:
            print(f"step {alert['step']}: {alert['severity']} {alert['rule']} {alert['evidence']}")
    return 0


def finished(code: int) -> NoReturn:
    """Exit with `code` once the output is flushed, without the interpreter's teardown: a
    summary's process holds the whole run, and freeing it object by object (its digests'
    bytes, its columns, a collection of every module) took 0.14-0.17 s of the long run's
    4 s after its last byte was written.  mypy ends its CLI so too (util.hard_exit)."""
    sys.stdout.flush()  # a reader gone raises here, and Python's own exit reports it
    sys.stderr.flush()
    os._exit(code)


# commands that end with the work of a library's own exit (Ray stops the local cluster it
# started; the writer's sinks flush at exit): these exit as Python does
_SLOW_EXIT = frozenset({"convert", "watch", "index"})

if __name__ == "__main__":
    kept_to_the_end: list[Run] = []  # a module name: the run lives until finished()
    status = main(held=kept_to_the_end)
    if sys.argv[1:2] and sys.argv[1] in _SLOW_EXIT:
        sys.exit(status)
    finished(status)
