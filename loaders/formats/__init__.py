"""Trainer dump formats: detection by file name and keys, and normalisation to the schema.

Every format turns one stored record (a jsonl line or a Parquet row) into one or more samples
in the RLLoggingBoard layout of loaders.schema, so everything downstream sees one schema.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from loaders import schema as S
from loaders.formats import (
    agent_logs,
    episodes,
    native,
    nemo,
    open_instruct,
    prime,
    roll,
    slime,
    slime_files,
    tinker,
    trl,
    verifiers,
    verl,
)
from loaders.formats.context import FileContext
from loaders.parse.conversation import fill_texts
from loaders.parse.record import BadLine, parse_step


@dataclass(frozen=True)
class Format:
    name: str
    label: str
    path: re.Pattern  # matched against the path relative to the dump dir
    keys: frozenset[str]  # a record holding all of these is in this format
    normalize: Callable[[dict, FileContext], list[dict]]
    tabular: bool = False  # stored as Parquet rows, not jsonl lines
    any_of: frozenset[str] = frozenset()  # and, when given, at least one of these
    step_from_path: bool = True  # lines may lack a step: the file or dir name gives it
    # a file that is neither jsonl nor Parquet (torch.save archives, whole JSON files): its
    # records, read whole; such a format is tabular (a record is addressed by its index)
    reader: Callable[[Path | str, str], list[dict]] | None = None  # (path, rel)
    # a file that holds no sample of its own, read beside a run's dumps (AReaL's session
    # traces): never a run by itself (loaders.find.kind.detect)
    side: bool = False
    # the files read together with this one (itself among them), when a reader joins files:
    # a change to any of them is a change to each (loaders.index.refresh)
    group: Callable[[Path, str], list[Path]] | None = None  # (path, rel)


FORMATS = (
    Format("roll_dump", "ROLL rollout_dump_dir (one columnar line per step)",
           re.compile(r"(^|/)rollout_dump_data\.step_\d+\.jsonl$"),
           frozenset({"global_step", "responses"}), roll.explode_dump),
    Format("nemo_rl", "NeMo-RL train_data_step{N}.jsonl",
           re.compile(r"(^|/)(train|val)_data_step\d+\.jsonl$"),
           frozenset({"token_ids", "token_loss_mask"}), nemo.normalize),
    Format("prime_rl", "prime-rl token_exports/step_N/rank_R.jsonl",
           re.compile(r"(^|/)token_exports/step_\d+/rank_\d+\.jsonl$"),
           frozenset({"token_ids", "loss_mask"}), prime.normalize),
    Format("trl", "TRL log_completions completions/completions_{step}.parquet",
           re.compile(r"(^|/)completions_\d+\.parquet$"),
           frozenset({"completion"}), trl.normalize, tabular=True),
    Format("slime", "slime / miles debug dumps rollout_data/{id}.pt, train_data/{id}[_{rank}].pt",
           re.compile(r"(^|/)(rollout|train)_data/(eval_)?\d+(_\d+)?\.pt$"),
           frozenset({"rollout_id"}), slime.normalize, tabular=True, reader=slime_files.read,
           group=slime_files.group_of),
    Format("board_parquet", "RL Logging Board Parquet (DumpWriter format='parquet')",
           re.compile(r"(^|/)rollout_data_rank_?(val_?)?\d+\.step_\d+\.\d+\.parquet$"),
           frozenset({S.STEP}), native.normalize, tabular=True, step_from_path=False),
    Format("roll_board", "ROLL save_logging_board_dir data_{date}_{time}_{ms}.jsonl",
           re.compile(r"(^|/)data_\d{8}_\d{6}_\d+\.jsonl$"),
           frozenset({"new_response_mask"}), roll.normalize_board, step_from_path=False),
    Format("areal", "AReaL rollout/{version}/{task_id}.jsonl",
           re.compile(r"(^|/)(eval-)?rollout/\d+/\d+\.jsonl$"),
           frozenset({"task_id", "completion", "tail_version"}), agent_logs.areal),
    Format("areal_sessions", "AReaL session traces session_tracer/sessions-r{rank}.jsonl",
           re.compile(r"(^|/)session_tracer/(?:[^/]+/)?sessions-r\d+\.jsonl$"),
           frozenset({"task_id", "session_id", "submit_ts"}), agent_logs.areal_sessions,
           side=True),
    Format("skyrl", "SkyRL dumped_evals/global_step_{N}_evals/{data_source}.jsonl",
           re.compile(r"(^|/)dumped_evals/[^/]+/(?!aggregated_results\.jsonl$)[^/]+\.jsonl$"),
           frozenset({"input_prompt", "output_response", "score"}), agent_logs.skyrl),
    Format("art", "ART trajectories/{split}/{step:04d}.parquet",
           re.compile(r"(^|/)trajectories/[^/]+/\d+\.parquet$"),
           frozenset({"messages", "group_index", "reward"}), episodes.art, tabular=True),
    Format("rllm", "rLLM episodes/{mode}_step_{N}_epoch_{E}/episode_*.json (and rllm eval's)",
           re.compile(r"(^|/)((train|val)_step_\d+_epoch_\d+|episodes)/episode_[^/]*\.json$"),
           frozenset({"training_step", "trajectories"}), episodes.rllm, tabular=True,
           reader=episodes.read_json),
    Format("tinker", "Tinker cookbook iteration_{N}/{base}_rollout_summaries.jsonl",
           re.compile(r"(^|/)iteration_\d+/[^/]+_rollout_summaries\.jsonl$"),
           frozenset({"schema_version", "group_idx", "traj_idx", "steps"}), tinker.normalize,
           step_from_path=False),
    Format("open_instruct", "open-instruct save_traces {run_name}_rollouts_{shard}.jsonl",
           re.compile(r"(^|/)[^/]+_rollouts_\d{6}\.jsonl$"),
           frozenset({"sample_idx", "prompt_idx", "prompt_tokens", "response_tokens"}),
           open_instruct.normalize, step_from_path=False),
    Format("verl", "verl rollout/validation dump {global_step}.jsonl",
           re.compile(r"(^|/)\d+\.jsonl$"), frozenset({"input", "output", "score"}),
           verl.normalize),
    Format("verifiers", "verifiers / prime-rl episodes rollouts/step_N/…/traces.jsonl",
           re.compile(r"(^|/)traces\.jsonl$"), frozenset({"traces", "task"}),
           verifiers.normalize),
    Format("native", "RLLoggingBoard rollout_data_rank{N}.jsonl (and forks)",
           re.compile(r"(^|/)rollout_data_rank_?(val_?)?\d+\.jsonl$"),
           frozenset({S.STEP}), native.normalize, step_from_path=False,
           any_of=frozenset({S.PROMPT, S.RESPONSE, S.RESPONSE_TOKENS, S.LOGPROBS, S.REWARD})),
)
BY_NAME = {f.name: f for f in FORMATS}


def by_path(rel: str) -> Format | None:
    """The format a file name says, if it says one."""
    return next((f for f in FORMATS if f.path.search(rel)), None)


def by_keys(record: dict) -> Format | None:
    """The format whose identifying keys a record holds (most specific first)."""
    keys = record.keys()
    return next((f for f in FORMATS if not f.tabular and f.keys <= keys
                 and (not f.any_of or f.any_of & keys)), None)


def supported() -> str:
    """One line per supported format, for messages."""
    return "\n".join(f"  - {f.label}" for f in FORMATS)


def no_known_format(names: list[str]) -> str:
    """The message for a dir where no file is in a known dump format."""
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return (f"no file is in a known dump format (found {len(names)}: {shown}); supported: "
            + "; ".join(line.strip(" -") for line in supported().splitlines()))


def read_records(fmt: str, path: Path | str, rel: str) -> list[dict]:
    """Every record of a tabular file: a Parquet file's rows, or what the format's reader
    returns.  Raises OSError or ValueError."""
    reader = BY_NAME[fmt].reader
    if reader is not None:
        return reader(path, rel)
    from loaders.find.remote import open_binary
    from loaders.parse.footer import opened, read_checked

    with open_binary(path) as source:  # within the budgets first (OverBudget: a ValueError)
        return read_checked(opened(source)).to_pylist()


def samples_of(record: dict, fmt: str, context: FileContext) -> list[dict | BadLine]:
    """Normalised samples of one record, each with an int step, or the BadLine it raised."""
    if fmt in AS_WRITTEN and is_plain(record):
        return [record]
    out: list[dict | BadLine] = []
    use_path = BY_NAME[fmt].step_from_path
    for sample in BY_NAME[fmt].normalize(record, context):
        if use_path and sample.get(S.STEP) is None and context.step is not None:
            sample[S.STEP] = context.step
        try:
            sample[S.STEP] = parse_step(sample.get(S.STEP), S.STEP in sample)
        except BadLine as err:
            out.append(err)
            continue
        out.append(fill_texts(sample))
    return out


AS_WRITTEN = frozenset({"native", "board_parquet"})  # normalize returns the record itself
_STEP_LIMIT = 2**63


def is_plain(record: dict) -> bool:
    """A record of the board's own format that needs nothing done: an int step in range
    (parse_step's rule) and no conversation to take texts from (fill_texts)."""
    step = record.get(S.STEP)
    return (step.__class__ is int and -_STEP_LIMIT < step < _STEP_LIMIT
            and S.MESSAGES not in record)
