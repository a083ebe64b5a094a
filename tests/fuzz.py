"""A seeded fuzzer for the data core, shared by tests/loaders/test_fuzz.py and
benchmarks/fuzz_long.py.

It writes valid native dump lines into rollout_data_rank_N.jsonl files, mutates a seeded
share of them, and decides by itself which lines the board must keep.  Intact lines must be
kept.  A mutated line is judged by this oracle, written from docs/dump-format.md and not
from the loader's code (a line is the bytes between newlines):

1. only ASCII whitespace: blank, neither kept nor reported;
2. a leading UTF-8 BOM is dropped and invalid UTF-8 reads as U+FFFD;
3. Python's json.loads (NaN/Infinity literals allowed) must give a dict, else reported;
4. its "step" must be an int that is not a bool, a finite float without a fraction, or a
   string float() reads as one, with |step| < 2**63, else reported;
5. otherwise kept, whatever its other fields hold (a bad field is a problem beside the sample);
6. a file's last line without a newline that fails rule 3 is pending, neither kept nor
   reported (a half-written line the trainer is still writing);
7. json.loads raising RecursionError: undecided, so kept or reported (or pending under 6).
Undecided or not, every non-blank line must be accounted for exactly once.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from dump_files import make_sample

from loaders import open_run

KEPT, REPORTED, PENDING, BLANK, EITHER = "kept", "reported", "pending", "blank", "either"
BOM = b"\xef\xbb\xbf"
TEXTS = ("prompt", "response", "ref_response", "ground_truth", "note")
ARRAYS = ("response_tokens", "logprobs", "ref_logprobs", "values", "token_rewards")
HUGE = (b"1" + b"0" * 400, b"-1" + b"0" * 400, b"1e400", b"-1e400", b"NaN", b"Infinity",
        b"-Infinity")
SURROGATES = (b'"\\ud800"', b'"a\\udfffb"', b'"\\ud83d"')
# keys that name, or derive, a column the board makes itself
COLLISIONS = {"reward_mean": 1.5, "x": [1.0, 2.0], "x_mean": 3.0, "rank": 7, "extra_rank": 8,
              "file": "other.jsonl", "line": 99, "key": "k", "item": 2, "offset": -5,
              "nbytes": "big", "prompt_id": 1.5, "nan_count": "many", "truncated": "yes",
              "kl_k3_mean": [1.0, 2.0], "response_len": None, "samples": 3, "extra_x": 4.0,
              "reward_std": [0.5], "step_mean": 2.0, "line_check": "x", "extra_x_mean": 1.0}
WRONG = (("reward", "abc"), ("reward", [1, 2]), ("reward", {"a": 1}), ("reward", True),
         ("ref_reward", ""), ("logprobs", {"a": 1}), ("logprobs", "x"), ("logprobs", [1, "a"]),
         ("ref_logprobs", [[1.0]]), ("values", "v"), ("token_rewards", [True, None]),
         ("response_tokens", 5), ("response_tokens", [1, 2]), ("prompt", {"role": "x"}),
         ("prompt", [1, 2]), ("prompt", [{"content": 5}]), ("response", 3.5), ("step", "4"),
         ("step", " 3.0 "), ("step", "four"), ("step", True), ("step", 4.5), ("step", None),
         ("step", [4]), ("step", {}), ("validation", "yes"))
_HOLE = orjson.dumps("\x00hole\x00")


def valid_line(sample: dict) -> bytes:
    return orjson.dumps(sample)


def _with(sample: dict, key: str, literal: bytes) -> bytes:
    """The sample's line with `literal` (raw JSON text) as the value of `key`."""
    return valid_line({**sample, key: "\x00hole\x00"}).replace(_HOLE, literal, 1)


def flip(rng: random.Random, sample: dict) -> bytes:
    raw = bytearray(valid_line(sample))
    for _ in range(rng.randint(1, 3)):
        byte = rng.randrange(255)
        raw[rng.randrange(len(raw))] = byte if byte < 10 else byte + 1  # never a newline
    return bytes(raw)


def truncate(rng: random.Random, sample: dict) -> bytes:
    raw = valid_line(sample)
    return raw[: rng.randrange(1, len(raw))]


def nest(rng: random.Random, sample: dict) -> bytes:
    depth = rng.choice((rng.randint(100, 900), 1000, 1000, 1100))
    opener, closer = rng.choice(((b"[", b"]"), (b'{"a":', b"}")))
    return _with(sample, rng.choice(TEXTS), opener * depth + b'"x"' + closer * depth)


def huge(rng: random.Random, sample: dict) -> bytes:
    literal = rng.choice(HUGE)
    key = rng.choice(("reward", "ref_reward", "valid_reward", "score", "step", "meta")
                     + ARRAYS[1:] + ("ratio",))
    if key in ARRAYS + ("ratio",):
        literal = b"[-0.5, " + literal + b", 0.25]"
    elif key == "meta":
        literal = b'{"n": ' + literal + b"}"
    return _with(sample, key, literal)


def surrogate(rng: random.Random, sample: dict) -> bytes:
    text, where = rng.choice(SURROGATES), rng.randrange(3)
    if where == 0:
        return _with(sample, rng.choice(TEXTS), text)
    if where == 1:
        return _with(sample, "response_tokens", b"[" + text + b', " t"]')
    raw = valid_line(sample)  # a key of its own, before the others
    return raw[:1] + text + b": " + rng.choice((b"1", b"[1.5, 2.5]", b'"v"')) + b", " + raw[1:]


def collide(rng: random.Random, sample: dict) -> bytes:
    keys = rng.sample(sorted(COLLISIONS), rng.randint(1, 5))
    return valid_line({**sample, **{key: COLLISIONS[key] for key in keys}})


def wrong_type(rng: random.Random, sample: dict) -> bytes:
    key, value = rng.choice(WRONG)
    sample = {**sample, key: value}
    if rng.random() < 0.1:
        del sample["step"]
    return valid_line(sample)


def mismatch(rng: random.Random, sample: dict) -> bytes:
    sample = dict(sample)
    for key in rng.sample(ARRAYS, rng.randint(1, 3)):
        pad = "<PAD>" if key == "response_tokens" else 0.5
        cut = rng.randint(0, len(sample[key]))
        sample[key] = sample[key][:cut] if rng.random() < 0.6 else sample[key] + [pad] * cut
    return valid_line(sample)


def framing(rng: random.Random, sample: dict) -> bytes:
    raw = valid_line(sample)  # what docs/dump-format.md says is accepted: BOM, CRLF, blanks around
    return rng.choice((BOM + raw, raw + b"\r", b" " + raw + b"\t"))


MUTATIONS = {f.__name__: f for f in (flip, truncate, nest, huge, surrogate, collide,
                                     wrong_type, mismatch, framing)}


@dataclass
class Line:
    raw: bytes  # without its newline
    mutation: str = ""  # "" when written intact
    terminated: bool = True

    def expected(self) -> str:
        """What the board must do with this line (EITHER when the oracle cannot tell)."""
        if not self.raw.strip():
            return BLANK
        if not self.mutation:
            return KEPT
        verdict = oracle(self.raw)
        if not self.terminated and verdict == REPORTED and parsed_object(self.raw) is None:
            return PENDING
        return verdict


@dataclass
class FuzzDump:
    root: Path
    seed: int
    files: dict[str, list[Line]] = field(default_factory=dict)

    def lines(self) -> list[tuple[str, int, Line]]:
        return [(rel, number, line) for rel, lines in self.files.items()
                for number, line in enumerate(lines, 1)]


def parsed_object(raw: bytes) -> dict | None:
    """Rules 2 and 3: the line's dict, or None; RecursionError propagates (rule 7)."""
    if raw.startswith(BOM):
        raw = raw[len(BOM):]
    try:
        obj = json.loads(raw.decode("utf-8", errors="replace"))
    except json.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def oracle_step(obj: dict) -> int | None:
    """Rule 4: the step the board must read, or None when the line must be reported."""
    value = obj.get("step")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not (value == value and abs(value) != float("inf")
                                         and value.is_integer()):
        return None
    return int(value) if abs(value) < 2**63 else None


def oracle(raw: bytes) -> str:
    """KEPT, REPORTED or EITHER for one non-blank line (rules 2-5 and 7)."""
    try:
        obj = parsed_object(raw)
    except RecursionError:
        return EITHER
    return KEPT if obj is not None and oracle_step(obj) is not None else REPORTED


def generate(root: Path, seed: int, n_lines: int, share: float = 0.5,
             kinds: tuple[str, ...] = tuple(MUTATIONS)) -> FuzzDump:
    """Write n_lines over one to three rank files, a seeded `share` of them mutated."""
    rng = random.Random(seed)
    dump = FuzzDump(root, seed)
    names = [f"rollout_data_rank_{rank}.jsonl" for rank in range(rng.randint(1, 3))]
    for name in names:
        dump.files[name] = []
    for i in range(n_lines):
        sample = make_sample(rng.randint(0, 5), n=rng.randint(1, 8), seed=seed * 1000 + i,
                             prompt=f"seed {seed} line {i}")
        line = Line(valid_line(sample))
        if rng.random() < share:
            kind = rng.choice(kinds)
            line = Line(MUTATIONS[kind](rng, sample), kind)
        dump.files[rng.choice(names)].append(line)
    if "truncate" in kinds:
        for lines in dump.files.values():
            if lines and rng.random() < 0.3:  # a half-written last line: no newline yet
                last = lines[-1].raw
                lines[-1] = Line(last[: rng.randrange(1, len(last) + 1)], "truncate", False)
    write_files(dump)
    return dump


def write_files(dump: FuzzDump) -> None:
    dump.root.mkdir(parents=True, exist_ok=True)
    for name, lines in dump.files.items():
        data = b"".join(line.raw + (b"\n" if line.terminated else b"") for line in lines)
        (dump.root / name).write_bytes(data)


def describe(rel: str, number: int, line: Line) -> str:
    """One line naming a fuzzed line, for failure messages."""
    return (f"{rel}:{number} [{line.mutation or 'intact'}] expected {line.expected()}: "
            f"{orjson.dumps(line.raw[:120].decode('utf-8', 'replace')).decode()}")


@dataclass
class Tally:
    lines: int = 0  # non-blank lines written
    kept: int = 0
    reported: int = 0
    pending: int = 0
    undecided: int = 0  # lines the oracle could not judge (all of them still accounted for)


def check(dump: FuzzDump, derived: bool = False) -> Tally:
    """Open the dump fresh, then again from its index; the invariant must hold both times.
    With `derived`, the per-step frame every page builds first must build too (it costs as
    much as the load, so the long runs do it and the quick suite does it once per kind)."""
    run = open_run(dump.root)
    tally = check_run(dump, run)
    if derived:
        run.step_stats  # noqa: B018 - computed for the exception it may raise
    again = check_run(dump, open_run(dump.root))
    assert again == tally, f"reopened from the index: {again} != {tally}"
    return tally


def check_run(dump: FuzzDump, run: object) -> Tally:
    kept = _once([(str(f), int(n), int(s)) for f, n, s in
                  zip(run.samples["file"], run.samples["line"], run.samples["step"])], "sample")
    dropped = _once([(p["file"], int(p["line"]), 0) for p in run.problems if p["dropped"]],
                    "dropped problem")
    written = {(rel, number) for rel, number, line in dump.lines() if line.raw.strip()}
    errors = [f"{where}: kept or reported, but no such line was written"
              for where in (set(kept) | set(dropped)) - written]
    errors += [f"{p['file']}:{p['line']}: field problem on a line not kept: {p['reason']}"
               for p in run.problems if not p["dropped"] and (p["file"], p["line"]) not in kept]
    tally = Tally()
    for rel, number, line in dump.lines():
        got = _outcome((rel, number), line, kept, dropped, run)
        problem = _judge(line, got, kept.get((rel, number)))
        if problem:
            errors.append(f"{describe(rel, number, line)}: {problem}")
        _count(tally, line, got)
    if run.bad_lines != tally.reported:
        errors.append(f"run.bad_lines {run.bad_lines} != {tally.reported} lines reported")
    assert not errors, f"seed {dump.seed}:\n  " + "\n  ".join(errors[:12])
    return tally


def _once(items: list[tuple[str, int, int]], what: str) -> dict[tuple[str, int], int]:
    """{(file, line): step}, asserting that no line appears twice."""
    found = {}
    for rel, number, step in items:
        assert (rel, number) not in found, f"{rel}:{number}: more than one {what}"
        found[rel, number] = step
    return found


def _outcome(where: tuple[str, int], line: Line, kept: dict, dropped: dict, run: object) -> str:
    if where in kept and where in dropped:
        return "kept and reported"
    if where in kept or where in dropped:
        return KEPT if where in kept else REPORTED
    if not line.raw.strip():
        return BLANK
    state = run.files.get(where[0])
    pending = state is not None and state.pending_bytes == len(line.raw)
    return PENDING if pending and not line.terminated else "lost"


def _judge(line: Line, got: str, step: int | None) -> str:
    """Why the outcome breaks the oracle, or "" when it does not."""
    want = line.expected()
    allowed = {KEPT, REPORTED} | ({PENDING} if not line.terminated else set())
    if got != want and not (want == EITHER and got in allowed):
        return f"got {got}"
    if got == KEPT and want == KEPT:
        wanted = oracle_step(parsed_object(line.raw))
        if step != wanted:
            return f"kept with step {step}, the line says {wanted}"
    return ""


def _count(tally: Tally, line: Line, got: str) -> None:
    if got == BLANK:
        return
    tally.lines += 1
    tally.undecided += line.expected() == EITHER
    if got in (KEPT, REPORTED, PENDING):
        setattr(tally, got, getattr(tally, got) + 1)
