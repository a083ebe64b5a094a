"""python -m loaders index DIR [--ray [ADDRESS]]: build or bring up to date a dump's index.

Without --ray the chunks are scanned by the local pool, as the board does; with --ray each
chunk is a Ray task (loaders/index/on_ray.py): ADDRESS is a cluster's ("auto" joins the one
this node is part of; none starts a local Ray).  The index goes where the board reads it.
"""
from __future__ import annotations

import argparse
import sys

import orjson

from loaders.serve.open_run import DumpError, open_run
from loaders.serve.report import summary_dict


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m loaders index", description=__doc__)
    parser.add_argument("dump_dir", help="the dump dir (or an s3://, gs://, hdfs:// URL)")
    parser.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                        help="scan on a Ray cluster (no ADDRESS: a local Ray)")
    parser.add_argument("--num-cpus", type=int, help="CPUs of a local Ray (default: all)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    scan, ready = None, None
    if args.ray is not None:
        from loaders.index.on_ray import RayMissing, connect, ray_scanner

        try:
            ready = connect(args.ray or None, args.num_cpus)
        except RayMissing as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        scan = ray_scanner()
    try:
        run = open_run(args.dump_dir, scanner=scan)
    except DumpError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    info = summary_dict(run, 20)
    if ready is not None:  # the cluster joined or started and its workers made ready, once
        info["ray_ready_seconds"] = round(ready, 4)  # before the build ("seconds")
    if args.json:
        sys.stdout.write(orjson.dumps(info, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        ready_note = "" if ready is None else f" (Ray ready in {ready:.2f}s before)"
        print(f"{info['samples']} samples, {info['steps']} steps, {info['bad_lines']} bad "
              f"lines; index ({info['cache']}) at {run.index_path} in "
              f"{info['seconds']:.2f}s{ready_note}")
    return 0
