"""loaders.index.parts: chunks met as Arrow tables, coded texts, mixed kinds, one sorted run."""
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from dump_files import keyed, make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.index import work


def test_a_key_that_is_a_number_in_one_file_and_text_in_another_is_text(tmp_path):
    write_dump(tmp_path / "rollout_data_rank_0.jsonl",
               [make_sample(s, tag=1.5) for s in range(3)])
    write_dump(tmp_path / "rollout_data_rank_1.jsonl",
               [make_sample(s, tag="easy") for s in range(2)] + [make_sample(2)])
    run = open_run(tmp_path, use_cache=False)
    samples = run.samples
    assert len(samples) == 6 and run.bad_lines == 0
    assert pd.api.types.is_string_dtype(samples["tag"])
    by_rank = samples.groupby(S.RANK)["tag"].apply(list).to_dict()
    assert by_rank[0] == ["1.5"] * 3
    assert by_rank[1][:2] == ["easy", "easy"] and pd.isna(by_rank[1][2])


def test_chunks_of_many_files_make_one_run_sorted_by_step_rank_file_line(tmp_path,
                                                                        monkeypatch):
    for rank in range(3):
        write_dump(tmp_path / f"rollout_data_rank_{rank}.jsonl",
                   [make_sample(s, n=4, finish_reason=("stop", "length", None)[s % 3])
                    for s in range(40)])
    whole = open_run(tmp_path, use_cache=False).samples
    monkeypatch.setattr(work, "CHUNK_BYTES", 4 << 10)  # many chunks a file
    parts = open_run(tmp_path, use_cache=False).samples
    keys = list(zip(parts[S.STEP], parts[S.RANK], parts[S.FILE].astype(str), parts[S.LINE]))
    assert keys == sorted(keys) and len(keys) == 120
    # the token digests (read by row, not in the frame) differ by chunking, by design
    pd.testing.assert_frame_equal(whole, parts)
    # coded texts (a file name, a finish reason) come back as text, nulls as ""
    finish = keyed(open_run(tmp_path, use_cache=False))[S.LAST_FINISH]  # read by row
    assert finish.tolist()[:9] == ["stop"] * 3 + ["length"] * 3 + [""] * 3
    assert set(parts[S.FILE].astype(str)) == {f"rollout_data_rank_{r}.jsonl" for r in range(3)}


@pytest.mark.parametrize("size", ["small", "threaded", "trimmed"])
def test_a_run_sorted_a_column_at_a_time_equals_one_whole_take(monkeypatch, size):
    """Columns of many chunks, taken in this thread (a small run) or on two threads (freed
    memory given back as they go, for a large run) equal one take of the whole table;
    `decoded` codes come back as text, of 64-bit offsets (as pandas' text holds it: the
    frame's conversion copies none)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from loaders.index import parts

    monkeypatch.setattr(parts, "WHOLE_TAKE_BYTES", 0 if size == "trimmed" else 1 << 40)
    monkeypatch.setattr(parts, "THREADED_TAKE_ROWS", 1 << 40 if size == "small" else 0)
    on_takers, threaded = parts._on_takers, []
    monkeypatch.setattr(parts, "_on_takers", lambda *a: threaded.append(a[2]) or on_takers(*a))
    rng = np.random.default_rng(4)
    columns = {f"c{i}": rng.normal(size=50) for i in range(2 * parts.TAKEN_AT_ONCE + 3)}
    columns["text"] = [f"t{i}" for i in range(50)]
    columns["codes"] = pa.array([f"k{i % 3}" for i in range(50)]).dictionary_encode()
    columns["kept"] = pa.array([f"k{i % 2}" for i in range(50)]).dictionary_encode()
    whole = pa.table(columns).replace_schema_metadata({"pandas": "{}"})
    table = pa.concat_tables([whole.slice(0, 20), whole.slice(20, 7), whole.slice(27)])
    assert table.column("c0").num_chunks == 3
    order = pc.sort_indices(table, sort_keys=[("c0", "ascending")])
    held = [table]
    got = parts._taken(held, order, frozenset({"codes", "text"}))
    want = whole.take(order)
    want = want.set_column(want.schema.get_field_index("codes"), "codes",
                           want.column("codes").cast(pa.large_string()))
    assert got.equals(want) and held == []
    assert got.schema.metadata == whole.schema.metadata
    assert got.schema.field("kept").type == whole.schema.field("kept").type  # not decoded
    assert threaded == {"small": [], "threaded": [False], "trimmed": [True]}[size]


def test_stored_text_beside_new_coded_text_is_decoded_by_arrow_not_made_text_in_python():
    import pyarrow as pa

    from loaders.index.arrow_part import same_types

    stored = pa.table({S.FILE: pa.array(["a.jsonl"] * 3), "n": pa.array([1, 2, 3])})
    new = pa.table({S.FILE: pa.array(["b.jsonl"]).dictionary_encode(), "n": pa.array([4])})
    same = same_types([stored, new])
    assert same[0] is stored  # the big stored part is left as it is
    assert same[1].schema.field(S.FILE).type == pa.string()
    assert same[1].column(S.FILE).to_pylist() == ["b.jsonl"]
    mixed = pa.table({S.FILE: pa.array([7]), "n": pa.array([5])})  # numbers beside text
    assert same_types([stored, mixed])[1].column(S.FILE).to_pylist() == ["7"]


def test_coded_file_names_sort_by_their_ranks_as_their_texts_do():
    """A coded sort key (the file names) is sorted by the ranks of its texts: the order a
    sort of the texts gives, the names kept as codes until they are taken."""
    import pyarrow as pa

    from loaders.index import parts

    names = ["rank_10.jsonl", "rank_2.jsonl", "a.jsonl", "rank_10.jsonl", "b.jsonl", "a.jsonl"]
    chunks = [pa.array(names[:3]).dictionary_encode(), pa.array(names[3:]).dictionary_encode()]
    table = pa.table({S.STEP: pa.chunked_array([pa.array([1, 0, 1]), pa.array([0, 1, 0])]),
                      S.FILE: pa.chunked_array(chunks), "n": pa.chunked_array(
                          [pa.array([0, 1, 2]), pa.array([3, 4, 5])])})
    table = table.unify_dictionaries()
    ranks = parts._text_ranks(table.column(S.FILE))
    assert ranks is not None
    by_rank = sorted(range(6), key=lambda i: (ranks.to_pylist()[i], i))
    assert [names[i] for i in by_rank] == sorted(names)
    got = parts.sorted_parts([table], frozenset({S.FILE}))
    want = sorted(zip([1, 0, 1, 0, 1, 0], names, range(6)))
    assert got.column(S.FILE).to_pylist() == [name for _, name, _ in want]
    assert got.column("n").to_pylist() == [n for _, _, n in want]
    assert got.schema.field(S.FILE).type == pa.large_string()  # decoded as it was taken
    with_null = pa.chunked_array([pa.array(["a", None]).dictionary_encode()])
    assert parts._text_ranks(with_null) is None  # nulls: sorted as filled text instead


def test_a_sort_of_parts_in_order_copies_their_runs_and_equals_a_take():
    """Parts each in order sort as runs of rows: the number and text columns without nulls
    are copied run by run out of their chunks (kernel.gather, gather_text), a run across
    chunks too, and equal a take; a column with nulls and flags are taken as before."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from loaders.index import kernel, parts
    from loaders.index import runs as runs_of_parts

    if kernel.MISSING:
        pytest.skip(kernel.MISSING)
    rng = np.random.default_rng(5)
    steps = np.concatenate([np.repeat(np.arange(20), 16), np.repeat(np.arange(20), 16)])
    whole = pa.table({S.STEP: steps, "x": rng.normal(size=640), "n": np.arange(640),
                      "i32": pa.array(np.arange(640, dtype=np.int32)),
                      "nulls": pa.array([None if i % 7 else 1.0 for i in range(640)]),
                      "flag": np.arange(640) % 3 == 0, "text": [f"t{i}" for i in range(640)],
                      "utf8": ["" if i % 5 == 0 else "é✓𝄞" * (i % 4) for i in range(640)],
                      "bytes": [bytes([i % 256]) * (i % 3) for i in range(640)]})
    table = pa.concat_tables([whole.slice(0, 100), whole.slice(100, 0), whole.slice(100, 350),
                              whole.slice(450)])  # runs that cross chunks, an empty chunk
    order = pc.sort_indices(table, sort_keys=[(S.STEP, "ascending")])
    runs = runs_of_parts.runs_of(order)
    assert runs is not None and len(runs[0]) == 40 and runs[1].sum() == 640
    for name in ("x", "n", "i32", "text", "utf8", "bytes"):
        want = whole.column(name).take(order).combine_chunks()
        got = runs_of_parts.gathered(table.column(name), runs)
        got.validate(full=True)
        assert got.equals(want), name
    for name in ("nulls", "flag"):
        assert runs_of_parts.gathered(table.column(name), runs) is None
    assert parts._taken([table], order, frozenset()).equals(whole.take(order))
    assert runs_of_parts.runs_of(pa.array(rng.permutation(640).astype(np.uint64))) is None  # a take


@pytest.mark.parametrize("kind", ["string", "large_string"])
def test_coded_text_sorted_by_runs_is_decoded_as_arrow_casts_it(kind):
    """A coded text column (a prompt preview) whose chunks share one dictionary is sorted
    by its codes' runs and decoded in C (kernel.decode_text) to the text a take and a cast
    give, or kept coded as a take keeps it; other dictionaries, nulls, or a code out of the
    dictionary are left to Arrow."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from loaders.index import kernel
    from loaders.index import runs as R

    if kernel.MISSING:
        pytest.skip(kernel.MISSING)
    texts = ["", "What is 2+2?", "é ✓ 𝄞", "x" * 300]
    whole = pa.table({S.STEP: np.concatenate([np.repeat(np.arange(10), 8)] * 2),
                      "prompt": pa.array([texts[i % 4] for i in range(160)]).dictionary_encode()})
    table = pa.concat_tables([whole.slice(0, 30), whole.slice(30, 0), whole.slice(30, 50),
                              whole.slice(80)]).unify_dictionaries()
    order = pc.sort_indices(table, sort_keys=[(S.STEP, "ascending")])
    runs = R.runs_of(order)
    kind = getattr(pa, kind)()  # large_string: what pandas' text holds, so it copies none
    got = R.gathered(table.column("prompt"), runs, kind)
    got.validate(full=True)
    want = whole.column("prompt").take(order).cast(kind).combine_chunks()
    assert got.type == kind and got.equals(want)
    kept = R.gathered(table.column("prompt"), runs)  # kept coded: its codes gathered
    assert kept.type == table.column("prompt").type
    assert kept.equals(table.column("prompt").combine_chunks().take(order))
    other = pa.chunked_array([pa.array(["a", "b"] * 40).dictionary_encode(),
                              pa.array(["b", "a"] * 40).dictionary_encode()])
    assert R.gathered(other, runs, pa.string()) is None  # two dictionaries: a cast then
    nulls = pa.chunked_array([pa.array(["a", None] * 80).dictionary_encode()])
    assert R.gathered(nulls, runs, pa.string()) is None
    codes = np.arange(5, dtype=np.int32)
    offsets, data = np.array([0, 1, 2], np.int32), b"ab"
    assert kernel.decode_text(codes, offsets, data) is None  # a code past the dictionary
    assert kernel.decode_text(codes[:2], offsets, data) == (
        np.array([0, 1, 2], np.int32).tobytes(), b"ab")
    assert kernel.decode_text(codes[1::-1], offsets, data, True) == (
        np.array([0, 1, 2], np.int64).tobytes(), b"ba")


@pytest.mark.parametrize("kind", ["string", "large_string"])
@pytest.mark.parametrize("text", ["", "length", "é ✓ 𝄞"])
def test_a_coded_column_of_one_text_is_laid_out_whole_as_a_cast_makes_it(text, kind):
    """A coded text column whose one dictionary holds one text (an empty finish reason on
    every row) is laid out at once, not decoded a row at a time: the text a take and a cast
    give, over chunks, an empty one and slices."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from loaders.index import runs as R

    whole = pa.table({S.STEP: np.concatenate([np.repeat(np.arange(10), 8)] * 2),
                      "reason": pa.array([text] * 160).dictionary_encode()})
    table = pa.concat_tables([whole.slice(0, 30), whole.slice(30, 0), whole.slice(30, 50),
                              whole.slice(80)]).unify_dictionaries()
    order = pc.sort_indices(table, sort_keys=[(S.STEP, "ascending")])
    kind = getattr(pa, kind)()
    got = R.gathered(table.column("reason"), R.runs_of(order), kind)
    got.validate(full=True)
    assert got.equals(whole.column("reason").take(order).cast(kind).combine_chunks())
    assert len(got.buffers()[2] or b"") == 160 * len(text.encode())


def test_file_names_coded_by_arrow_become_the_categories_typed_makes_of_their_texts():
    """The file column stays codes through the sort; its categories come out sorted, without
    the names no row has, as astype("category") of the texts makes them."""
    import pyarrow as pa

    from loaders.index.table import _file_names

    coded = pa.DictionaryArray.from_arrays(pa.array([2, 0, 2, 1, 0], pa.int32()),
                                           pa.array(["r_2.jsonl", "a.jsonl", "r_10.jsonl",
                                                     "unused.jsonl"]))
    got = _file_names(pa.table({"f": coded}).to_pandas()["f"])
    texts = pd.Series(coded.cast(pa.string()).to_pylist(), dtype="string")
    pd.testing.assert_series_equal(got, texts.astype("category"), check_names=False)
    assert list(got.cat.categories) == ["a.jsonl", "r_10.jsonl", "r_2.jsonl"]


@pytest.mark.parametrize("seed", range(40))
def test_the_sort_order_of_packed_keys_equals_arrows_sort_indices(seed):
    """Keys packed into one int64 sort as Arrow sorts them, ties in row order; keys that do
    not fit 63 bits together, or that are not whole numbers, go to Arrow itself."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from loaders.index.runs import sort_order

    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 3000))
    spans = [int(rng.choice([1, 2, 9, 1000, 1 << 20, 1 << 40, 1 << 62])) for _ in range(5)]
    kinds = [pa.int64(), pa.uint64(), pa.int32(), pa.int64(), pa.int64()]
    if seed % 10 == 7:  # many ties: their rows must keep their order
        spans = [2, 1, 3, 2, 1]
    # every key in the same chunks, as a concatenation of parts gives them (packed a chunk
    # at a time), or each cut apart (joined first)
    shared = sorted(int(c) for c in rng.integers(0, n + 1, 5)) if seed % 2 else None
    keys = []
    for span, kind in zip(spans, kinds):
        low = 0 if pa.types.is_unsigned_integer(kind) else int(rng.integers(-5, 5))
        if kind == pa.int32():
            span = min(span, 1 << 30)
        values = [low + int(v) % span for v in rng.integers(0, 1 << 62, n)]
        cuts = [0, *(shared or [int(rng.integers(0, n + 1))]), n]
        keys.append(pa.chunked_array([pa.array(values[a:b], kind)
                                      for a, b in zip(cuts, cuts[1:])], kind))
    if seed % 10 == 9:
        keys[2] = pa.chunked_array([pc.cast(keys[2].combine_chunks(), pa.float64())])
    if seed % 10 == 8:  # a uint64 past int64's range
        keys[1] = pa.chunked_array([pa.array([(1 << 63) + i % 3 for i in range(n)],
                                             pa.uint64())])
    table = pa.table({str(at): key for at, key in enumerate(keys)})
    want = pc.sort_indices(table, sort_keys=[(name, "ascending") for name in table.column_names])
    assert sort_order(keys).to_numpy().tolist() == want.to_numpy().tolist()


@pytest.mark.parametrize("values", [
    np.arange(5), np.array([1.5, np.nan, -0.0]), np.array([True, False, True] * 5),
    np.arange(10, dtype=np.int32)[::2], np.array([], float), np.array([1, 2], np.uint8),
    np.array([1.0, 2.0], np.float32)])
def test_a_worker_column_is_the_array_pa_array_makes(values):
    """table_of lays numbers and bools out itself (not through pa.array's checks for pandas
    objects): the same arrays."""
    from loaders.index.arrow_part import table_of

    got, want = table_of({"c": values}).column("c").chunk(0), pa.array(values)
    got.validate(full=True)
    assert (got.type, got.null_count, got.is_null().to_pylist()) == (
        want.type, want.null_count, want.is_null().to_pylist())
    assert str(got.to_pylist()) == str(want.to_pylist())  # NaN and -0.0 as they are


def test_coded_text_with_nulls_keeps_its_nulls_as_pa_array_does():
    from loaders.index.arrow_part import table_of
    from loaders.index.chunk import Coded

    codes = np.array([0, -1, 1, 0], np.int32)
    got = table_of({"c": Coded(codes, ["a", "b"])}).column("c").chunk(0)
    want = pa.DictionaryArray.from_arrays(pa.array(codes, mask=codes < 0), pa.array(["a", "b"]))
    got.validate(full=True)
    assert got.to_pylist() == want.to_pylist() == ["a", None, "b", "a"]
    assert got.indices.null_count == 1


def test_a_parts_line_numbers_are_shifted_by_a_number_or_row_by_row():
    from loaders.index.parts import shifted

    part = pa.table({S.LINE: pa.array([1, 2, None], pa.int64()), "x": [0.5, 1.5, 2.5]})
    assert shifted(part, 0) is part  # a file's first chunk: nothing to add
    assert shifted(part, np.int64(40)).column(S.LINE).to_pylist() == [41, 42, None]
    by_row = shifted(part, np.array([10, 10, 20]))
    assert by_row.column(S.LINE).to_pylist() == [11, 12, None]
    assert by_row.column("x").equals(part.column("x"))
    narrow = pa.table({S.LINE: pa.array([1, 2], pa.int32())})
    assert shifted(narrow, 0).column(S.LINE).type == pa.int64()  # as any shift makes it
