"""A planted or malformed index is ignored and rebuilt, with a note; never trusted, never a
crash.  Whoever can write the dump dir can write DUMP_DIR/.rl_board_cache/index.parquet."""
from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S
from loaders.index import ondisk

META = b"rl_logging_board"
OUTSIDE = "../../outside/secret.jsonl"


def _index(root: Path) -> Path:
    return root / ".rl_board_cache" / "index.parquet"


def _plant(root: Path, frame_edit: Callable[[pd.DataFrame], pd.DataFrame] = lambda f: f,
           meta_edit: Callable[[dict], object] = lambda m: m) -> None:
    """Rewrite the stored index of root with its frame and metadata edited."""
    table = pq.read_table(_index(root))
    meta = orjson.loads(table.schema.metadata[META])
    frame = frame_edit(table.to_pandas())
    planted = pa.Table.from_pandas(frame, preserve_index=False)
    planted = planted.replace_schema_metadata({**planted.schema.metadata,
                                               META: orjson.dumps(meta_edit(meta))})
    pq.write_table(planted, _index(root))


def _secret(tmp_path: Path) -> Path:
    outside = tmp_path / "outside" / "secret.jsonl"
    write_dump(outside, [make_sample(s, response="SECRET") for s in range(3)])
    return outside


def _rows_renamed(frame: pd.DataFrame) -> pd.DataFrame:
    frame[S.FILE] = frame[S.FILE].astype("string").where(
        frame[S.FILE] != "rollout_data_rank_1.jsonl", OUTSIDE).astype("category")
    return frame


def _states_renamed(to: str) -> Callable[[dict], dict]:
    def edit(meta: dict) -> dict:  # the file states are stored by field: {field: [values]}
        rels = meta["files"]["rel"]
        rels[rels.index("rollout_data_rank_1.jsonl")] = to
        return meta
    return edit


def _key_planted(frame: pd.DataFrame) -> pd.DataFrame:
    keys = [f"{file}:{line}" for file, line in zip(frame[S.FILE], frame[S.LINE])]
    keys[0] = "rollout_data_rank_1.jsonl:2"
    frame[S.KEY] = pd.Series(keys, dtype="string")
    return frame


@pytest.mark.parametrize("plant", [
    dict(frame_edit=_rows_renamed),
    dict(frame_edit=_rows_renamed, meta_edit=_states_renamed(OUTSIDE)),
    dict(frame_edit=_rows_renamed, meta_edit=_states_renamed("/tmp/outside/secret.jsonl")),
    dict(meta_edit=_states_renamed("./rollout_data_rank_1.jsonl")),
], ids=["rows", "rows_and_states", "absolute", "not_normalised"])
def test_a_planted_index_naming_other_files_is_ignored(dump_dir, tmp_path, plant):
    _secret(tmp_path)
    first = open_run(dump_dir)
    _plant(dump_dir, **plant)
    run = open_run(dump_dir)
    assert run.cache == "miss" and run.size == first.size
    assert set(run.samples[S.FILE]) == {"rollout_data_rank_0.jsonl", "rollout_data_rank_1.jsonl"}
    assert [p for p in run.problems if p["reason"].startswith("index ignored: ")]
    texts = [run.sample(key).texts[S.RESPONSE] for key in run.with_previews(run.samples)[S.KEY]]
    assert "SECRET" not in texts
    assert open_run(dump_dir).cache == "hit"  # rebuilt, and the note is gone with the plant
    assert not [p for p in open_run(dump_dir).problems if "index ignored" in p["reason"]]


def test_a_key_column_planted_in_the_index_names_no_sample(dump_dir):
    """The index stores no key: a sample's key is made from its file, line and item, so a
    planted "key" column cannot make one row open another's line."""
    first = open_run(dump_dir)
    keys = first.with_previews(first.samples)[S.KEY].tolist()
    _plant(dump_dir, frame_edit=_key_planted)
    run = open_run(dump_dir)
    rows = run.with_previews(run.samples)
    assert rows[S.KEY].tolist() == keys
    assert rows[S.KEY].iloc[0] == "rollout_data_rank_0.jsonl:1"
    assert run.sample(rows[S.KEY].iloc[0]).scalars[S.REWARD] == rows[S.REWARD].iloc[0]


def test_a_file_path_through_a_linked_dir_leading_out_is_ignored(tmp_path):
    outside = _secret(tmp_path).parent
    root = tmp_path / "run"
    write_dump(root / "rollout_data_rank_0.jsonl", [make_sample(s) for s in range(3)])
    open_run(root)
    os.symlink(outside, root / "linked")
    _plant(root, lambda f: f, _add_state("linked/secret.jsonl"))
    run = open_run(root)
    assert run.cache == "miss"
    assert [p for p in run.problems if "leads outside" in p["reason"]]


def _add_state(rel: str) -> Callable[[dict], dict]:
    def edit(meta: dict) -> dict:
        for name, values in meta["files"].items():
            values.append(rel if name == "rel" else values[0])
        return meta
    return edit


def _files(change: Callable[[dict], None]) -> Callable[[dict], dict]:
    def edit(meta: dict) -> dict:
        change(meta["files"])
        return meta
    return edit


def _first(name: str, value: object) -> Callable[[dict], None]:
    return lambda files: files[name].__setitem__(0, value)


@pytest.mark.parametrize("meta_edit", [
    _files(lambda f: f.update(evil=[1] * len(f["rel"]))),
    _files(lambda f: f.pop("size")),
    _files(lambda f: f["size"].pop()),
    _files(_first("size", "12")),
    _files(_first("size", None)),
    _files(_first("rel", None)),
    _files(_first("ends_mid_line", 1)),
    _files(_first("format", "no_such_format")),
    _files(lambda f: f.update(rel=["rollout_data_rank_0.jsonl"] * len(f["rel"]))),
    lambda m: {**m, "files": [{"rel": "x"}]},
    lambda m: {**m, "files": {"a": 1}},
    lambda m: {**m, "problems": [{"file": "x"}]},
    lambda m: {**m, "extra": True},
    lambda m: [m],
    lambda m: "not an object",
], ids=["unknown_key", "missing_key", "short_column", "str_size", "null_size", "null_rel",
        "int_bool", "format", "twice", "files_list", "files_dict", "problem", "meta_key",
        "meta_list", "meta_str"])
def test_malformed_metadata_is_rebuilt_with_a_note(dump_dir, meta_edit):
    first = open_run(dump_dir)
    _plant(dump_dir, meta_edit=meta_edit)
    run = open_run(dump_dir)
    assert run.cache == "miss" and run.size == first.size
    assert [p for p in run.problems if p["reason"].startswith("index ignored: ")]


@pytest.mark.parametrize("version", [ondisk.INDEX_VERSION + 1, str(ondisk.INDEX_VERSION), None])
def test_an_index_of_another_version_is_rebuilt_quietly(dump_dir, version):
    open_run(dump_dir)
    _plant(dump_dir, meta_edit=lambda m: {**m, "version": version})
    run = open_run(dump_dir)
    assert run.cache == "miss" and not run.problems


def test_a_column_of_the_wrong_type_is_rebuilt(dump_dir):
    open_run(dump_dir)
    _plant(dump_dir, lambda f: f.assign(**{S.STEP: f[S.STEP].astype("string")}))
    run = open_run(dump_dir)
    assert run.cache == "miss" and run.samples[S.STEP].dtype == "int64"


def _timed(work: Callable[[], object], wait: float = 20.0) -> object:
    box: dict = {}
    thread = threading.Thread(target=lambda: box.update(value=work()), daemon=True)
    thread.start()
    thread.join(wait)
    assert not thread.is_alive(), "hung"
    return box["value"]


def test_an_index_that_is_a_fifo_or_a_link_is_never_read(dump_dir, tmp_path):
    elsewhere = tmp_path / "copy"
    write_dump(elsewhere / "rollout_data_rank_0.jsonl", [make_sample(0)])
    open_run(elsewhere)
    (dump_dir / ".rl_board_cache").mkdir()
    os.mkfifo(_index(dump_dir))
    run = _timed(lambda: open_run(dump_dir))
    assert run.cache == "miss" and [p for p in run.problems if "not a regular" in p["reason"]]
    _index(dump_dir).unlink()
    os.symlink(_index(elsewhere), _index(dump_dir))
    run = open_run(dump_dir)
    assert run.cache == "miss" and [p for p in run.problems if "index ignored" in p["reason"]]
    assert not _index(dump_dir).is_symlink()  # replaced by a real index, the link not followed


def test_every_column_an_index_is_written_with_reads_back_as_trusted(tmp_path):
    """No false alarms: text of digits (a verl uid) becomes an int64 column, a flag a bool."""
    root = tmp_path / "run"
    write_dump(root / "rollout_data_rank_0.jsonl", [
        make_sample(s, uid=str(1000 + s), acc=s, note=None, flag=True, tags=["a"], text="t")
        for s in range(3)])
    first = open_run(root)
    assert first.samples["uid"].dtype == "int64"
    again = open_run(root)
    assert again.cache == "hit" and not again.problems


@pytest.mark.parametrize("make", ["native_forks", "verl", "roll_board", "roll_dump", "trl",
                                  "nemo", "prime"])
def test_every_format_reopens_as_a_trusted_hit(tmp_path, make):
    import format_fixtures as F

    root = getattr(F, make)(tmp_path / make)
    open_run(root)
    again = open_run(root)
    assert again.cache == "hit"
    assert not [p for p in again.problems if "index ignored" in p["reason"]]


def test_the_index_keeps_statistics_of_its_numbers_and_none_of_its_texts(dump_dir):
    """The load checks every number column's null count in every row group's statistics;
    the texts' minimum and maximum, which nothing reads, are not written."""
    open_run(dump_dir)
    meta = pq.ParquetFile(_index(dump_dir)).metadata
    columns = {meta.schema.column(i).name: i for i in range(meta.num_columns)}
    group = meta.row_group(0)
    for name in (S.STEP, S.LINE, S.LINE_CHECK, S.REWARD, S.VALIDATION):
        stats = group.column(columns[name]).statistics
        assert stats is not None and stats.has_null_count and stats.null_count == 0, name
    for name in (S.RESPONSE, S.PROMPT, S.TOKEN_DIGEST):
        assert group.column(columns[name]).statistics is None, name
    assert open_run(dump_dir).cache == "hit"  # and such an index is trusted
