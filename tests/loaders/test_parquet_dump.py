"""The Parquet dump: DumpWriter(format="parquet"), the board reading it natively, convert."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from dump_files import keyed

from loaders import open_run
from loaders import schema as S
from loaders.writer import DumpWriter
from loaders.writer.columns import cell, table_of
from loaders.writer.convert import convert
from loaders.writer.parquet import ROW_GROUP_ROWS

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "samples"))
from generate_dump import make_batch, make_world  # noqa: E402

# what differs by design: where a sample is stored, and float32 token arrays
_PLACE = {S.FILE, S.KEY, S.LINE, S.OFFSET, S.NBYTES, S.LINE_CHECK, S.TOKEN_DIGEST}


def batches(steps: int = 3, count: int = 20) -> list[list[dict]]:
    world = make_world(0, count, 160, steps, group_size=4)
    return [make_batch(world, np.random.default_rng([0, 2, s]), s, count, 4)
            for s in range(steps)]


def write_both(tmp_path: Path, steps: int = 3) -> tuple[Path, Path]:
    for fmt in ("jsonl", "parquet"):
        with DumpWriter(tmp_path / fmt, rank=1, format=fmt) as writer:
            for batch in batches(steps):
                writer.write_many(batch)
    return tmp_path / "jsonl", tmp_path / "parquet"


def assert_same_summary(a, b) -> None:
    assert len(a) == len(b)
    for name in a.columns:
        if name in _PLACE:
            continue
        x, y = a[name], b[name]
        if pd_numeric(x):
            assert np.allclose(x.astype(float), y.astype(float), rtol=1e-4, atol=1e-5,
                               equal_nan=True), name
        else:
            assert x.astype(str).tolist() == y.astype(str).tolist(), name


def pd_numeric(series) -> bool:
    return series.dtype.kind in "iufb"


def test_board_reads_the_parquet_dump_as_it_reads_jsonl(tmp_path):
    jsonl, parquet = write_both(tmp_path)
    names = sorted(p.name for p in parquet.iterdir())
    assert names == [f"rollout_data_rank_1.step_{s:06d}.0000.parquet" for s in range(3)]
    a, b = open_run(jsonl, use_cache=False), open_run(parquet, use_cache=False)
    assert set(b.formats.values()) == {"board_parquet"} and not b.problems
    assert_same_summary(a.samples, b.samples)
    assert len(b.token_digests()) == 3  # one digest per (file, step)
    key = keyed(b)[S.KEY].iloc[7]
    sample, same = b.sample(key), a.sample(keyed(a)[S.KEY].iloc[7])
    assert sample.error is None and sample.texts == same.texts
    assert np.allclose(sample.tokens["logprob"], same.tokens["logprob"], atol=1e-6)
    assert sample.tokens["token"].tolist() == same.tokens["token"].tolist()


def test_columns_are_typed_compressed_and_in_small_row_groups(tmp_path):
    _, parquet = write_both(tmp_path, steps=1)
    path = next(parquet.iterdir())
    handle = pq.ParquetFile(path)
    schema = handle.schema_arrow
    assert schema.field("logprobs").type == pa.list_(pa.float32())
    assert schema.field("response_tokens").type == pa.list_(pa.string())
    assert schema.field("step").type == pa.int64()
    assert schema.field("reward").type == pa.float64()
    assert handle.metadata.row_group(0).column(0).compression == "ZSTD"
    assert handle.metadata.row_group(0).num_rows <= ROW_GROUP_ROWS


def test_odd_values_survive_as_json_and_nulls_as_missing(tmp_path):
    class Tensorish:  # anything with .tolist(), like a torch tensor
        def tolist(self):
            return [-0.5, -0.25]

    chat = [{"role": "user", "content": "<b>hi</b>"}]
    samples = [{"step": 2, "prompt": chat, "response": "ab", "response_tokens": ["a", "b"],
                "logprobs": Tensorish(), "ref_logprobs": [-0.5, None], "reward": 1,
                "meta": {"k": [1, 2]}, "mixed": 3},
               {"step": 2, "response": "c", "values": None, "reward": 0.5, "mixed": "x",
                "big": 2**70}]
    with DumpWriter(tmp_path, rank=0, format="parquet") as writer:
        writer.write_many(samples)
    run = open_run(tmp_path, use_cache=False)
    first = run.with_previews(run.samples).iloc[0]
    assert first[S.PROMPT] == "user: <b>hi</b>" or "<b>hi</b>" in first[S.PROMPT]
    assert first[S.NAN_COUNT] == 1 and np.isclose(first[S.LOG_RATIO_SUM], 0.0)
    assert run.samples["mixed"].astype(str).tolist() == ["3.0", "x"]  # as from jsonl
    assert "big" in run.samples.columns
    sample = run.sample(first[S.KEY])
    assert sample.error is None and "<b>hi</b>" in sample.texts[S.PROMPT]


def test_a_flush_is_atomic_and_a_restart_never_overwrites(tmp_path):
    writer = DumpWriter(tmp_path, rank=0, format="parquet", flush_rows=2)
    for i in range(3):
        writer.write({"step": 5, "response": f"r{i}", "reward": float(i)})
    assert len(list(tmp_path.glob("*.parquet"))) == 1  # two flushed, one held
    assert not list(tmp_path.glob(".*"))  # no temp file left behind
    writer.close()
    again = DumpWriter(tmp_path, rank=0, format="parquet")  # a restarted trainer
    again.write({"step": 5, "response": "r3", "reward": 3.0})
    again.close()
    names = sorted(p.name for p in tmp_path.glob("*.parquet"))
    assert names == [f"rollout_data_rank_0.step_000005.{k:04d}.parquet" for k in range(3)]
    assert open_run(tmp_path, use_cache=False).samples[S.REWARD].tolist() == [0, 1, 2, 3]


def test_a_corrupt_file_is_a_problem_and_its_neighbours_load(tmp_path):
    with DumpWriter(tmp_path, rank=0, format="parquet") as writer:
        writer.write_many(batches(2)[0] + batches(2)[1])
    bad = tmp_path / "rollout_data_rank_0.step_000009.0000.parquet"
    bad.write_bytes(b"PAR1 not really")
    run = open_run(tmp_path, use_cache=False)
    assert len(run.samples) == 40
    assert any(p["file"] == bad.name and "unreadable Parquet" in p["reason"]
               for p in run.problems)


def test_index_cache_and_a_new_file(tmp_path):
    with DumpWriter(tmp_path, rank=0, format="parquet") as writer:
        writer.write_many(batches(1)[0])
    assert open_run(tmp_path).cache == "miss"
    assert open_run(tmp_path).cache == "hit"
    with DumpWriter(tmp_path, rank=1, format="parquet") as writer:
        writer.write_many(batches(1)[0])
    run = open_run(tmp_path)
    assert run.cache == "partial" and len(run.samples) == 40
    assert run.sample(keyed(run)[S.KEY].iloc[-1]).error is None


def test_convert_streams_a_jsonl_dump_keeping_dirs_and_skipping_bad_lines(tmp_path):
    src = tmp_path / "src"
    with DumpWriter(src / "a", rank=0) as writer:
        for batch in batches(2):
            writer.write_many(batch)
    with open(src / "a" / "rollout_data_rank_0.jsonl", "ab") as handle:
        handle.write(b'{"step": 1, "oops\n{"step": 7, "response": "half')
    done = convert(src, tmp_path / "dst", flush_rows=8)
    assert done.samples == 40 and done.bad_lines == 1
    assert any("half-written" in p for p in done.problems)
    out = tmp_path / "dst" / "a"
    files = sorted(out.glob("*.parquet"))  # 8 a file across steps (20 a step): a converted
    assert len(files) == 5  # dump is not followed, and a file costs its reader a footer
    spans = [sorted(set(pq.read_table(f, columns=["step"]).column(0).to_pylist())) for f in files]
    assert spans == [[0], [0], [0, 1], [1], [1]]
    assert [f.name.split(".")[1] for f in files] == ["step_000000"] * 3 + ["step_000001"] * 2
    a, b = open_run(src / "a", use_cache=False), open_run(out, use_cache=False)
    assert_same_summary(a.samples, b.samples)
    assert len(b.token_digests()) == 6  # one a (file, step): the file of two steps has two
    for row in (16, 20, 23):  # in the file of two steps: each sample read back as written
        sample, same = b.sample(keyed(b)[S.KEY].iloc[row]), a.sample(keyed(a)[S.KEY].iloc[row])
        assert sample.error is None and sample.texts == same.texts
        assert sample.tokens["token"].tolist() == same.tokens["token"].tolist()
        assert np.allclose(sample.tokens["logprob"], same.tokens["logprob"], atol=1e-6)


def test_convert_command(tmp_path):
    with DumpWriter(tmp_path / "src", rank=0) as writer:
        writer.write_many(batches(1)[0])
    proc = subprocess.run([sys.executable, "-m", "loaders", "convert", str(tmp_path / "src"),
                           str(tmp_path / "dst")], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "20 samples" in proc.stdout
    again = subprocess.run([sys.executable, "-m", "loaders", "convert", str(tmp_path / "src"),
                            str(tmp_path / "dst")], cwd=ROOT, capture_output=True, text=True)
    assert again.returncode == 2 and "already holds a dump" in again.stderr
    missing = subprocess.run([sys.executable, "-m", "loaders", "convert", str(tmp_path / "no"),
                              str(tmp_path / "dst")], cwd=ROOT, capture_output=True, text=True)
    assert missing.returncode == 2 and "no such directory" in missing.stderr


@pytest.mark.parametrize("value", [np.arange(3, dtype=np.int32), [1, 2, 3]])
def test_id_lists_are_int64(value):
    table = table_of([{"step": 0, "token_ids": cell(value)}])
    assert table.schema.field("token_ids").type == pa.list_(pa.int64())


def test_row_group_chunks_index_as_one_file_does(tmp_path, monkeypatch):
    from loaders.index import work
    from loaders.index.scan_board import plan_row_groups
    from loaders.writer import parquet as writer_parquet

    monkeypatch.setattr(writer_parquet, "ROW_GROUP_ROWS", 8)  # several row groups a file
    _, parquet = write_both(tmp_path, steps=1)
    whole = open_run(parquet, use_cache=False).samples
    path = next(parquet.iterdir())
    size = path.stat().st_size
    # a file whose footer holds its summary is one chunk: one table, one digest
    assert len(plan_row_groups(str(path), path.name, 1, size, 4 << 10)) == 1
    monkeypatch.setenv("RL_BOARD_STORED_SUMMARY", "0")  # the rows summarized as read
    chunks = plan_row_groups(str(path), path.name, 1, size, 4 << 10)
    assert len(chunks) > 1 and chunks[0].start == 0 and chunks[-1].end == size
    assert all(a.end == b.start for a, b in zip(chunks, chunks[1:]))
    monkeypatch.setattr(work, "CHUNK_BYTES", 4 << 10)  # a task per few row groups
    parts = open_run(parquet, use_cache=False)
    assert parts.samples[S.LINE].tolist() == list(range(1, 21))
    # digests are made per parse batch, as for a jsonl file's chunks: one per chunk here
    assert len(parts.token_digests()) == len(chunks)
    pd.testing.assert_frame_equal(whole, parts.samples)  # digests: read by row, not here
    assert parts.sample(keyed(parts)[S.KEY].iloc[-1]).error is None


def test_a_whole_file_chunk_is_read_a_slice_of_row_groups_at_a_time(tmp_path, monkeypatch):
    from loaders.index import scan_board
    from loaders.writer import parquet as writer_parquet

    monkeypatch.setattr(writer_parquet, "ROW_GROUP_ROWS", 4)
    _, parquet = write_both(tmp_path, steps=1)
    whole = open_run(parquet, use_cache=False)
    monkeypatch.setenv("RL_BOARD_STORED_SUMMARY", "0")
    monkeypatch.setattr(scan_board, "SLICE_BYTES", 1)  # a row group a read
    reads = []
    real = scan_board.read_checked
    monkeypatch.setattr(scan_board, "read_checked", lambda h, groups, *a: reads.append(
        groups) or real(h, groups, *a))
    sliced = open_run(parquet, use_cache=False)
    assert len(reads) == 5 and all(len(groups) == 1 for groups in reads)  # 20 rows, 4 a group
    pd.testing.assert_frame_equal(whole.samples, sliced.samples)
    digests = [[(d.step, d.file, d.hot) for d in run.token_digests()] for run in (whole, sliced)]
    assert digests[0] == digests[1] and len(digests[0]) == 1  # one chunk: one digest, alike


def test_held_samples_are_written_when_the_trainer_exits(tmp_path):
    code = ("import sys; from loaders.writer import DumpWriter\n"
            "w = DumpWriter(sys.argv[1], rank=0, format='parquet')\n"
            "w.write({'step': 3, 'response': 'last', 'reward': 1.0})\n")  # no close()
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    run = open_run(tmp_path, use_cache=False)
    assert run.with_previews(run.samples)[S.RESPONSE].tolist() == ["last"]


def test_a_crashed_writers_temp_file_is_removed_by_the_next(tmp_path):
    old = tmp_path / ".rollout_data_rank_0.step_000001.0000.parquet.ab12cd34.tmp"
    young = tmp_path / ".rollout_data_rank_0.step_000002.0000.parquet.ef56ab78.tmp"
    other = tmp_path / ".rollout_data_rank_1.step_000001.0000.parquet.0123abcd.tmp"
    for path in (old, young, other):
        path.write_bytes(b"half a file")
    os.utime(old, (1, 1))
    os.utime(other, (1, 1))
    DumpWriter(tmp_path, rank=0, format="parquet").close()
    assert not old.exists() and young.exists() and other.exists()  # rank 1 cleans its own


def test_a_list_valued_group_key_reads_back_as_no_group_id(tmp_path):
    # a list is no group id (grouping.usable_group_id); read back from Parquet it is an
    # array, which crashed the group lookup
    samples = [{"step": 0, "prompt": f"p{i % 2}", "response": "r", "reward": 1.0,
                "uid": [i % 2]} for i in range(4)]
    for fmt in ("jsonl", "parquet"):
        with DumpWriter(tmp_path / fmt, rank=0, format=fmt) as writer:
            writer.write_many(samples)
    jsonl, parquet = (open_run(tmp_path / f, use_cache=False).samples for f in ("jsonl", "parquet"))
    assert len(parquet) == 4 and (parquet[S.GROUP_SOURCE] == S.GROUP_BY_PROMPT).all()
    assert parquet[S.GROUP_ID].tolist() == jsonl[S.GROUP_ID].tolist()
