"""The fixtures every part of the suite shares: small dump dirs written by the test."""
from __future__ import annotations

import functools
from pathlib import Path

import pytest
from dump_files import LOSING_PROMPT, line_of, make_sample, write_dump


def _scan_components_once() -> None:
    """Each new AppTest scans every installed distribution for Streamlit components (0.4 s
    for the 535 of the test venv); the installed set does not change while the tests run,
    so one scan a process serves them all.  The real server scans once, at its start."""
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # a Streamlit without v2 components: nothing scanned
        return
    scan = manifest_scanner.scan_component_manifests
    if not hasattr(scan, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.cache(scan)


_scan_components_once()


@pytest.fixture
def dump_dir(tmp_path: Path) -> Path:
    """Two ranks, three steps, four samples per rank and step."""
    root = tmp_path / "run"
    for rank in range(2):
        samples = [make_sample(step, n=4 + i, seed=rank * 10 + i)
                   for step in range(3) for i in range(4)]
        write_dump(root / f"rollout_data_rank_{rank}.jsonl", samples)
    return root


@pytest.fixture
def board_dump(tmp_path: Path) -> Path:
    """Three steps x two ranks x four samples, plus a prompt RL never beats, a padded sample,
    an HTML payload and a bad line: enough for every page."""
    root = tmp_path / "board"
    for rank in range(2):
        samples = []
        for step in range(3):
            for i in range(4):
                sample = make_sample(step, n=5 + i, seed=rank * 10 + i, prompt=f"Question {i}",
                                     reward=round(0.1 * i + 0.2 * step + 0.05 * rank, 3))
                if i == 3:
                    sample.update(prompt=LOSING_PROMPT, reward=0.1, ref_reward=0.9)
                samples.append(sample)
        write_dump(root / f"rollout_data_rank_{rank}.jsonl", samples,
                   extra=b"{broken line\n" if rank == 1 else b"")
    padded = make_sample(2, n=4, seed=77, acc=1.0)
    padded["response_tokens"] += ["<PAD>", "<PAD>"]
    html = make_sample(2, n=3, seed=78, response='<img src=x onerror="alert(1)">',
                       response_tokens=["<img src=x ", 'onerror="alert(1)"', ">"])
    with open(root / "rollout_data_rank_0.jsonl", "ab") as handle:
        handle.write(line_of(padded) + line_of(html))
    return root
