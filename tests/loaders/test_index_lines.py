"""Plain lines read in C straight into columns (loaders/index/lines.c) index exactly as the
same lines read by orjson do; every other line is read by orjson, as before."""
import json
import math
import random
import struct

import numpy as np
import pandas as pd
import pytest
from dump_files import make_sample

from loaders import open_run
from loaders.index import block_fields, lines

pytestmark = pytest.mark.skipif(not lines.available(), reason="lines.c not built")


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def test_every_number_reads_as_float_and_int_read_it():
    rng = random.Random(7)
    texts = []
    for i in range(50_000):
        kind = i % 5
        if kind == 0:  # shortest repr of a float, as json.dumps writes logprobs
            texts.append(repr(-rng.random() * 10 ** rng.randint(-9, 2)))
        elif kind == 1:  # any finite double: the extremes of the exponent
            x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
            if math.isfinite(x):
                texts.append(repr(x))
        elif kind == 2:  # up to 19 digits and any exponent: Eisel-Lemire's edges
            digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 18)))
            texts.append(f"{rng.randint(1, 9)}.{digits}e{rng.randint(-330, 310)}")
        elif kind == 3:  # fractions of 1-30 digits, leading zeros too: eight at a time
            whole = rng.choice(["0", "-0", str(rng.randint(1, 10 ** rng.randint(1, 12)))])
            zeros = "0" * rng.choice([0, 0, 1, 4, 9])
            digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 30)))
            texts.append(f"{whole}.{zeros}{digits}" + rng.choice(["", "e-7", "E+3"]))
        else:
            texts.append(str(rng.randint(-2**63 + 1, 2**63 - 1)))
    texts += ["0", "-0", "-0.0", "1e22", "1e23", "9007199254740993", "2.2250738585072014e-308",
              "4.9406564584124654e-324", "1.7976931348623157e308", "0.1", "1E+2", "5e-1"]
    texts += [f"0.{'0' * z}{'7' * n}" for z in range(4) for n in range(14, 22)]  # 19 digits
    texts += ["12345678901234567890.5", "-1234567890.123456789", "0.12345678901234567895"]
    for text in texts:
        want = json.loads(text)
        # alone: read_number's general reading; with the rest of a line after it, the
        # common form's own reading (read_common_float) where it applies
        for pad in (0, 64):
            got = lines._C.parse_number(text.encode(), pad)
            if got is None:  # not plain (a subnormal, say): orjson reads the line
                continue
            assert type(got) is type(want) and _bits(float(got)) == _bits(float(want)), text


@pytest.mark.parametrize("text", ["01", "1.", ".5", "+1", "1e", "--1", "1e400", "-", "0x10",
                                  "9223372036854775808", "-9223372036854775808", "NaN", "-.5", "0.",
                                  "00.5", "1.5e", "1.5e+"])
def test_what_is_no_plain_json_number_is_left_to_orjson(text):
    assert lines._C.parse_number(text.encode()) is None
    assert lines._C.parse_number(text.encode(), 64) is None  # with a line's rest after it


def _odd_lines() -> list[str]:
    """Plain and odd lines mixed, as a long run's files hold them."""
    def line(step: int, seed: int, **changes) -> str:
        sample = make_sample(step, n=5, seed=seed, uid=f"g{seed % 3}")
        sample.update(changes)
        return json.dumps(sample, ensure_ascii=False)

    plain = [line(1, i, label="é" * 300 + str(i)) for i in range(6)]  # a long extra text
    return [
        *plain[:3], "", "   ", line(1, 10, values=None), line(1, 11, logprobs=[-0.1, None, -0.3]),
        line(1, 12, response="héllo ✓ 𝄞 \"q\" \\ / \n\t", prompt="\u00e9\x7f"),
        json.dumps(make_sample(1, seed=13, response="\U0001d11e"), ensure_ascii=True),
        line(1, 14).replace('"response": "', '"response": "\\ud800', 1),  # a lone surrogate
        line(1, 15).replace('"reward": ', '"reward": NaN, "x": ', 1),
        line(1, 16, reward=10**30), line(1, 17, reward=1e-5, ref_reward=-0.0),
        line(2, 18, score2=3, flag=True, note=None), line(2, 19, entropy=[0.5] * 5),
        line(2, 20, status="aborted"), line(2, 21, validation=True),
        '{"step": 2, "step": 3, "reward": 1.0, "response": "twice"}',
        "\ufeff" + line(2, 22), line(2, 23, messages=[{"role": "user", "content": "m"}]),
        line(2, 24).replace('"step": 2', '"step": "2"'),
        line(2, 25).replace('"step": 2', '"step": 2.0'),
        line(2, 26, response_tokens=[1, 2, 3, 4, 5]), line(2, 27, logprobs=[]),
        line(2, 28, reward="0.5"), line(2, 29, nested={"a": [1, {"b": 2}]}),
        line(3, 30, response="x" * 20_000), *plain[3:], line(3, 31, logprobs=5),
        line(3, 32, values=[0.1, 0.2, 0.3, 0.4, 0.5]), line(3, 33, token_rewards=[0, 0, 0, 0, 1]),
        "not json at all", "[1, 2]", line(3, 34, prompt=7)]


def _write(root, text: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "rollout_data_rank_0.jsonl").write_text(text)
    (root / "rollout_data_rank_1.jsonl").write_text(text.replace("\n", "\r\n"))


def _frame(root) -> tuple[pd.DataFrame, list]:
    run = open_run(root, use_cache=False)
    return run.with_previews(run.samples), run.problems


def test_an_odd_dump_indexes_the_same_read_in_c_or_by_orjson(tmp_path, monkeypatch):
    text = "\n".join(_odd_lines()) + "\n" + json.dumps(make_sample(3, seed=99))[:-9]  # half
    _write(tmp_path / "c", text)
    _write(tmp_path / "py", text)
    read = []
    real = lines.read_block
    monkeypatch.setattr(lines, "read_block", lambda *a: read.append(r := real(*a)) or r)
    fast, fast_problems = _frame(tmp_path / "c")
    assert sum(len(b) for b in read if b is not None) > 20  # the plain runs were read in C
    monkeypatch.setattr(lines, "_C", None)
    slow, slow_problems = _frame(tmp_path / "py")
    assert fast_problems == slow_problems and len(fast) == len(slow) > 60
    assert list(fast.columns) == list(slow.columns)
    for name in fast.columns:
        a, b = fast[name], slow[name]
        if name == "digest" or a.dtype == object:
            assert a.tolist() == b.tolist(), name
        else:
            pd.testing.assert_series_equal(a, b, check_exact=True, obj=name)


def test_a_run_splits_where_a_key_changes_kind(tmp_path):
    """values null, then a list: two runs, each with one kind a column."""
    rows = [make_sample(1, seed=i, values=None if i < 3 else [0.5] * 6) for i in range(6)]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    first = lines.read_block(data, 0, 1024, 1 << 20)
    assert len(first) == 3 and first.columns["values"] == [None] * 3
    second = lines.read_block(data, first.end, 1024, 1 << 20)
    assert len(second) == 3
    values, sizes = second.columns["values"]
    assert sizes.tolist() == [6, 6, 6] and np.all(values == 0.5)


def test_the_c_scan_checks_each_line_as_record_line_check_does():
    """The line checks made in C (the xxhash package's own XXH3, by address) are the ones a
    sample read back is compared with, on lines of every kind of byte."""
    from loaders.parse.record import line_check

    rows = [make_sample(1, seed=i, response="héllo ✓ 𝄞 \"q\"" * i) for i in range(40)]
    data = "".join(json.dumps(r, ensure_ascii=i % 2 == 0) + ("\r\n" if i % 3 else "\n")
                   for i, r in enumerate(rows)).encode()
    block = lines.read_block(data, 0, 1024, 1 << 20)
    assert block is not None and len(block) == 40 and block.checks is not None
    spans = zip(block.starts.tolist(), block.ends.tolist())
    assert block.checks.tolist() == [line_check(data[s:e]) for s, e in spans]


def test_a_block_names_the_keys_some_sample_lacks():
    """Keys every sample has are used as the C scan made them; the others get None where
    a sample lacks them (BlockFields.column), whichever sample it is."""
    rows = [make_sample(1, seed=i, **({"score2": i} if i in (1, 3) else {}),
                        **({"note": "late"} if i == 4 else {})) for i in range(5)]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    block = lines.read_block(data, 0, 1024, 1 << 20)
    assert len(block) == 5 and block.gaps is not None
    assert {"score2", "note"} <= block.gaps and "reward" not in block.gaps
    fields = block_fields.BlockFields(block)
    assert fields.column("score2") == [None, 1, None, 3, None]
    assert fields.column("note") == [None] * 4 + ["late"]
    assert fields.column("reward") is block.columns["reward"]
    assert fields.column("absent") == [None] * 5


def test_a_repeated_string_is_the_same_text_and_a_near_one_is_read_anew():
    """A value's str is reused when its raw bytes repeat the key's last one; a prefix, an
    escape that ends differently or a longer value is decoded again, as orjson reads it."""
    values = ["What is 2+2?", "What is 2+2?", "What is 2+2?!", "What is 2+2", "a\\", "a\\",
              'a\\"b', 'a\\"b', "é ✓ 𝄞", "é ✓ 𝄞", "", "", "x", "x\n", "x\n", "\u2028", 7, "7"]
    rows = [{"step": 1, "prompt": v, "reward": 0.5} for v in values]
    for ascii_only in (True, False):
        data = "".join(json.dumps(r, ensure_ascii=ascii_only) + "\n" for r in rows).encode()
        block = lines.read_block(data, 0, 1024, 1 << 20)
        assert block is not None and len(block) == len(values)
        column = block.columns["prompt"]
        assert column == [orjson_value["prompt"] for orjson_value in map(json.loads,
                                                                        data.splitlines())]
        assert column[0] is column[1] and column[4] is column[5] and column[2] is not column[1]


def test_a_token_list_is_kept_as_its_bytes_and_read_as_orjson_reads_it():
    """The C scan keeps each token list as its length and its span of the data (every
    string checked); a list asked for is the one orjson makes of the line, a sample without
    one has none, and a bad string in a list ends the run before its line."""
    tokens = [["a", " b"], [], ["é", "\\n", '"q"', "𝄞"], None, ["x" * 40, "x" * 40], [" b", "a"]]
    rows = [make_sample(1, seed=i) for i in range(len(tokens))]
    for row, listed in zip(rows, tokens):
        row.pop("response_tokens", None)
        if listed is not None:
            row["response_tokens"] = listed
    for ascii_only in (True, False):
        lines_ = [json.dumps(r, ensure_ascii=ascii_only) for r in rows]
        lines_[2] = lines_[2].replace('"response_tokens": [', '"response_tokens" :  [ ')
        data = ("\n".join(lines_) + "\n").encode()
        block = lines.read_block(data, 0, 1024, 1 << 20)
        assert block is not None and len(block) == len(rows)
        spans = block.columns["response_tokens"]
        assert isinstance(spans, lines.TokenSpans) and len(spans) == len(rows)
        assert [spans[i] for i in range(len(rows))] == tokens
        assert spans.lengths.tolist() == [-1 if t is None else len(t) for t in tokens]
        fields = block_fields.BlockFields(block)
        assert fields.lengths("response_tokens") is spans.lengths
        assert fields.raw("response_tokens")[3] is lines.MISSING
        assert fields.raw("response_tokens")[2] == tokens[2]
    bad = data.replace(b'"x', b'"\\ud800x', 1)  # a lone surrogate: orjson refuses the line
    block = lines.read_block(bad, 0, 1024, 1 << 20)
    assert block is not None and len(block) == 4


def test_keys_in_another_order_on_some_lines_read_the_same():
    """A line's next key is guessed to be the one after its last; lines whose keys come in
    another order, or with a key the run has not seen, still read each key's own value."""
    rows = [make_sample(1, seed=i) for i in range(8)]
    rows[2] = dict(reversed(list(rows[2].items())))
    rows[5] = {"extra_first": "e", **rows[5]}
    rows[6] = dict(sorted(rows[6].items()))
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    block = lines.read_block(data, 0, 1024, 1 << 20)
    assert block is not None and len(block) == len(rows)
    fields = block_fields.BlockFields(block)
    for key in ("step", "reward", "response", "prompt", "extra_first"):
        assert fields.column(key) == [r.get(key) for r in rows], key
    values, sizes = block.columns["logprobs"]
    assert values.tolist() == [x for r in rows for x in r["logprobs"]]


def test_a_key_that_begins_another_and_a_long_run_read_each_value():
    """A line's next key is matched by its bytes and a closing quote: a key that is the start
    of the expected one, or has it as its start, is its own key.  A run of more samples than
    the scan's first estimate of its size (lines.c's PROJECT_AT), cut by max_samples, holds
    every value."""
    rows = []
    for i in range(700):
        sample = make_sample(i // 100, seed=i)
        # i % 3 == 1: "reward_extra" where "reward" is expected (the run's first line's order)
        first = ("step", "reward", "reward_extra")
        if i % 3 == 1:
            first = ("step", "reward_extra", "reward")
        sample["reward_extra"] = i
        row = {**{k: sample[k] for k in first}, **sample}
        rows.append(row)
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    pos, blocks = 0, []
    while pos < len(data):
        blocks.append(lines.read_block(data, pos, 300, 1 << 30))
        pos = blocks[-1].end
    assert [len(b) for b in blocks] == [300, 300, 100]
    for key in ("reward", "reward_extra", "response"):
        got = [v for b in blocks for v in block_fields.BlockFields(b).column(key)]
        assert got == [r[key] for r in rows], key
    values = np.concatenate([b.columns["logprobs"][0] for b in blocks])
    assert values.tolist() == [x for r in rows for x in r["logprobs"]]


@pytest.mark.parametrize("special", ['\\"', "\\\\", "\\n", "\\u00e9", "é", "\x7f"])
def test_a_string_reads_alike_whatever_byte_of_eight_its_escape_falls_on(special):
    """Strings are skimmed eight bytes at a time until a quote, a backslash or a control
    byte: an escape or a non-ASCII byte at any offset reads as orjson reads it, and a raw
    control byte at any offset ends the run before its line."""
    texts = ["a" * at + special + "b" * (19 - at) for at in range(17)]
    rows = [{"step": 1, "response": json.loads(f'"{t}"'), "reward": 0.5} for t in texts]
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    block = lines.read_block(data, 0, 1024, 1 << 20)
    assert block is not None and block.columns["response"] == [r["response"] for r in rows]
    for at in range(17):
        bad = b'{"step": 1, "response": "' + b"a" * at + b"\x01" + b"b" * 12 + b'"}\n'
        assert lines.read_block(bad, 0, 1024, 1 << 20) is None, at


def test_one_token_of_a_list_is_the_string_orjson_reads_there():
    """A hot token is read alone from its list's bytes (TokenSpans.tokens, lines.c
    tokens_at): escapes, non-ASCII, blanks around the commas, every position; none past the
    end."""
    tokens = [["a", " b", "é", "\\n", '"q"', "𝄞", "x" * 40, "\u2028", "\\u00e9", ""],
              ["only"], []]
    rows = [make_sample(1, seed=i) for i in range(len(tokens))]
    for row, listed in zip(rows, tokens):
        row["response_tokens"] = listed
    for ascii_only in (True, False):
        lines_ = [json.dumps(r, ensure_ascii=ascii_only) for r in rows]
        lines_[0] = lines_[0].replace('", "', '" ,\t "')  # blanks around its commas
        data = ("\n".join(lines_) + "\n").encode()
        spans = lines.read_block(data, 0, 1024, 1 << 20).columns["response_tokens"]
        for i, listed in enumerate(tokens):
            n = len(listed)
            assert spans.tokens(np.full(n, i), np.arange(n)) == listed
            assert spans.tokens(np.array([i, i]), np.array([n, -1])) == [None, None]
    assert lines._C.tokens_at(b'["a", 1]', *(np.array([v], np.int64).tobytes()
                                             for v in (0, 8, 1))) == [None]  # not a string


def test_many_tokens_read_in_one_call_are_each_the_one_token_reads():
    """TokenSpans.tokens (lines.c tokens_at) gives the token orjson's list holds at each
    pair at once: every position of every list, past the end, before the start, a sample
    without a list; a list with a number in it reads None there (orjson's reading then)."""
    tokens = [["a", " b", "é", "\\n", '"q"', "𝄞"], [], None, ["only"]]
    rows = [make_sample(1, seed=i) for i in range(len(tokens))]
    for row, listed in zip(rows, tokens):
        row.pop("response_tokens", None)
        if listed is not None:
            row["response_tokens"] = listed
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    spans = lines.read_block(data, 0, 1024, 1 << 20).columns["response_tokens"]
    pairs = [(i, pos) for i in range(len(tokens)) for pos in range(-1, 8)]
    got = spans.tokens(np.array([i for i, _ in pairs]), np.array([p for _, p in pairs]))
    assert got == [tokens[i][pos] if tokens[i] is not None and 0 <= pos < len(tokens[i])
                   else None for i, pos in pairs]
    assert [token for token in got if token is not None] == tokens[0] + tokens[3]
    assert lines._C.tokens_at(b'["a", 1]', np.array([0, 0], np.int64).tobytes(),
                              np.array([8, 8], np.int64).tobytes(),
                              np.array([0, 1], np.int64).tobytes()) == ["a", None]
    with pytest.raises(ValueError):
        lines._C.tokens_at(b"[]", b"\0" * 8, b"", b"")


def test_hot_tokens_looked_up_at_once_across_parts_are_each_ones_lookup():
    """TokenLists.tokens over parts read in C (TokenSpans) and as parsed lists, with rows
    before the first part and past a part's end: each NO_TOKEN or the token that
    TokenLists.token gives."""
    from loaders.index.hot_tokens import NO_TOKEN, TokenLists

    rows = [make_sample(1, seed=i) for i in range(4)]
    for i, row in enumerate(rows):
        row["response_tokens"] = [f"t{i}_{k}" for k in range(i + 1)]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    spans = lines.read_block(data, 0, 1024, 1 << 20).columns["response_tokens"]
    lists = TokenLists()
    lists.add(2, spans)  # rows 2-5
    lists.add(6, [["p", "q"], None, "not a list", ["r"]])  # rows 6-9
    lists.add(12, spans)  # rows 12-15; 10 and 11 are past the second part's end
    wanted = [(row, pos) for row in range(0, 17) for pos in (-1, 0, 1, 2, 3)]
    got = lists.tokens(np.array([r for r, _ in wanted]), np.array([p for _, p in wanted]))
    assert got == [lists.token(r, p) for r, p in wanted]
    assert got[wanted.index((3, 1))] == "t1_1" and got[wanted.index((6, 1))] == "q"
    assert got[wanted.index((0, 0))] is NO_TOKEN and got[wanted.index((10, 0))] is NO_TOKEN


@pytest.mark.parametrize("odd", [
    b'{"step": 1,\n"reward": 1.0}\n',  # an object over two lines: two bad lines, not one
    b'{"step": 1, "response": "a\nb"}\n',  # a raw newline in a string
    b'{"step": 1, "response_tokens": ["a\n", "b"]}\n',  # and in a token
    b'{"step": 1, "logprobs": [0.5,\n0.25]}\n',  # a list over two lines
    b'{"step": 1}\t\x0b\n',  # a blank orjson does not take after the object
    b'{"step": 1} {"step": 2}\n',  # two objects on a line
])
def test_a_plain_run_ends_at_a_line_whose_value_runs_past_its_newline(odd):
    """The C scan parses a line up to the data's end and finds its newline where the parse
    stops: a value that would run past the newline ends the run before its line, as the
    line's own end did, and the lines after it are no part of it."""
    good = b'{"step": 1, "reward": 0.5, "response": "ok"}\n'
    data = good * 3 + b" \t\r\n" + good + odd + good
    block = lines.read_block(data, 0, 1024, 1 << 20)
    assert block is not None and len(block) == 4 and block.lines == 5
    assert block.end == data.index(odd)
    assert lines.read_block(data, block.end, 1024, 1 << 20) is None
    tail = lines.read_block(data, len(data) - len(good), 1024, 1 << 20)
    assert len(tail) == 1 and tail.end == len(data)
    assert lines.read_block(data[:-1], len(data) - len(good), 1024, 1 << 20) is None
