"""The reference writer: what trainers call to append samples."""
import os
import threading

import numpy as np

from loaders import open_run
from loaders import schema as S
from loaders.writer import DumpWriter, encode


class FakeTensor:
    """Anything with .tolist(), like a torch tensor."""

    def __init__(self, values):
        self.values = values

    def tolist(self):
        return list(self.values)


def test_accepts_lists_numpy_and_tolist_objects(tmp_path):
    writer = DumpWriter(tmp_path, rank=2)
    writer.write({"step": np.int64(3), "prompt": "p", "response": "ab",
                  "response_tokens": ["a", "b"], "logprobs": np.array([-0.5, -0.25]),
                  "ref_logprobs": FakeTensor([-0.5, -0.5]), "values": [0.1, float("nan")],
                  "reward": np.float32(1.0)})
    assert writer.path.name == "rollout_data_rank_2.jsonl"
    run = open_run(tmp_path)
    row = run.samples.iloc[0]
    assert (row[S.STEP], row[S.RANK], row[S.REWARD]) == (3, 2, 1.0)
    assert np.isclose(row[S.LOG_RATIO_SUM], 0.25)
    assert row[S.NAN_COUNT] == 1  # NaN written as null, read back as NaN


def test_validation_file_name(tmp_path):
    writer = DumpWriter(tmp_path, rank=0, validation=True)
    writer.write({"step": 1, "reward": 0.5, "response": "r"})
    assert writer.path.name == "rollout_data_rank_val0.jsonl"
    assert open_run(tmp_path).has_validation


def test_every_line_is_one_write(tmp_path, monkeypatch):
    writes = []
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: writes.append(data) or real_write(fd, data))
    DumpWriter(tmp_path).write_many([{"step": i, "response": "x" * 1000} for i in range(5)])
    assert len(writes) == 5 and all(w.endswith(b"\n") and w.count(b"\n") == 1 for w in writes)


def test_concurrent_appends_never_interleave(tmp_path):
    writers = [DumpWriter(tmp_path, rank=0) for _ in range(4)]
    big = {"step": 0, "response": "y" * 50_000, "response_tokens": ["y"] * 2000,
           "logprobs": [-0.1] * 2000}
    threads = [threading.Thread(target=w.write_many, args=([big] * 10,)) for w in writers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    run = open_run(tmp_path)
    assert len(run.samples) == 40 and run.bad_lines == 0


def test_encode_is_one_line():
    assert encode({"text": "a\nb"}).count(b"\n") == 1


def test_the_package_a_trainer_copies_works_without_the_board(tmp_path):
    """Copied as the README says (the package's three files, without the board), imported
    by its own name in a fresh interpreter: both formats write, and the board reads them."""
    import shutil
    import subprocess
    import sys

    from dump_files import ROOT

    from loaders import open_run

    trainer = tmp_path / "trainer"
    (trainer / "writer").mkdir(parents=True)
    for name in ("__init__.py", "parquet.py", "columns.py"):
        shutil.copy(ROOT / "loaders" / "writer" / name, trainer / "writer" / name)
    code = (
        "from writer import DumpWriter\n"
        "for fmt, rank in (('jsonl', 0), ('parquet', 1)):\n"
        "    with DumpWriter('out', rank=rank, format=fmt) as w:\n"
        "        w.write({'step': 1, 'prompt': 'p', 'response': 'r', 'response_tokens': ['r'],\n"
        "                 'logprobs': [-0.5], 'ref_logprobs': [-0.25], 'reward': 1.0})\n"
        "import sys; assert not [m for m in sys.modules if m.startswith('loaders')]\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=trainer, capture_output=True,
                          text=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    run = open_run(trainer / "out")
    assert run.size == 2 and sorted(run.formats.values()) == ["board_parquet", "native"]
