"""Records with very many keys: at most MAX_EXTRA_COLUMNS extra keys of a run become columns
(the board's truncation keys first, then by name), the rest stay in the line, and each file
that lost some has one problem saying how many."""
from __future__ import annotations

from pathlib import Path

from dump_files import keyed, line_of, make_sample, write_dump

from loaders import open_run
from loaders import schema as S

CAP = S.MAX_EXTRA_COLUMNS
BOARD = set(S.BOARD_COLUMNS)


def _extras(run: object) -> list[str]:
    return sorted(c for c in run.samples.columns if c not in BOARD)


def _cap_notes(run: object) -> dict[str, list[str]]:
    notes: dict[str, list[str]] = {}
    for p in run.problems:
        if "extra keys beyond the first" in p["reason"]:
            notes.setdefault(p["file"], []).append(p["reason"])
    return notes


def _keys(prefix: str, count: int) -> dict[str, float]:
    return {f"{prefix}{i:03d}": float(i) for i in range(count)}


def test_a_line_with_too_many_keys_keeps_the_first_by_name(tmp_path):
    root = tmp_path / "run"
    wide = make_sample(1, finish_reason="length", z_adv=[0.5] * 6, **_keys("k", CAP + 43))
    write_dump(root / "rollout_data_rank_0.jsonl", [make_sample(0), wide, make_sample(2)])
    run = open_run(root)
    assert len(_extras(run)) == CAP and "finish_reason" in _extras(run)
    assert _extras(run)[-1] == f"k{CAP - 2:03d}"  # finish_reason took one place
    assert _cap_notes(run) == {"rollout_data_rank_0.jsonl": [
        f"45 extra keys beyond the first {CAP} are not columns (they stay in the line; "
        "token arrays among them still show as tokens)"]}
    rows = keyed(run)
    key = rows[rows[S.STEP] == 1][S.KEY].iloc[0]
    assert rows.set_index(S.KEY).loc[key, S.TRUNCATED]
    sample = run.sample(key)
    assert sample.error is None and "z_adv_mean" not in _extras(run)
    assert list(sample.tokens["z_adv"]) == [0.5] * 6  # an array past the cap, still tokens
    again = open_run(root)
    assert again.cache == "hit" and _extras(again) == _extras(run)
    assert _cap_notes(again) == _cap_notes(run)


def test_the_run_keeps_the_cap_across_files(tmp_path):
    root = tmp_path / "run"
    write_dump(root / "rollout_data_rank_0.jsonl", [make_sample(0, **_keys("a", 200))])
    write_dump(root / "rollout_data_rank_1.jsonl", [make_sample(0, **_keys("b", 200))])
    run = open_run(root)
    assert _extras(run) == sorted([*_keys("a", 200), *_keys("b", CAP - 200)])
    notes = _cap_notes(run)
    assert list(notes) == ["rollout_data_rank_1.jsonl"] and notes[
        "rollout_data_rank_1.jsonl"][0].startswith(f"{400 - CAP} extra keys")


def test_a_partial_refresh_keeps_what_a_full_parse_keeps(tmp_path):
    """A kept file losing columns to smaller names in a grown file gets its note too."""
    root = tmp_path / "run"
    write_dump(root / "rollout_data_rank_0.jsonl", [make_sample(0, **_keys("b", 200))])
    grown = write_dump(root / "rollout_data_rank_1.jsonl", [make_sample(0)])
    open_run(root)
    with open(grown, "ab") as handle:
        handle.write(line_of(make_sample(1, **_keys("a", 200))))
    partial = open_run(root)
    full = open_run(root, use_cache=False)
    assert partial.cache == "partial" and _extras(partial) == _extras(full)
    assert _extras(full) == sorted([*_keys("a", 200), *_keys("b", CAP - 200)])
    assert _cap_notes(partial) == _cap_notes(full) == {"rollout_data_rank_0.jsonl": [
        f"{400 - CAP} extra keys beyond the first {CAP} are not columns (they stay in the "
        "line; token arrays among them still show as tokens)"]}


def test_a_grown_file_keeps_one_note(tmp_path):
    root = tmp_path / "run"
    path = write_dump(root / "rollout_data_rank_0.jsonl", [make_sample(0, **_keys("k", 300))])
    open_run(root)
    with open(path, "ab") as handle:
        handle.write(line_of(make_sample(1, **_keys("k", 300))))
    run = open_run(root)
    assert run.cache == "partial" and len(_extras(run)) == CAP
    assert [n[:22] for n in _cap_notes(run)[path.name]] == ["44 extra keys beyond t"]


def test_kept_extras_puts_the_truncation_keys_first():
    from loaders.index.extras import kept_extras  # here: new with the cap

    names = [f"x{i:03d}" for i in range(400)] + ["stop_reason", "extra_truncated"]
    kept = kept_extras(names)
    assert kept[:2] == ["extra_truncated", "stop_reason"] and len(kept) == CAP
    assert kept[2:] == sorted(names[:400])[:CAP - 2]


def test_a_small_run_is_untouched(tmp_path: Path):
    root = tmp_path / "run"
    write_dump(root / "rollout_data_rank_0.jsonl", [make_sample(0, **_keys("k", 20))])
    run = open_run(root)
    assert _extras(run) == sorted(_keys("k", 20)) and not run.problems
