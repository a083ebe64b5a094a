"""Exports of what a user found, from a real dump the test writes."""
import io

import orjson
import pandas as pd
from apptest import board, goto
from dump_files import edit_in_place, make_sample, write_dump
from format_fixtures import roll_dump

from loaders import open_run
from loaders import schema as S
from loaders.serve import export


def _run(tmp_path, samples):
    path = write_dump(tmp_path / "run" / "rollout_data_rank_0.jsonl", samples)
    return open_run(path.parent), path


def test_a_table_export_has_full_texts_every_column_and_the_key(tmp_path):
    long = "x" * 5000 + " the end"
    run, _ = _run(tmp_path, [make_sample(1, seed=i, response=long if i == 1 else "short",
                                         acc=float(i)) for i in range(3)])
    rows = run.step_rows(1).sort_values(S.REWARD)
    for fmt in ("csv", "parquet"):
        data = export.table_bytes(export.full_table(run, rows), fmt)
        frame = pd.read_csv(io.BytesIO(data)) if fmt == "csv" else pd.read_parquet(
            io.BytesIO(data))
        assert frame[S.KEY].tolist() == rows[S.KEY].tolist()  # the table's order
        assert long in frame[S.RESPONSE].tolist()  # not the 400-character preview
        assert {"acc", S.REWARD, S.kl_mean(S.K3), S.GROUP_ID} <= set(frame.columns)


def test_a_jsonl_export_is_each_samples_own_line_and_reads_back(tmp_path):
    samples = [make_sample(1, seed=i, note=f"<b>{i}</b>") for i in range(4)]
    run, path = _run(tmp_path, samples)
    rows = run.step_rows(1).iloc[[2, 0]]
    data = export.jsonl_bytes(run, rows)
    lines = data.splitlines()
    written = path.read_bytes().splitlines()
    assert lines == [written[2], written[0]]  # byte for byte, in the table's order
    out = tmp_path / "found" / "rollout_data_rank_0.jsonl"
    out.parent.mkdir()
    out.write_bytes(data)
    again = open_run(out.parent)
    assert again.samples[S.REWARD].tolist() == rows[S.REWARD].tolist()


def test_a_line_changed_since_indexing_is_exported_as_the_board_read_it(tmp_path):
    run, path = _run(tmp_path, [make_sample(1, seed=i, prompt=f"p{i}") for i in range(2)])
    edit_in_place(path, b'"p1"', b'"q1"')
    lines = export.jsonl_bytes(run, run.step_rows(1)).splitlines()
    assert lines[0] == path.read_bytes().splitlines()[0]
    record = orjson.loads(lines[1])
    assert record["exported"] == "board" and record["key"].endswith(":2")


def test_a_line_of_many_samples_is_written_once(tmp_path):
    run = open_run(roll_dump(tmp_path / "roll"))
    rows = run.samples[run.samples[S.STEP] == run.steps[0]]
    assert len(rows) > 1 and len(export.jsonl_bytes(run, rows).splitlines()) == 1


def test_the_responses_page_offers_the_three_exports(tmp_path):
    _, path = _run(tmp_path, [make_sample(1, seed=i) for i in range(3)])
    at = goto(board(path.parent), "responses")
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["CSV", "PARQUET", "JSONL (samples)"]
