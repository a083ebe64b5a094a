"""Compare runs through the real entry script: the run set in the URL, every section, the
same prompt opened across runs."""
from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import orjson
from apptest import board, errors, texts
from dump_files import write_dump
from runs_fixtures import samples, write_runs

from pages.figures import runs as build


def _runs_page(root, **params):
    """The Compare runs route opened by a link carrying params (lists repeat their key)."""
    return board(root, page="runs", **params)


def test_two_sub_runs_by_default_and_the_url_opens_the_set(tmp_path):
    root = write_runs(tmp_path / "dump")
    at = _runs_page(root)
    assert not at.exception and not errors(at), (at.exception, errors(at))
    assert at.multiselect(key="runs").value == ["ablation", "base"]
    at.multiselect(key="runs").set_value(["base", "ablation", "third"]).run()
    at.text_input(key="labels").set_value("A0, B1").run()
    html = "".join(str(h.proto.body) for h in at.get("html"))
    assert "A0" in html and "B1" in html and "third" in html
    # the URL the browser writes back (tests/browser/test_browser_runs.py) opens the same set,
    # labels and order in a fresh session
    again = _runs_page(root, runs=["base", "ablation", "third"], labels="A0, B1")
    assert again.multiselect(key="runs").value == ["base", "ablation", "third"]
    assert again.text_input(key="labels").value == "A0, B1"
    # the curves are Vega-Lite: a page of them loads no Plotly (runs_curves.py)
    assert len(again.get("vega_lite_chart")) == 5 and not again.get("plotly_chart")


def test_fewer_than_two_runs_says_so(tmp_path):
    root = write_runs(tmp_path / "dump")
    at = _runs_page(root, runs="base")
    assert "Choose two or more runs" in texts(at)


def test_sections_render(tmp_path):
    root = write_runs(tmp_path / "dump")
    at = _runs_page(root, runs=["base", "ablation", "third"])
    for section in ("Difference B − A", "Same prompt", "Metrics & alerts", "Curves"):
        at.segmented_control(key="runs_view").set_value(section).run()
        assert not at.exception and not errors(at), (section, at.exception, errors(at))


def test_same_prompt_table_filters_and_one_prompt_opened(tmp_path):
    root = write_runs(tmp_path / "dump")
    at = _runs_page(root, runs=["base", "ablation"], runs_view="Same prompt", runs_step="2",
                    match="id")
    table = at.dataframe(key="t_runs_prompts").value
    assert len(table) == 5 and "Matched by the id `example_id`" in texts(at)
    at.radio(key="pfilter").set_value("B better").run()
    assert sorted(at.dataframe(key="t_runs_prompts").value["match_key"]) == ["2", "3"]
    at.radio(key="pfilter").set_value("only one run has it").run()
    assert sorted(at.dataframe(key="t_runs_prompts").value["match_key"]) == ["1", "5"]
    at.text_input(key="rprompt").set_value("3").run()
    shown = texts(at)
    assert "2 answers · reward mean 0 " in shown and "2 answers · reward mean 0.5" in shown
    assert "Word diff" in shown and not at.exception
    links = [b.proto.url for b in at.get("link_button")]
    assert any("sample?" in url and "run=ablation" in url for url in links)


def test_extra_dirs_are_confined_to_the_root(tmp_path, monkeypatch):
    root = write_runs(tmp_path / "allowed")
    outside = write_runs(tmp_path / "outside")
    monkeypatch.setenv("RL_BOARD_ROOT", str(tmp_path / "allowed"))
    at = _runs_page(root, runs="base", extra=f"{outside / 'third'}\n{root / 'ablation'}")
    assert any("outside the allowed root" in e for e in errors(at))
    html = "".join(str(h.proto.body) for h in at.get("html"))
    assert "ablation" in html and str(outside) not in html  # the allowed one is compared


def test_difference_of_a_training_metric_on_common_steps(tmp_path):
    root = write_runs(tmp_path / "dump")
    for run, values in (("base", {0: 1.0, 1: 0.9, 2: 0.8}), ("ablation", {0: 1.5, 2: 0.5})):
        lines = [orjson.dumps({"step": s, "data": {"actor/entropy": v}}) for s, v in
                 values.items()]
        (root / run / "metrics.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    at = _runs_page(root, runs=["base", "ablation"], runs_view="Difference B − A",
                    runs_diff="metric: actor/entropy", runs_numbers="true")
    assert not at.exception and not errors(at), (at.exception, errors(at))
    assert len(at.get("vega_lite_chart")) == 1  # the B − A chart, Vega-Lite
    assert not at.get("plotly_chart")
    numbers = at.dataframe[0].value
    assert numbers.index.tolist() == [0, 2]
    assert numbers["ablation − base"].round(9).tolist() == [0.5, -0.3]
    assert numbers["base"].tolist() == [1.0, 0.8] and numbers["ablation"].tolist() == [1.5, 0.5]


def test_the_token_view_link_opens_that_runs_sample(tmp_path):
    root = write_runs(tmp_path / "dump")
    at = _runs_page(root, runs=["base", "ablation"], runs_view="Same prompt", runs_step="2",
                    match="id", rprompt="3")
    link = next(b.proto.url for b in at.get("link_button") if "run=ablation" in b.proto.url)
    params = {k: v[0] for k, v in parse_qs(urlparse(link).query).items()}
    assert urlparse(link).path == "sample" and params["step"] == "2"
    sample = board(root, page="sample", **{k: v for k, v in params.items() if k != "dir"})
    assert not sample.exception and not errors(sample), errors(sample)
    assert "Sample · step 2" in texts(sample) and "ablation answer" in texts(sample)


def test_labels_and_run_names_are_text_never_markup(tmp_path):
    root = write_runs(tmp_path / "dump")
    at = _runs_page(root, runs=["base", "ablation"], labels='<img src=x onerror="alert(1)">, B')
    assert not at.exception
    html = "".join(str(h.proto.body) for h in at.get("html"))
    assert "<img" not in html and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"[:20] in html
    # in the charts a label is a data value drawn on a canvas, as typed: text, not markup
    specs = [orjson.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    domains = [layer["encoding"]["color"]["scale"]["domain"] for spec in specs
               for layer in spec["layer"]]
    typed = build.labels(["base", "ablation"], '<img src=x onerror="alert(1)">, B')
    assert typed[0].startswith("<img src=x") and typed[1] == "B"
    assert domains and all(d == typed for d in domains)
    assert all(spec["usermeta"]["embedOptions"]["renderer"] == "canvas" for spec in specs)


def _dump_dir_and_an_extra(tmp_path):
    """A dump dir holding dump files itself (`gen`), and another run's dir to add."""
    root = write_dump(tmp_path / "gen" / "rollout_data_rank_0.jsonl", samples("base")).parent
    return root, write_runs(tmp_path / "other") / "ablation"


def test_the_dump_dir_itself_is_labelled_by_its_folder_and_kept_in_the_url_as_a_token(
        tmp_path):
    root, extra = _dump_dir_and_an_extra(tmp_path)
    at = _runs_page(root, extra=str(extra))
    at.multiselect(key="runs").set_value(["."]).run()
    assert not at.exception and not errors(at), (at.exception, errors(at))
    html = "".join(str(h.proto.body) for h in at.get("html"))
    assert "<b>gen</b>" in html and "<b>.</b>" not in html and "<b>ablation</b>" in html
    assert at.selectbox(key="run_a").options == ["gen", "ablation"]
    assert at.query_params.get("runs") in (".", ["."])  # a token, not the chooser's text
    # that URL, and a link made before the token (the chooser's text), open the same set
    for token in (".", "(the dump dir itself)"):
        again = _runs_page(root, runs=token, extra=str(extra))
        assert again.multiselect(key="runs").value == ["."] and not errors(again)
        assert again.selectbox(key="run_a").options == ["gen", "ablation"]
