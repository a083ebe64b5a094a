"""The problems of a garbage-strewn dir: counted by kind in the sidebar, listed a page at a
time on the Problems page, downloadable."""
import html

from apptest import board, current_page, errors, goto, texts
from dump_files import line_of, make_sample, write_dump

from pages.figures import problems as P


def test_kinds_group_reasons_without_their_particulars():
    found = [{"file": "a", "line": i, "reason": f"invalid JSON: Expecting value (column {i})",
              "dropped": True} for i in range(5)]
    found += [{"file": "b", "line": 1, "reason": "reward: expected a number, got 'x'",
               "dropped": False}]
    table = P.kinds(found)
    assert table["kind"].tolist() == ["invalid JSON: Expecting value",
                                      "reward: expected a number, got"]
    assert table["count"].tolist() == [5, 1] and table["files"].tolist() == [1, 1]
    assert P.table(found)["sample"].tolist() == ["dropped"] * 5 + ["kept"]
    assert P.kinds([]).empty


def test_a_dir_full_of_bad_lines_keeps_the_sidebar_short(tmp_path):
    good = [make_sample(1, seed=i) for i in range(3)]
    path = write_dump(tmp_path / "run" / "rollout_data_rank_0.jsonl", good,
                      extra=b"".join(b"{not json %d\n" % i for i in range(759)))
    at = board(path.parent)
    side = "\n".join(str(c.value) for c in at.sidebar.caption)
    assert "759 × invalid JSON" in texts(at) or "759" in side
    assert not any("{not json" in str(c.value) for c in at.sidebar.code)  # no wall of lines
    at = goto(at, "problems")
    assert current_page(at) == "problems" and not errors(at)
    assert at.dataframe[0].value["count"].tolist() == [759]
    assert len(at.dataframe[1].value) == 500  # a page at a time
    at.number_input(key="prpage").set_value(2).run()
    assert len(at.dataframe[1].value) == 259
    assert [b.label for b in at.get("download_button")] == ["Download all (CSV)"]


def test_problems_is_reached_from_the_sidebar_not_the_menu(tmp_path):
    path = write_dump(tmp_path / "run" / "rollout_data_rank_0.jsonl", [make_sample(1)],
                      extra=b"oops\n")
    at = board(path.parent)
    links = [link.label for link in at.sidebar.get("page_link")]
    assert "All 1 problems" in links and "Problems" not in links


def test_samples_read_around_and_half_written_lines_are_listed_with_file_and_line(tmp_path):
    """No bad line, but a NaN reward, a short logprob list and a half-written last line: the
    sidebar links to Problems, which names each with its file and line."""
    nan = line_of(make_sample(1, seed=1, reward=1234.5)).replace(b"1234.5", b"NaN")
    short = line_of(make_sample(2, seed=2, logprobs=[-0.1, -0.2]))
    path = write_dump(tmp_path / "run" / "rollout_data_rank_0.jsonl", [make_sample(1)],
                      extra=nan + short + line_of(make_sample(3))[:40])
    at = board(path.parent)
    side = "\n".join(str(c.value) for c in at.sidebar.caption)
    assert "2 samples kept with values read around" in html.unescape(side)
    link = [link.label for link in at.sidebar.get("page_link")]
    assert "All 0 problems · 2 read around" in link
    at = goto(at, "problems")
    assert current_page(at) == "problems" and not errors(at)
    shown = texts(at)
    assert "No bad line or field in this run." in shown and "2 samples, each kept" in shown
    around, pending = (frame.value for frame in at.dataframe)
    assert around[["file", "line", "step"]].values.tolist() == [
        ["rollout_data_rank_0.jsonl", 2, 1], ["rollout_data_rank_0.jsonl", 3, 2]]
    assert around["reason"].str.startswith(("1 non-finite value ", "token lists")).all()
    assert pending.values.tolist() == [["rollout_data_rank_0.jsonl", 4, 40]]
    assert [b.label for b in at.get("download_button")] == ["Download all (CSV)"]


def test_a_file_name_with_a_bidi_override_is_listed_as_it_is_named(tmp_path):
    """Shown as it is, U+202E would read the name backwards ("lnosj.0_knar_")."""
    path = write_dump(tmp_path / "run" / "rollout_\u202exy_rank_0.jsonl", [make_sample(1)],
                      extra=b"oops\n")
    at = goto(board(path.parent), "problems")
    assert at.dataframe[1].value["file"].tolist() == ["rollout_⟨U+202E⟩xy_rank_0.jsonl"]
