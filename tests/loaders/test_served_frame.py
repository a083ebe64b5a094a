"""loaders.index.served_frame: a first index made as a run serves it equals the whole frame
made by table.combine, then served (previews.without_texts and held), and its index file's
table equals the whole frame's, pandas' metadata included."""
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from loaders import schema as S
from loaders.index.previews import HeldPreviews, held, stored_frame, without_texts
from loaders.index.served_frame import combine_served, index_table
from loaders.index.table import combine


def _parts(coded: bool) -> list[pa.Table]:
    """Two parts as workers send them: out of order, one without ground truths, digests on
    a few rows, a finish reason on one part only (it decides truncation), and (`coded`)
    prompts as int32 codes of text, the parts' dictionaries not the same."""
    def part(rank: int, steps: list[int], extra: dict) -> pa.Table:
        n = len(steps)
        columns = {S.FILE: [f"r{rank}.jsonl"] * n, S.LINE: list(range(1, n + 1)),
                   S.RANK: [rank] * n, S.STEP: steps, S.NAN_COUNT: [0] * n,
                   S.RESPONSE_LEN: [4, 9, 9, 2][:n],
                   S.PROMPT: [f"q{s % 2} ✓" for s in steps],
                   S.RESPONSE: [f"a{rank}{i}" if i != 1 else None for i in range(n)],
                   S.OFFSET: [10 * i for i in range(n)], S.NBYTES: [5] * n,
                   S.LINE_CHECK: [7 + i for i in range(n)],
                   S.TOKEN_DIGEST: [b"\x00d" if i == 0 else None for i in range(n)], **extra}
        table = pa.table(columns)
        if coded:
            at = table.schema.get_field_index(S.PROMPT)
            codes = pc.dictionary_encode(table.column(at)).cast(
                pa.dictionary(pa.int32(), pa.string()))
            table = table.set_column(at, S.PROMPT, codes)
        return table
    return [part(1, [3, 1, 2], {S.GROUND_TRUTH: ["7", "8", "9"]}),
            part(0, [2, 3, 1, 0], {S.LAST_FINISH: ["length", "stop", "", "length"]})]


@pytest.mark.parametrize("coded", [False, True])
def test_a_first_index_made_as_served_is_the_whole_frame_served(coded):
    whole = combine(_parts(coded))
    frame, previews = combine_served(_parts(coded))
    want = without_texts(whole)
    assert list(frame.columns) == list(want.columns)
    pd.testing.assert_frame_equal(frame, want)
    rows = np.array([6, 0, 3, 1])
    got, expected = previews.take(rows), held(whole).take(rows)
    assert got.column_names == expected.column_names == list(S.READ_BY_ROW)
    assert got.to_pylist() == expected.to_pylist()
    assert got.schema.field(S.PROMPT).type == pa.large_string()  # coded: decoded when read


@pytest.mark.parametrize("coded", [False, True])
def test_its_index_file_table_is_the_whole_frames(coded):
    whole = combine(_parts(coded))
    frame, previews = combine_served(_parts(coded))
    got = index_table(frame, previews)
    want = pa.Table.from_pandas(stored_frame(whole, None), preserve_index=False)
    assert sorted(got.column_names) == sorted(want.column_names)
    for name in want.column_names:
        assert got.column(name).equals(want.column(name)), name
    entries = [{c["name"]: c for c in json.loads(t.schema.metadata[b"pandas"])["columns"]}
               for t in (got, want)]
    assert entries[0] == entries[1]
    pd.testing.assert_frame_equal(got.to_pandas()[want.column_names], want.to_pandas())


def test_a_frame_not_numbered_from_0_or_of_other_rows_is_no_index_table():
    frame, previews = combine_served(_parts(True))
    assert index_table(frame.iloc[1:], previews) is None
    assert index_table(frame.assign(**{S.ROW: frame[S.ROW] + 1}), previews) is None
    assert index_table(frame.drop(columns=[S.ROW]), previews) is None


def test_no_rows_is_an_empty_served_frame():
    frame, previews = combine_served([])
    assert len(frame) == 0 and S.ROW in frame and S.PROMPT not in frame
    assert isinstance(previews, HeldPreviews) and previews.num_rows == 0


def test_prompts_coded_in_one_part_and_plain_in_another_read_as_one_text_column():
    coded, plain = _parts(True)[0], _parts(False)[1]
    whole = combine([coded, plain])
    frame, previews = combine_served([_parts(True)[0], _parts(False)[1]])
    rows = np.arange(len(frame))
    assert previews.take(rows).column(S.PROMPT).to_pylist() == whole[S.PROMPT].tolist()
    assert index_table(frame, previews).column(S.PROMPT).type == pa.large_string()


def test_a_run_without_any_text_digest_or_line_place_fills_them_as_typed_does():
    bare = [pa.table({S.FILE: ["r.jsonl"] * 2, S.LINE: [1, 2], S.RANK: [0, 0], S.STEP: [1, 0],
                      S.NAN_COUNT: [0, 0]})]
    whole = combine([bare[0]])
    frame, previews = combine_served(bare)
    got = previews.take(np.array([0, 1]))
    assert got.to_pylist() == held(whole).take(np.array([0, 1])).to_pylist()
    assert got.column(S.PROMPT).to_pylist() == ["", ""]
    assert got.column(S.TOKEN_DIGEST).to_pylist() == [None, None]
