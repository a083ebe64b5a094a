"""pages/frame/loading.py under Streamlit: sub-runs, runs and refresh through the shared catalog."""
from dump_files import line_of, make_sample, write_dump
from streamlit.testing.v1 import AppTest


def _script(base: str) -> None:
    """A tiny app: the sub-run list, each run's sample count, and a Refresh button."""
    from pathlib import Path

    import streamlit as st

    from pages.frame import loading

    root = Path(base)
    if st.button("Refresh", key="refresh"):
        loading.refresh(root)
    runs = loading.sub_runs(root)
    st.write("runs: " + ",".join(runs))
    for name in runs:
        run = loading.load_run(root / name, root)
        st.write(f"{name}: {len(run.samples)}" if run else f"{name}: none")
    loading.load_run(root / "missing", root)


def _texts(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown]


def test_runs_refresh_and_errors(tmp_path):
    for name in ("a", "b"):
        write_dump(tmp_path / name / "rollout_data_rank_0.jsonl", [make_sample(0)])
    at = AppTest.from_function(_script, args=(str(tmp_path),), default_timeout=60).run()
    assert not at.exception and _texts(at) == ["runs: a,b", "a: 1", "b: 1"]
    assert any("no such directory" in e.value for e in at.error)
    with open(tmp_path / "a" / "rollout_data_rank_0.jsonl", "ab") as handle:
        handle.write(line_of(make_sample(1)))
    write_dump(tmp_path / "c" / "rollout_data_rank_0.jsonl", [make_sample(0)])
    assert _texts(at.run()) == ["runs: a,b", "a: 1", "b: 1"]  # a click does not look
    at.button(key="refresh").click().run()
    assert not at.exception and _texts(at) == ["runs: a,b,c", "a: 2", "b: 1", "c: 1"]
