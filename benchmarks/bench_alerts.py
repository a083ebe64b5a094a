"""Precision and recall of the alert rules on labelled, seeded runs.

    .venv/bin/python benchmarks/bench_alerts.py [--healthy 60] [--per-fault 10] [--config F]

Healthy runs (samples/generate_alert_runs.py: realistic trends, 8 to 8,192 samples a
step, every fourth one a dump without training metrics) must raise no strong alert. Each
fault is injected into runs of its own, abrupt (full size at onset) and gradual (a tenth
more each step), at a seeded onset step between 40 and 75 of 100. A fault counts as found
when its rule raises an alert (weak or strong; "strong" columns: a strong one) at most 2
(abrupt) or 5 (gradual) steps after onset; the delay is the first such alert's step minus
the onset. Printed per rule: false strong and weak alerts per 100 healthy steps; per fault
and kind: recall, strong recall and the median delay.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from loaders.health.config import DEFAULTS, load_config  # noqa: E402
from loaders.health.rules import evaluate  # noqa: E402
from loaders.health.signals import health_signals  # noqa: E402
from samples.generate_alert_runs import FAULTS, KINDS, applies, make_run  # noqa: E402

SIZES = (8, 16, 32, 64, 256, 1024, 8192)
STEPS = 100
WITHIN = {"abrupt": 2, "gradual": 5}
LARGE = 64  # samples a step from which the table also reports recall on its own


def alerts_of(run, cfg: dict) -> list:
    return evaluate(health_signals(run.metrics, run.samples), run.samples, cfg)


def healthy(count: int, cfg: dict) -> tuple[dict, dict, int]:
    """Strong and weak alerts per rule over `count` healthy runs, and the steps judged."""
    strong, weak = defaultdict(int), defaultdict(int)
    for i in range(count):
        run = make_run(1000 + i, SIZES[i % len(SIZES)], STEPS, metrics=i % 4 != 3)
        for alert in alerts_of(run, cfg):
            (strong if alert.severity == "strong" else weak)[alert.rule] += 1
            if alert.severity == "strong":
                print(f"  healthy run {i} (n={SIZES[i % len(SIZES)]}): strong {alert.rule} "
                      f"at step {alert.step} {alert.evidence}", file=sys.stderr)
    return strong, weak, count * STEPS


def faulty(fault: str, kind: str, count: int, cfg: dict) -> list[tuple[int, bool, bool, int]]:
    """(n, found, found strong, delay) of each of `count` runs with the fault."""
    rule, sizes = FAULTS[fault], [n for n in SIZES if applies(fault, n)]
    rng = np.random.default_rng(sum(map(ord, fault + kind)))
    out = []
    for i in range(count):
        onset = int(rng.integers(40, 76))
        n = sizes[i % len(sizes)]
        run = make_run(2000 + i, n, STEPS, fault, kind, onset)
        hits = [a for a in alerts_of(run, cfg) if a.rule == rule
                and onset <= a.step <= onset + WITHIN[kind]]
        delay = min(a.step for a in hits) - onset if hits else -1
        out.append((n, bool(hits), any(a.severity == "strong" for a in hits), delay))
    return out


def summary(results: list[tuple[int, bool, bool, int]]) -> str:
    """recall, strong recall and median delay, over all runs and over n >= LARGE."""
    parts = []
    for runs in (results, [r for r in results if r[0] >= LARGE]):
        if not runs:
            parts.append(f"{'':>7} {'':>7}")
            continue
        parts.append(f"{np.mean([r[1] for r in runs]):7.0%} {np.mean([r[2] for r in runs]):7.0%}")
    delays = [r[3] for r in results if r[1]]
    median = f"{np.median(delays):5.1f}" if delays else "    -"
    return " ".join(parts) + f" {median}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--healthy", type=int, default=60)
    parser.add_argument("--per-fault", type=int, default=10)
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument("--config", type=Path, help="an alerts.toml to use instead of defaults")
    args = parser.parse_args()
    cfg = load_config(args.config) if args.config else DEFAULTS
    started = time.perf_counter()
    strong, weak, steps = healthy(args.healthy, cfg)
    print(f"{args.healthy} healthy runs x {STEPS} steps, n = {', '.join(map(str, SIZES))}")
    print(f"{'rule':26} {'false strong/100 steps':>22} {'false weak/100 steps':>21}")
    for rule in sorted(set(FAULTS.values()) | set(strong) | set(weak) | {"zero_variance_groups",
                                                                         "batch_runaway"}):
        print(f"{rule:26} {100 * strong[rule] / steps:22.2f} {100 * weak[rule] / steps:21.2f}",
              flush=True)
    print(f"\n{'fault':17} {'rule':25} {'kind':7} {'runs':>4} {'recall':>7} {'strong':>7} "
          f"{'n>=64':>7} {'strong':>7} {'delay':>5}")
    for fault in args.faults.split(","):
        for kind in KINDS:
            results = faulty(fault, kind, args.per_fault, cfg)
            print(f"{fault:17} {FAULTS[fault]:25} {kind:7} {len(results):4d} "
                  f"{summary(results)}", flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
