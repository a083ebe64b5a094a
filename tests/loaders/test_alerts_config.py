"""alerts.toml values are checked one by one: a bad value, table or key is a note naming it
(shown on the Alerts page as literal text) and the rest of the file still applies."""
from __future__ import annotations

import html
import io
from contextlib import redirect_stdout
from pathlib import Path

import metric_fixtures as M
import orjson
import pytest

from loaders.__main__ import main
from loaders.health.check import check
from loaders.health.config import DEFAULTS, load_config

VALID = "[batch_runaway]\nk = 1000\n"  # applies beside every bad value below


def _checked(root: Path, text: str):
    (root / "alerts.toml").write_text(text)
    M.write_verl_file(root / "metrics.jsonl", M.faulty())
    return check(root, None)


@pytest.mark.parametrize("table, key, value, why", [
    ("divergence", "k", "inf", "not a finite number"),
    ("divergence", "k", "-inf", "not a finite number"),
    ("divergence", "k", "nan", "not a finite number"),
    ("memory", "reserved_fraction", "[0.5, 0.6]", "not a list"),
    ("memory", "reserved_fraction", "{ a = 1 }", "not a table"),
    ("memory", "reserved_fraction", "1.5", "outside"),
    ("baseline", "window", "1979-05-27", "not a date"),
    ("baseline", "window", "'20'", "not text"),
    ("baseline", "window", "true", "not true/false"),
    ("baseline", "window", "-3", "outside"),
    ("baseline", "window", "0", "outside"),
    ("baseline", "window", "2.5", "a whole number"),
    ("baseline", "window", "99999999999999999", "outside"),
    ("inference", "min_ratio", "-0.1", "outside"),
    ("zero_variance", "min_groups", "12:30:00", "not a time of day"),
])
def test_a_bad_value_is_a_note_and_the_rest_applies(tmp_path, table, key, value, why):
    health = _checked(tmp_path, f"{VALID}[{table}]\n{key} = {value}\n")
    assert health.config[table][key] == DEFAULTS[table][key]
    assert health.config["batch_runaway"]["k"] == 1000
    notes = [n for n in health.metrics.notes if f"{table}.{key}" in n]
    assert len(notes) == 1 and why in notes[0] and "ignored" in notes[0]
    assert "batch_runaway" not in {a.rule for a in health.alerts}  # the valid k = 1000 held
    assert "divergence" in {a.rule for a in health.alerts}  # and the default k still fires


def test_good_values_keep_their_default_type(tmp_path):
    health = _checked(tmp_path, "[baseline]\nwindow = 30.0\nrel_floor = 1\n")
    assert health.config["baseline"]["window"] == 30 and isinstance(
        health.config["baseline"]["window"], int)
    assert health.config["baseline"]["rel_floor"] == 1.0 and not health.metrics.notes


def test_unknown_tables_and_keys_are_notes(tmp_path):
    text = (f"top = 1\ninference = [1]\n{VALID}[nope]\na = 1\n[divergence]\nkk = 1\nk = 6\n"
            "[memory.deep]\nx = 1\n")
    health = _checked(tmp_path, text)
    notes = health.metrics.notes
    assert [n for n in notes if "unknown rule [nope]" in n]
    assert [n for n in notes if "unknown setting divergence.kk" in n]
    assert [n for n in notes if "unknown rule [top]" in n]
    assert [n for n in notes if "inference = [1] ignored (expected a table" in n]
    assert [n for n in notes if "unknown setting memory.deep" in n]
    assert health.config["divergence"]["k"] == 6.0 and health.config["batch_runaway"]["k"] == 1000


def test_min_history_beyond_the_window_is_capped(tmp_path):
    health = _checked(tmp_path, "[baseline]\nwindow = 3\n")  # min_history stays 8
    assert health.config["baseline"] == {"window": 3, "min_history": 3, "rel_floor": 0.01,
                                         "share_floor": 0.002}
    assert [n for n in health.metrics.notes if "baseline.min_history" in n]


def test_many_problems_are_counted_not_all_listed(tmp_path):
    text = "[divergence]\n" + "".join(f"x{i} = 1\n" for i in range(500))
    notes = _checked(tmp_path, text).metrics.notes
    assert len(notes) == 21 and "480 more problems" in notes[-1]


def test_names_from_the_file_stay_one_short_line(tmp_path):
    name = "![x](http://example.invalid/x.png)\\n" + "y" * 500
    notes = _checked(tmp_path, f'["{name}"]\nk = 1\n').metrics.notes
    # the name cut to a few dozen characters, beside the list of the known rules (ours)
    assert len(notes) == 1 and "\n" not in notes[0] and len(notes[0]) < 360
    assert "![x](http://example.invalid/x.png)" in notes[0]


def test_without_a_notes_list_the_first_problem_raises(tmp_path):
    (tmp_path / "alerts.toml").write_text("[divergence]\nk = 'x'\n")
    with pytest.raises(ValueError, match="divergence.k"):
        load_config(tmp_path / "alerts.toml")


def test_the_cli_prints_alerts_with_a_bad_config(tmp_path):
    (tmp_path / "alerts.toml").write_text("[divergence]\nk = [1]\nwindow = inf\n[x]\n")
    M.write_verl_file(tmp_path / "metrics.jsonl", M.faulty())
    out = io.StringIO()
    with redirect_stdout(out):
        assert main([str(tmp_path), "--alerts", "--json"]) == 0
    assert "divergence" in {a["rule"] for a in orjson.loads(out.getvalue())}


def test_the_alerts_page_shows_each_note_as_literal_text(tmp_path):
    from apptest import board, errors, texts
    from dump_files import make_sample, write_dump

    write_dump(tmp_path / "rollout_data_rank_0.jsonl", [make_sample(s) for s in range(3)])
    health_text = "[divergence]\nk = nan\n['**bold** <b>x</b>']\nk = 1\n"
    _checked(tmp_path, health_text)
    at = board(tmp_path, page="alerts")
    assert not errors(at)
    raw = [w.value for w in at.warning]  # as sent to Streamlit's Markdown
    assert any("divergence.k = nan ignored" in html.unescape(w) for w in raw)
    hostile = [w for w in raw if "bold" in w]
    assert hostile and "**" not in hostile[0] and "<b>" not in hostile[0]
    assert "unknown rule [**bold** <b>x</b>]" in texts(at)  # as the user reads it
