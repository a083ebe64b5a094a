"""python -m loaders DUMP_DIR [--json] [--no-cache]: load a dump and print a summary."""
from __future__ import annotations

import argparse
import sys

import orjson

from loaders.report import summary_dict, summary_text
from loaders.run import DumpError, open_run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loaders", description=__doc__)
    parser.add_argument("dump_dir", help="folder of *.jsonl rollout dumps (searched recursively)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--no-cache", action="store_true", help="ignore and keep the index")
    parser.add_argument("--max-problems", type=int, default=50, help="problems listed (cap)")
    args = parser.parse_args(argv)
    try:
        run = open_run(args.dump_dir, use_cache=not args.no_cache)
    except DumpError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    info = summary_dict(run, args.max_problems)
    if args.json:
        sys.stdout.write(orjson.dumps(info, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write(summary_text(info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
