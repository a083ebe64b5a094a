"""A CSV export a spreadsheet opens safely and any CSV reader reads back: a text cell or
header that a spreadsheet would run as a formula (=, +, -, @, tab, CR first) is neutralised
with a leading apostrophe, numbers stay numbers (-0.5 too), and a text with line breaks of
any kind (\\n, \\r\\n, a lone \\r) stays one quoted record per sample."""
import csv
import io

import pandas as pd
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.serve import export

RISKY = ["=HYPERLINK(\"http://evil.example/\",\"x\")", "+1+1", "-2+3", "@SUM(A1:A2)",
         "\t=1", "line one\nline two", "cr\ronly", "crlf\r\nline", "a \"quoted\" word", "ok"]


def _export(tmp_path) -> tuple[bytes, list[str]]:
    samples = [make_sample(1, seed=i, prompt=RISKY[i], response=RISKY[-1 - i],
                           reward=-0.5 if i % 2 else 0.25, **{"=cmd": RISKY[i], "note": RISKY[i]})
               for i in range(10)]
    path = write_dump(tmp_path / "run" / "rollout_data_rank_0.jsonl", samples)
    run = open_run(path.parent)
    rows = run.step_rows(1)
    return export.table_bytes(export.full_table(run, rows), "csv"), rows[S.KEY].tolist()


def test_every_sample_is_one_record_that_pandas_and_csv_read_back(tmp_path):
    data, keys = _export(tmp_path)
    frame = pd.read_csv(io.BytesIO(data))
    assert frame[S.KEY].tolist() == keys
    records = list(csv.reader(io.StringIO(data.decode(), newline="")))
    assert len(records) == 11 and {len(r) for r in records} == {len(frame.columns)}
    assert "line one\nline two" in frame[S.PROMPT].tolist()  # the text itself is kept
    assert "crlf\r\nline" in frame[S.PROMPT].tolist()


def test_no_text_cell_or_header_starts_a_formula_and_numbers_stay_numbers(tmp_path):
    data, _ = _export(tmp_path)
    frame = pd.read_csv(io.BytesIO(data), keep_default_na=False)
    risky = ("=", "+", "-", "@", "\t", "\r")
    assert not [c for c in frame.columns if str(c).startswith(risky)]
    text = frame.select_dtypes(exclude="number")
    cells = [v for column in text.columns for v in text[column].astype(str)]
    assert not [v for v in cells if v.startswith(risky)]
    assert "'=HYPERLINK(\"http://evil.example/\",\"x\")" in frame[S.PROMPT].tolist()
    assert frame[S.REWARD].dtype.kind == "f" and -0.5 in frame[S.REWARD].tolist()
