"""loaders/index/kernel: the C loops give the Python path's numbers, bit for bit, or None.

Each function is checked against the Python it stands in for on values made to reach its
edges (every string kind, Unicode whitespace, long tails, odd numbers), and a whole dump is
summarized twice, with the C module and without it, to the same columns.
"""
import random
import subprocess
import sys
from itertools import chain
from pathlib import Path

import numpy as np
import orjson
import pytest

from loaders import schema as S
from loaders.index import kernel
from loaders.index.repetition import _MIN_CHARS, MIN_WORDS, repetition
from loaders.index.summary import SummaryBatch

ROOT = Path(__file__).resolve().parents[2]


def test_the_kernel_is_built_from_the_source_beside_it():
    # tests/run.sh builds it: a run without it would test only the Python path
    assert kernel.MISSING == "", kernel.MISSING


def test_a_kernel_built_from_another_source_is_not_used(tmp_path):
    copy = tmp_path / "loaders"
    subprocess.run(["cp", "-r", str(ROOT / "loaders"), str(copy)], check=True)
    (copy / "index" / "kernel.c").write_text((copy / "index" / "kernel.c").read_text() + "\n")
    out = subprocess.run([sys.executable, "-c", "from loaders.index import kernel; "
                          "print(kernel.MISSING); print(kernel.flat_heads([[1.0]], [1]))"],
                         cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert "another kernel.c" in out and out.strip().endswith("None")


_SPACES = [" ", "  ", "\n", "\t", "\u3000", "\xa0", "\x1c", "\u2028", "\x85", " \r\n "]
_WORDS = ["the", "answer", "is", "4.", "x", "é", "日本", "\U0001f600", "a\u200bb", "",
          "thé", "ÿ", "Ā"]


def _text(rng: random.Random) -> str:
    vocab = rng.sample(_WORDS, rng.randint(1, len(_WORDS)))
    words = [rng.choice(vocab) for _ in range(rng.choice([3, 15, 16, 17, 40, 400, 900]))]
    text = "".join(w + rng.choice(_SPACES) for w in words)
    return rng.choice(["", " ", "\u3000"]) + text[: rng.choice([len(text), 31, 1023, 1024,
                                                                   1025, 3000])]


def test_repetitions_equal_the_python_scores():
    rng = random.Random(7)
    texts = [_text(rng) for _ in range(3000)] + [
        "a " * 600, "é " * 15 + "é", "x" * 5000, "", " " * 2000, "w" * 31, "\U0001f600 " * 700]
    fast = kernel.repetitions(texts, S.REPETITION_CHARS, MIN_WORDS, _MIN_CHARS)
    slow = [repetition(t) if len(t) >= _MIN_CHARS else 0.0 for t in texts]
    assert fast.tolist() == slow
    assert 0.0 < max(slow) < 1.0  # the texts reach both ends
    assert kernel.repetitions(["a b", 3], S.REPETITION_CHARS, MIN_WORDS, _MIN_CHARS) is None


def _fromiter(parts, lengths):
    heads = [p if len(p) == n else p[:n] for p, n in zip(parts, lengths)]
    return np.fromiter(chain.from_iterable(heads), np.float64, sum(lengths))


def test_flat_heads_equal_fromiter():
    rng = random.Random(3)
    kinds = [lambda: rng.uniform(-30, 1), lambda: rng.randint(-5, 5), lambda: None,
             lambda: True, lambda: 2 ** 62 + 1, lambda: float("inf"), lambda: -0.0,
             lambda: 10 ** 300]
    parts = [[rng.choice(kinds)() for _ in range(rng.randint(0, 40))] for _ in range(500)]
    lengths = [rng.randint(0, len(p)) for p in parts]
    fast = kernel.flat_heads(parts, lengths)
    assert fast.tobytes() == _fromiter(parts, lengths).tobytes()


@pytest.mark.parametrize("odd", [["1.5"], [[1.0]], [10 ** 400], [{}], (1.0,)])
def test_flat_heads_leave_odd_values_to_python(odd):
    assert kernel.flat_heads([[0.5, 1.0], odd], [2, 1]) is None


def test_flat_heads_refuse_a_list_shorter_than_its_length():
    assert kernel.flat_heads([[0.5]], [2]) is None


def test_head_sums_equal_builtin_sum():
    if sys.version_info >= (3, 12):
        pytest.skip("3.12's sum compensates: the kernel leaves it to Python")
    rng = random.Random(5)
    parts = [[rng.choice([rng.uniform(-1e3, 1e3), rng.randint(-9, 9), True, 1e-17, 2 ** 60])
              for _ in range(rng.randint(0, 60))] for _ in range(500)] + ["text", None, {}]
    lengths = [rng.randint(0, len(p) + 3) if isinstance(p, list) else 4 for p in parts]
    fast = kernel.head_sums(parts, lengths)
    slow = [sum(p[:n], 0.0) if p.__class__ is list and n else float("nan")
            for p, n in zip(parts, lengths)]
    assert fast.tobytes() == np.array(slow).tobytes()
    assert kernel.head_sums([[1.0, None]], [2]) is None
    assert kernel.head_sums([[1.0, 2 ** 70]], [2]) is None


def _lines(rng: random.Random) -> list[dict]:
    """Samples of the board's format, with some odd values among them."""
    out = []
    for i in range(400):
        n = rng.randint(0, 70)
        obj = {"step": i // 50, "prompt": f"q{i % 37} " * rng.randint(1, 9),
               "response": " ".join(rng.choice(["go", "on", "é", "x"]) for _ in range(
                   rng.randint(0, 300))),
               "response_tokens": [f"t{j}" for j in range(n)],
               "logprobs": [rng.uniform(-5, 0) for _ in range(n)],
               "ref_logprobs": [rng.uniform(-5, 0) for _ in range(n + rng.choice([0, 0, 2]))],
               "values": [rng.uniform(-1, 1) for _ in range(n)],
               "token_rewards": [rng.choice([0, 0.0, 1e-3]) for _ in range(n)],
               "reward": rng.random()}
        odd = rng.randrange(12)
        if odd == 0 and n:
            obj["logprobs"][0] = None
        elif odd == 1 and n:
            obj["values"][-1] = "0.5"
        elif odd == 2:
            obj["token_rewards"] = 3
        elif odd == 3 and n:
            obj["ref_logprobs"][n // 2] = True
        elif odd == 4:
            obj["response"] = [{"role": "assistant", "content": "a b c d " * 9}]
        out.append(orjson.loads(orjson.dumps(obj)))
    return out


def _summary(objs: list[dict]) -> tuple[dict, list]:
    batch, problems = SummaryBatch(), []
    for i, obj in enumerate(objs):
        batch.add(obj, (S.FILE, i + 1, 0, i, 9, 0, 0), problems)
    return batch.finish(), problems


def test_a_dump_summarizes_to_the_same_columns_with_and_without_the_kernel(monkeypatch):
    objs = _lines(random.Random(11))
    with_c, problems_c = _summary(objs)
    monkeypatch.setattr(kernel, "_C", None)
    without, problems_py = _summary(objs)
    assert problems_c == problems_py and problems_c  # the odd values were reported
    assert with_c.keys() == without.keys()
    for name, column in with_c.items():
        other = without[name]
        if isinstance(column, np.ndarray):
            assert column.tobytes() == other.tobytes(), name
        else:
            assert column == other, name


def test_column_and_list_lengths_equal_their_comprehensions():
    objs = [{"a": [1, 2]}, {}, {"a": None}, {"a": "text"}, {"a": {"k": 1}}, {"a": (1,)},
            {"a": 3.5}, {"a": True}, {"a": []}, {"b": 1}]
    values = kernel.column(objs, "a")
    assert values == [o.get("a") for o in objs]
    assert [v is o.get("a") for v, o in zip(values, objs)] == [True] * len(objs)
    lengths = kernel.list_lengths(values)
    assert lengths.tolist() == [len(v) if isinstance(v, list) else -1 for v in values]
    assert kernel.list_lengths([[1], np.zeros(3)]) is None  # an array: measured by Python
    assert kernel._C.column([{"a": 1}, ["not a dict"]], "a") is None  # Python's path reads it


def test_list_lengths_leave_a_list_subclass_to_python():
    class Sized(list):  # as loaders.parse.columnar.Tokens: a len of its own
        def __len__(self):
            return 7

    assert kernel.list_lengths([[1], Sized()]) is None


def test_take_reads_every_key_in_one_pass_as_column_does():
    objs = [{"a": 1, "b": [2]}, {"b": None}, {"c": "x"}]
    taken = kernel.take(objs, ("a", "b", "c", "d"))
    assert taken == [kernel.column(objs, k) for k in ("a", "b", "c", "d")]
    assert kernel.take([{"a": 1}, "no dict"], ("a",)) is None


def test_column_takes_any_key_a_dict_can_hold():
    objs = [{1: "one"}, {}]
    assert kernel.column(objs, 1) == ["one", None]


def test_odd_containers_and_numbers_go_to_python():
    class Lazy(list):  # a list subclass with a len of its own, as the outer list
        def __len__(self):
            return 3

    class Twisted(int):
        def __float__(self):
            return 99.0

    assert kernel.list_lengths(Lazy([[1, 2]])) is None
    assert kernel._C.column(Lazy([{"a": 1}]), "a") is None
    assert kernel.take(Lazy([{"a": 1}]), ("a",)) is None
    assert kernel.repetitions(Lazy(["a b"]), 1024, 16, 31) is None
    assert kernel.flat_heads([[Twisted(5)]], [1]) is None  # np.fromiter calls __float__
    with pytest.raises(ValueError):
        kernel.repetitions(["a b"], 2 ** 61, 16, 31)  # the buffers would not fit


def test_previews_equal_the_python_cuts(monkeypatch):
    from loaders.index import text_preview

    rng = random.Random(5)
    alphabet = "ab \n\t…é€😀\u3000"  # 1-, 2-, 3- and 4-byte characters, Unicode spaces
    texts = ["", "x", "é" * S.PREVIEW_CHARS, "😀" * (S.PREVIEW_CHARS + 1)] + [
        "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 3 * S.PREVIEW_CHARS)))
        for _ in range(300)]
    fast = [text_preview.previews(texts, tail) for tail in (False, True)]
    monkeypatch.setattr(kernel, "_C", None)
    slow = [text_preview.previews(texts, tail) for tail in (False, True)]
    for (a_len, a_cut), (b_len, b_cut) in zip(fast, slow):
        assert a_len.tolist() == b_len.tolist() and a_cut == b_cut
    assert fast[1][1][3] == "…" + "😀" * (S.PREVIEW_CHARS - 1)
    assert kernel.previews(["ok", 3], 4, False) is None  # no str: the Python path


def test_all_strings_is_exactly_str_as_the_type_set_says():
    class Text(str):
        pass

    cases = [[], ["a", "", "é"], ["a", None], ["a", Text("b")], [1, "a"], ["a", b"b"],
             ["x"] * 1000 + [{"content": "y"}]]
    for values in cases:
        assert kernel.all_strings(values) == (set(map(type, values)) <= {str}), values
    assert kernel.all_strings(np.array(["a"], dtype=object))  # not a list: Python's check


def test_text_ids_equal_the_python_ids_across_blake2b_blocks():
    """BLAKE2b written out in C equals hashlib's on texts around its 128-byte blocks, after
    a key's prefix, with lone surrogates, and with unpadded's edge cases left to Python."""
    from loaders.index.grouping import PAD_EDGES, group_id, prompt_id

    rng = random.Random(7)
    pieces = ["a", " ", "\n", "é", "中", "😀", "<", ">", "|", "\t", "\u3000", "\ud800",
              "<PAD>", "<|endoftext|>"]
    texts = []
    for size in (0, 1, 2, 50, 118, 119, 120, 127, 128, 129, 255, 256, 257, 1000):
        for _ in range(8):
            texts.append("".join(rng.choice(pieces) for _ in range(size)))
            if rng.random() < 0.4:  # a GRPO group's repeat: the same object, or an equal one
                texts.append(texts[-1] if rng.random() < 0.5 else "".join(texts[-1]))
    prompts = kernel.text_ids(texts, "", prompt_id, PAD_EDGES)
    assert prompts.tolist() == [prompt_id(text) for text in texts]
    uids = kernel.text_ids(texts, "uid\0", lambda text: group_id("uid", text))
    assert uids.tolist() == [group_id("uid", text) for text in texts]
    assert kernel.text_ids(["a", 1], "", prompt_id) is None  # no str: the Python path
    assert kernel.text_ids(("a",), "", prompt_id) is None  # no list


def test_prompt_and_group_ids_are_the_same_with_and_without_the_kernel(monkeypatch):
    from loaders.index.group_columns import _text_group_ids
    from loaders.index.grouping import PAD_EDGES, prompt_id
    from loaders.index.text_columns import _PromptIds

    texts = [f"{i // 8}-x\ud800" if i % 50 == 0 else f" {i // 8}-{'é' * (i % 300)}<pad>"[
        i % 2:] for i in range(2000)]
    fast = _text_group_ids("uid", texts), kernel.text_ids(texts, "", prompt_id, PAD_EDGES)
    monkeypatch.setattr(kernel, "_C", None)
    assert kernel.text_ids(texts, "", prompt_id, PAD_EDGES) is None
    assert fast[0].tolist() == _text_group_ids("uid", texts).tolist()
    assert fast[1].tolist() == _PromptIds().of(texts).tolist()


def test_codes_equal_the_python_coded_columns(monkeypatch):
    from loaders.index.chunk import Coded, coded

    rng = random.Random(3)
    texts = ["a", "b", "é", "", None, "x" * 50]
    cases = [[], ["a"], [None, None], ["a", 1], ["a"] * 9 + [b"b"]] + [
        [rng.choice(texts[:rng.randint(1, 6)]) for _ in range(rng.choice([2, 3, 5, 10, 100]))]
        for _ in range(400)]
    cases += [["".join(v) if v else v for v in case] for case in cases[5:100]]  # equal texts
    fast = [coded(case) for case in cases]
    monkeypatch.setattr(kernel, "_C", None)
    for case, got in zip(cases, fast):
        want = coded(case)
        assert type(got) is type(want), case
        if isinstance(want, Coded):
            assert got.codes.tolist() == want.codes.tolist() and got.texts == want.texts, case
        else:
            assert got is case  # as it is


@pytest.mark.parametrize("values", [
    ["a", "", "é ✓ 𝄞", "x" * 5000, "\x00\n\"", "\u2028"],
    [None, "a", None, None, "bé", None, None, None, None, "c"],  # nulls past a byte of bits
    ["only"], [""] * 9,
])
def test_utf8_buffers_make_the_array_pa_array_makes(values):
    import pyarrow as pa

    from loaders.index.arrow_part import _strings

    made = _strings(values)
    want = pa.array(values)
    assert made is not None and made.type == want.type == pa.string()
    made.validate(full=True)
    assert made.equals(want) and made.null_count == want.null_count
    assert made.to_pylist() == values


@pytest.mark.parametrize("values", [[], [None, None], ["a", 1], ["a", 1.5], ["a", b"b"],
                                    ["a", "\ud800"], ("a", "b")])
def test_utf8_leaves_what_is_not_plain_text_to_arrow(values):
    if isinstance(values, tuple):
        with pytest.raises(TypeError):
            kernel.utf8(values)
    else:
        assert kernel.utf8(values) is None


def test_kl_sums_are_numpys_reduceat_sums_bit_for_bit():
    """The KL estimators' segment sums made in one C pass (numpy's pairwise order: a
    segment's first value plus the pairwise sum of the rest, from -0.0 under 8 values, eight
    running sums to 128, halves past that) equal kl.segment_sums' numpy passes, bit for bit:
    segments of 1 to 3,000 tokens, -0.0, subnormals, and an expm1 that overflows."""
    from loaders.index.kl_columns import _segment_sums
    from loaders.parse import kl

    rng = np.random.default_rng(1)
    for trial in range(600):
        lengths = rng.integers(1, rng.choice([4, 20, 300, 3000]), size=rng.integers(1, 30))
        r = rng.normal(size=lengths.sum()) * 10.0 ** rng.integers(-6, 2, size=lengths.sum())
        if trial % 4 == 0:
            r[rng.integers(0, len(r), max(1, len(r) // 10))] = -0.0
        if trial % 7 == 0:
            r[rng.integers(0, len(r), 2)] = rng.choice([700.0, -700.0, 1e-310])
        starts = np.cumsum(lengths) - lengths
        want, got = kl.segment_sums(r, starts), _segment_sums(r, starts, lengths)
        with np.errstate(over="ignore"):
            assert kernel.kl_sums(r, np.expm1(-r), np.expm1(r), lengths) is not None
        for name, values in want.items():
            assert np.asarray(values).tobytes() == np.asarray(got[name]).tobytes(), (
                trial, name)
    zeros = np.full(45, -0.0)  # segments of -0.0 alone: numpy's sum starts from -0.0
    lengths = np.arange(1, 10)
    got = _segment_sums(zeros, np.cumsum(lengths) - lengths, lengths)[S.K1]
    assert got.tobytes() == np.full(9, -0.0).tobytes()
    assert kernel.kl_sums(np.zeros(3), np.zeros(3), np.zeros(3), np.array([2, 0, 1])) is None
    assert kernel.kl_sums(np.zeros(3), np.zeros(2), np.zeros(3), np.array([3])) is None


class _Float(float):
    pass


@pytest.mark.parametrize("seed", range(20))
def test_numbers_read_a_list_as_numpy_reads_it(seed):
    """kernel.numbers is np.array(values, float64) with None as NaN, bit for bit, for lists
    of exactly float, int, bool and None; any other item, or an int past a double, leaves the
    list to Python (None)."""
    import math

    from loaders.index.field_columns import numbers

    rng = random.Random(seed)
    pool = [0.1, -0.0, math.inf, -math.inf, math.nan, 1e308, 5e-324, 2 ** 53 + 1, -(2 ** 63),
            2 ** 64 + 3, 10 ** 300, True, False, None, 0, -7, 3.0]
    values = [rng.choice(pool) for _ in range(rng.randint(0, 200))]
    got = kernel.numbers(values)
    want = np.array([math.nan if v is None else v for v in values], dtype=np.float64)
    assert got is not None and got.tobytes() == want.tobytes()
    assert got.flags.writeable
    assert numbers(values).tobytes() == want.tobytes()
    for odd in ("1.5", _Float(1.5), 10 ** 400, [1.0], np.float64(1.0)):
        at = rng.randint(0, len(values))
        assert kernel.numbers(values[:at] + [odd] + values[at:]) is None
    assert numbers(values + [10 ** 400]) is None  # as numpy: no double holds it


def test_whole_numbers_read_ints_as_numpy_reads_them():
    """kernel.whole_numbers is np.array(values, int64) for a list of ints within int64, and
    numpy's own reading (its errors too) for anything else."""
    values = [0, -1, 2 ** 63 - 1, -(2 ** 63), 999, 7]
    got = kernel.whole_numbers(values)
    assert got.dtype == np.int64 and got.tolist() == values and got.flags.writeable
    assert kernel._C.whole_numbers(values + [True]) is None  # numpy reads a bool as 1
    assert kernel.whole_numbers(values + [True]).tolist() == values + [1]
    assert kernel._C.whole_numbers([2 ** 63]) is None
    with pytest.raises(OverflowError):
        kernel.whole_numbers([1, 2 ** 63])
    with pytest.raises(TypeError):
        kernel.whole_numbers([1, None])
    assert kernel.whole_numbers([]).tolist() == []


def test_one_byte_texts_split_at_every_latin1_space_as_str_split_does(monkeypatch):
    """A text of code points below 256 is split by a table of them (kernel.c SPACE1): every
    one str.isspace() calls a space (\\x1c-\\x1f, \\x85, \\xa0 too) splits words there, and the
    repetition scores and signatures equal the Python ones."""
    from loaders.index.signatures import signatures

    spaces = [chr(c) for c in range(256) if chr(c).isspace()]
    assert {"\x1c", "\x85", "\xa0"} <= set(spaces)
    words = ["the", "Answer", "IS", "42", "x=7", "é", "Ünï", "ß", "\xff\xfe", "ab\x84cd"]
    rng = random.Random(11)
    texts = []
    for _ in range(400):
        n = rng.choice([2, 3, 16, 17, 60, 400])
        text = "".join(rng.choice(words) + rng.choice(spaces) for _ in range(n))
        texts.append(text[: rng.choice([len(text), 40, 1024, 1700])])
    assert all(max(map(ord, t), default=0) < 256 for t in texts)
    fast = kernel.repetitions(texts, S.REPETITION_CHARS, MIN_WORDS, _MIN_CHARS)
    assert fast.tolist() == [repetition(t) if len(t) >= _MIN_CHARS else 0.0 for t in texts]
    assert max(fast) > 0.0
    bands = signatures(texts)
    monkeypatch.setattr(kernel, "_C", None)
    assert (bands == signatures(texts)).all()
