"""`python tests/net_audit.py CASES_JSON`: the real board (AppTest through rl_logging_board.py)
opened on each case's URL parameters, with every name lookup and connection this process
attempts recorded by an audit hook; prints one JSON line: per case what the page showed, and
the network events it caused.

Run by tests/loaders/test_network_reach.py in a process of its own, since an audit hook cannot be
removed.  CPython raises an audit event for every socket connect, name lookup and datagram
send before it happens, from any thread (fsspec's and aiohttp's event loop, botocore's
urllib3), so a refused URL shows as no event at all and an attempt shows even when nothing
answers (the metadata address 169.254.169.254 included).
"""
from __future__ import annotations

import html
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
NETWORK_EVENTS = frozenset({"socket.connect", "socket.getaddrinfo", "socket.gethostbyname",
                            "socket.gethostbyaddr", "socket.getnameinfo", "socket.sendto",
                            "socket.sendmsg"})
events: list[str] = []


def record(event: str, args: tuple) -> None:
    if event in NETWORK_EVENTS:
        # connect and sendto carry (socket, address, ...): the address says where
        where = args[1] if event in ("socket.connect", "socket.sendto") else args[:2]
        events.append(f"{event} {where!r}")


def run_case(params: dict[str, str]) -> dict:
    from apptest import board, errors

    before = len(events)
    params = dict(params)
    at = board(params.pop("dir"), **params)
    raw = [str(e.value) for e in [*at.error, *at.sidebar.error]]
    return {"params": params, "errors": sorted(set(errors(at) + [html.unescape(r)
                                                                 for r in raw])),
            "raw_errors": raw, "exceptions": [str(e.value) for e in at.exception],
            "events": events[before:]}


def main(cases: list[dict[str, str]]) -> None:
    sys.path.insert(0, str(HERE))
    sys.addaudithook(record)
    results = [run_case(case) for case in cases]
    print(json.dumps(results))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
