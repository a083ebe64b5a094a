import numpy as np
from dump_files import make_sample, write_dump

from loaders import open_run
from loaders import schema as S


def test_one_sample_loads_its_tokens_lazily(dump_dir):
    run = open_run(dump_dir)
    sample = run.sample("rollout_data_rank_1.jsonl:6")
    expected = make_sample(1, n=5, seed=11)
    assert sample.step == 1 and sample.texts[S.PROMPT] == expected["prompt"]
    tokens = sample.tokens
    assert list(tokens[S.TOKEN]) == expected["response_tokens"]
    lr = np.array(expected["logprobs"]) - np.array(expected["ref_logprobs"])
    np.testing.assert_allclose(tokens[S.LOG_RATIO], lr)
    np.testing.assert_allclose(tokens[S.K3], np.exp(-lr) - 1 + lr)
    np.testing.assert_allclose(tokens[S.PROB], np.exp(expected["logprobs"]))
    row = run.samples[(run.samples[S.FILE] == "rollout_data_rank_1.jsonl")
                      & (run.samples[S.LINE] == 6)].iloc[0]
    assert np.isclose(row[S.kl_mean(S.K3)], tokens[S.K3].mean())


def test_step_samples_come_in_summary_order(dump_dir):
    run = open_run(dump_dir)
    samples = run.step_samples(2)
    rows = run.step_rows(2)
    assert [s.key for s in samples] == rows[S.KEY].tolist()
    assert rows[S.KEY].iloc[0] == f"{rows[S.FILE].iloc[0]}:{rows[S.LINE].iloc[0]}"
    assert all(s.step == 2 for s in samples) and len(samples) == 8


def test_padding_is_aligned_and_raw_lengths_kept(tmp_path):
    padded = make_sample(0, n=4)
    padded["response_tokens"] += ["<PAD>"] * 3
    write_dump(tmp_path / "d" / "r.jsonl", [padded])
    run = open_run(tmp_path / "d")
    assert bool(run.samples[S.LENGTH_MISMATCH].iloc[0]) and run.samples[S.RESPONSE_LEN][0] == 4
    sample = run.sample("r.jsonl:1")
    assert len(sample.tokens) == 4 and sample.raw_lengths[S.RESPONSE_TOKENS] == 7


def test_sample_changed_on_disk_reports_instead_of_crashing(dump_dir):
    run = open_run(dump_dir)
    path = dump_dir / "rollout_data_rank_0.jsonl"
    path.write_bytes(b"x" * path.stat().st_size)
    sample = run.sample("rollout_data_rank_0.jsonl:2")
    assert sample.error and "rollout_data_rank_0.jsonl:2" in sample.error


def test_sample_of_a_deleted_file_reports_instead_of_crashing(dump_dir):
    run = open_run(dump_dir)
    (dump_dir / "rollout_data_rank_1.jsonl").unlink()
    sample = run.sample("rollout_data_rank_1.jsonl:3")
    assert sample.error and "cannot read" in sample.error
    assert run.sample("rollout_data_rank_0.jsonl:3").error is None


def test_step_texts_are_full_texts_without_token_tables(dump_dir):
    long_prompt = "why " * 300
    write_dump(dump_dir / "rollout_data_rank_2.jsonl", [make_sample(1, prompt=long_prompt)])
    run = open_run(dump_dir)
    texts = run.step_texts(1)
    assert len(texts) == 9
    assert texts["rollout_data_rank_2.jsonl:1"][S.PROMPT] == long_prompt
    assert len(run.with_previews(run.samples)[S.PROMPT].iloc[0]) <= S.PREVIEW_CHARS
