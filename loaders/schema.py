"""The one place that names every column of the board.

Input keys are what a trainer writes on each jsonl line; summary columns are what the
per-sample frame holds; token columns are what a lazily loaded token table holds.
Pages import these names instead of spelling strings.
"""
from __future__ import annotations

# ---- the index's version: a change in what a summary column means bumps it ----------
# 13: row groups of ROW_GROUP_ROWS samples, so a served run reads the text previews of the
# rows it shows (loaders.index.previews); a trainer key "row" is the column "extra_row".
# 14: no KEY column (made for the rows shown); the token digest and where each line is are
# read by row too (schema.READ_BY_ROW).  15: TRUNCATION_INFERRED (the dump's word on
# truncation decides; the length cap only where it says nothing).  16: POLICY_LAG and
# POLICY_SPAN (async RL).  17: IMAGES.  18: content hashes by XXH3 (loaders.index.hashes).
# Older indexes rebuild once; a Parquet dump's summary stored by another version is
# computed again (loaders.index.stored_summary).  19: SIGNATURES (response clusters).
# 20: a scalar of the wrong kind (a reward "abc") is its problem alone, not counted in
# NAN_COUNT too
INDEX_VERSION = 20
# what a Parquet dump's stored summary was made by (loaders.index.stored_summary): moved only
# when its typed columns would read otherwise, so a dump written before keeps its fast cold
# index.  Version 20 changed nothing a typed column can hold (a reward there is a number)
SUMMARY_VERSION = 19

# ---- input keys (RLLoggingBoard format) -------------------------------------------------
STEP = "step"
PROMPT = "prompt"
RESPONSE = "response"
REF_RESPONSE = "ref_response"
GROUND_TRUTH = "ground_truth"
RESPONSE_TOKENS = "response_tokens"
LOGPROBS = "logprobs"
REF_LOGPROBS = "ref_logprobs"
VALUES = "values"
TOKEN_REWARDS = "token_rewards"
REWARD = "reward"
REF_REWARD = "ref_reward"
VALID_REWARD = "valid_reward"
REF_VALID_REWARD = "ref_valid_reward"
VALIDATION = "validation"  # true for validation samples, kept apart from training

# a trainer's own id of a sample's group (the prompt it answers), most specific first:
# slime's Sample.group_index, verifiers' example_id, prime-rl's platform problem_id, and
# `uid` (verl's group id, which its own dump leaves out, but custom dumps add); without one,
# the unpadded prompt text is the group (what NeMo-RL and OpenRLHF do in memory)
GROUP_KEYS = ("group_index", "example_id", "problem_id", "uid", "group_id")
GROUP_BY_PROMPT = "prompt"
# what marks a sample the trainer did not train on (kept, counted, shown apart): slime's
# status "aborted"/"failed", verl's stop_reason "aborted", ROLL's finish_reason "abort",
# verifiers' `error`, slime's remove_sample, NeMo-RL's sample_loss_mask 0
STATUS_KEYS = ("status", "rollout_status", "finish_reason", "stop_reason")
EXCLUDED_STATUSES = frozenset({"aborted", "abort", "failed", "failure", "error", "errored",
                               "filtered", "dropped", "skipped", "cancelled", "canceled"})
FILTER_FLAG_KEYS = ("filtered", "is_filtered", "aborted", "is_aborted", "remove_sample")
ERROR_KEYS = ("error", "errors", "exception")
LOSS_WEIGHT_KEYS = ("sample_loss_mask", "loss_multiplier")  # 0: no loss from this sample
# a trainer's advantage: a scalar per sample, or a token array (its mean is the sample's)
ADVANTAGE_KEYS = ("advantage", "advantages", "adv")

# a multi-turn (agentic) sample: `messages` is its conversation, an ordered list of turns
# {role: system|user|assistant|tool, content, tool_calls: [{name, arguments}], tool_call_id,
# reasoning_content, finish_reason}; over its response tokens `loss_mask` (1 trained, 0 masked:
# tool outputs, user turns, template scaffold) and `token_turns` (the index in `messages` of
# the turn each token belongs to).  See loaders.parse.conversation.
MESSAGES = "messages"
LOSS_MASK = "loss_mask"
TOKEN_TURNS = "token_turns"
CONVERSATION_KEYS = (MESSAGES, LOSS_MASK, TOKEN_TURNS)

# async RL: the versions of the policy weights that generated a sample, the oldest and the
# newest (a multi-turn or partial rollout can span several); with the step it is trained at
# they give its policy lag (step - oldest) and span (newest - oldest).  Read from slime/miles'
# weight_versions, AReaL's head/tail_version, verifiers' run.work.policy, Tinker's
# sampling_client_step; the board's own dump writes them as they are.
# a request's timing, as extra columns under these names (seconds; *_ts: Unix timestamps):
# its whole wall time, the model's part, the tools' or environment's part, its wait before
# it started, when it started and finished (verifiers' calls[].time, slime's
# non_generation_time, the board's own dump as written)
REQUEST_S, GENERATE_S, TOOL_S, QUEUE_S = "request_s", "generate_s", "tool_s", "queue_s"
START_TS, FINISH_TS = "start_ts", "finish_ts"
LATENCY_COLUMNS = (REQUEST_S, GENERATE_S, TOOL_S, QUEUE_S, START_TS, FINISH_TS)
POLICY_VERSION = "policy_version"
POLICY_VERSION_NEWEST = "policy_version_newest"

CORE_KEYS = (PROMPT, RESPONSE, RESPONSE_TOKENS, LOGPROBS, REF_LOGPROBS, VALUES,
             TOKEN_REWARDS, REWARD, STEP)
# a prompt's images (vision-language RL): a path, a data URL, bytes, or a list of them
# (loaders.parse.images); the index keeps how many, a view decodes them
IMAGE_KEYS = ("img_path", "images", "image")
OPTIONAL_KEYS = (REF_RESPONSE, REF_REWARD, GROUND_TRUTH, VALID_REWARD, REF_VALID_REWARD,
                 POLICY_VERSION, POLICY_VERSION_NEWEST, *IMAGE_KEYS)
TEXT_KEYS = (PROMPT, RESPONSE, REF_RESPONSE, GROUND_TRUTH)
SCALAR_KEYS = (REWARD, REF_REWARD, VALID_REWARD, REF_VALID_REWARD)
FLOAT_ARRAY_KEYS = (LOGPROBS, REF_LOGPROBS, VALUES, TOKEN_REWARDS)
KNOWN_KEYS = frozenset(CORE_KEYS + OPTIONAL_KEYS + (VALIDATION,) + CONVERSATION_KEYS)

# ---- summary frame: where each sample lives -------------------------------------------
FILE = "file"
LINE = "line"
RANK = "rank"
OFFSET = "offset"  # byte offset of the line (row index for Parquet files)
NBYTES = "nbytes"
LINE_CHECK = "line_check"  # CRC-32 of the line's bytes (of the row's values for Parquet)
ITEM = "item"  # position within the line, for formats that store many samples per line
# a served run's row in the index file it reads its text previews from (loaders.index.previews);
# never stored
ROW = "row"
KEY = "key"  # "file:line", or "file:line#item" for item > 0: a sample's name in the UI
PROMPT_ID = "prompt_id"  # hash of the prompt text without padding: one prompt across steps/runs
GROUP_ID = "group_id"  # per step, the samples answering one prompt (a GRPO group)
GROUP_SOURCE = "group_source"  # the key group_id came from: a trainer key, or "prompt"
EXCLUDED = "excluded"  # filtered, aborted or errored: kept and shown, never in training stats
EXCLUDED_BY = "excluded_by"  # why, e.g. "status=aborted" ("" when kept)

# ---- summary frame: derived per-sample values -------------------------------------------
PROMPT_CHARS = "prompt_chars"
RESPONSE_CHARS = "response_chars"
REF_RESPONSE_CHARS = "ref_response_chars"
RESPONSE_LEN = "response_len"
REWARD_GAP = "reward_gap"
LOG_RATIO_MEAN = "log_ratio_mean"
LOG_RATIO_SUM = "log_ratio_sum"
VALUE_MEAN = "value_mean"
TOKEN_REWARD_SUM = "token_reward_sum"
NAN_COUNT = "nan_count"
TRUNCATED = "truncated"
# the truncated flag came from the length cap, not from the dump: no truncation flag, finish
# reason or status of the sample said how it ended (loaders.index.table.truncated)
TRUNCATION_INFERRED = "truncation_inferred"
# share of the response's word 4-grams that repeat an earlier one, over its last
# REPETITION_CHARS characters (where a generation loop sits); 0 for short responses
REPETITION = "repetition"
REPETITION_CHARS = 1024
# a response's near-duplicate signature: 8 LSH bands of its min-hashes, two an int64
# (loaders.index.signatures); a step's response clusters are made of them (loaders.groups
# .clusters): responses that share a band are near duplicates
SIGNATURES = ("signature_0", "signature_1", "signature_2", "signature_3")
LENGTH_MISMATCH = "length_mismatch"
# how many updates behind its training step the oldest policy that generated the sample was,
# and how many versions its generation spanned (NaN where the dump says no version)
IMAGES = "images"  # how many images the sample's prompt holds (0: none)
POLICY_LAG = "policy_lag"
POLICY_SPAN = "policy_span"
NONFINITE = "nonfinite"
FLAGS = (TRUNCATED, LENGTH_MISMATCH, NONFINITE)
# a conversation's summary (NaN / "" for a single-turn sample): its turns, the tool calls of
# its assistant turns, the tools they named (sorted, comma-separated), tool turns that report
# an error, the share of its response tokens that are trained (loss_mask), and the finish
# reason of its last assistant turn (else the sample's finish_reason / stop_reason)
TURNS = "turns"
TOOL_CALLS = "tool_calls"
TOOL_NAMES = "tool_names"
TOOL_ERRORS = "tool_errors"
TRAINED_SHARE = "trained_share"
LAST_FINISH = "last_finish_reason"
CONVERSATION_COLUMNS = (TURNS, TOOL_CALLS, TOOL_NAMES, TOOL_ERRORS, TRAINED_SHARE, LAST_FINISH)
# bytes on the first row of each (file, step, validation) group a parse met: its token
# metrics by position bin and its hot tokens (loaders.index.token_digest); None elsewhere
TOKEN_DIGEST = "token_digest"

# ---- KL estimators of KL(pi || pi_ref) from samples of pi, r = logprob - ref_logprob ------
K1 = "k1"  # r: unbiased, high variance, can be negative per token
K2 = "k2"  # r**2 / 2: biased, always >= 0, low variance
K3 = "k3"  # exp(-r) - 1 + r: unbiased, always >= 0 (Schulman's k3)
K3_REVERSE = "k3_reverse"  # exp(r) - 1 - r: k3 of KL(pi_ref || pi); what the original tool shows
KL_ESTIMATORS = (K1, K2, K3, K3_REVERSE)
KL_LABELS = {
    K1: "k1 = log_ratio (unbiased KL(π‖π_ref), signed)",
    K2: "k2 = ½·log_ratio² (≥ 0, biased)",
    K3: "k3 = exp(−log_ratio) − 1 + log_ratio (≥ 0, unbiased)",
    K3_REVERSE: "k3 reverse = exp(log_ratio) − 1 − log_ratio (KL(π_ref‖π) form; original tool)",
}


def kl_mean(estimator: str) -> str:
    """Summary column holding the per-token mean of one KL estimator."""
    return f"kl_{estimator}_mean"


def kl_sum(estimator: str) -> str:
    """Summary column holding the per-sample sum of one KL estimator."""
    return f"kl_{estimator}_sum"


def extra_array_mean(key: str) -> str:
    """Summary column holding the mean of an extra per-token array the trainer wrote."""
    return f"{key}_mean"


# ---- token table (one sample, loaded lazily) --------------------------------------------
TOKEN = "token"
TOKEN_INDEX = "index"
LOGPROB = "logprob"
REF_LOGPROB = "ref_logprob"
VALUE = "value"
TOKEN_REWARD = "token_reward"
LOG_RATIO = "log_ratio"
PROB = "prob"
REF_PROB = "ref_prob"
TOKEN_METRICS = (TOKEN_REWARD, LOG_RATIO, K1, K2, K3, K3_REVERSE, VALUE, LOGPROB,
                 REF_LOGPROB, PROB, REF_PROB)
TURN = "turn"  # the token's turn (index in `messages`), -1 outside a conversation
TRAINED = "trained"  # False for a masked (environment) token: its metrics are NaN
ARRAY_TO_TOKEN_COLUMN = {LOGPROBS: LOGPROB, REF_LOGPROBS: REF_LOGPROB, VALUES: VALUE,
                         TOKEN_REWARDS: TOKEN_REWARD}

# ---- per-step aggregates ----------------------------------------------------------------
SAMPLES = "samples"
WIN_RATE = "win_rate"  # wins / (wins + losses) against ref_reward: ties count for neither
WIN_SHARE = "win_share"  # wins / pairs with both rewards
TIE_SHARE = "tie_share"  # ties / pairs
LOSS_SHARE = "loss_share"  # losses / pairs
STAT_SUFFIXES = ("mean", "std", "min", "max", "p10", "p25", "p50", "p75", "p90")


def stat(column: str, suffix: str) -> str:
    """Per-step aggregate column, e.g. stat(REWARD, 'mean') -> 'reward_mean'."""
    return f"{column}_{suffix}"


# ---- dtypes of the summary frame (extras are added as float64 or string) ------------------
SUMMARY_DTYPES: dict[str, str] = {
    FILE: "category", LINE: "int64", RANK: "int32", OFFSET: "int64", NBYTES: "int64",
    LINE_CHECK: "int64",
    ITEM: "int64", STEP: "int64", PROMPT_ID: "int64", VALIDATION: "bool",
    GROUP_ID: "int64", GROUP_SOURCE: "category", EXCLUDED: "bool", EXCLUDED_BY: "string",
    PROMPT: "string", RESPONSE: "string", REF_RESPONSE: "string", GROUND_TRUTH: "string",
    PROMPT_CHARS: "int64", RESPONSE_CHARS: "int64", REF_RESPONSE_CHARS: "int64",
    RESPONSE_LEN: "int64",
    REWARD: "float64", REF_REWARD: "float64", VALID_REWARD: "float64",
    REF_VALID_REWARD: "float64", REWARD_GAP: "float64",
    LOG_RATIO_MEAN: "float64", LOG_RATIO_SUM: "float64",
    **{kl_mean(k): "float64" for k in KL_ESTIMATORS},
    **{kl_sum(k): "float64" for k in KL_ESTIMATORS},
    VALUE_MEAN: "float64", TOKEN_REWARD_SUM: "float64", NAN_COUNT: "int64",
    TRUNCATED: "bool", TRUNCATION_INFERRED: "bool", LENGTH_MISMATCH: "bool", NONFINITE: "bool",
    TOKEN_DIGEST: "object",
    REPETITION: "float64", POLICY_LAG: "float64", POLICY_SPAN: "float64", IMAGES: "int64",
    TURNS: "float64", TOOL_CALLS: "float64", TOOL_NAMES: "string", TOOL_ERRORS: "float64",
    TRAINED_SHARE: "float64", LAST_FINISH: "string",
    **dict.fromkeys(SIGNATURES, "int64"),
}
# every column the board makes (a served run's ROW and the KEY of the rows it shows too); any
# other column is a trainer's extra
BOARD_COLUMNS = frozenset(SUMMARY_DTYPES) | {ROW, KEY}
PREVIEW_CHARS = 400  # text columns in the summary are previews; full text loads lazily
# the summary's text previews: in the index file, but read per shown row by a served run
TEXT_PREVIEWS = (PROMPT, RESPONSE, REF_RESPONSE, GROUND_TRUTH)
# where a sample's line is in its file, and the check of its bytes (a Location's)
LINE_PLACE = (OFFSET, NBYTES, LINE_CHECK)
# what a served run leaves in its index file and reads for the rows it shows (by ROW): the
# previews, where each line is, the token digests and a conversation's columns (the step's
# filters and tables show them; no whole-run view needs them).  KEY is not stored at all: it
# is made from FILE, LINE and ITEM for the rows shown
READ_BY_ROW = (*TEXT_PREVIEWS, *LINE_PLACE, TOKEN_DIGEST, *CONVERSATION_COLUMNS)
# extra columns a run keeps (see loaders.index.extras.kept_extras); a key past them stays in
# its line, which the Sample view shows, and is a problem of its file
MAX_EXTRA_COLUMNS = 256
SORT_KEYS = (STEP, RANK, FILE, LINE, ITEM)


def sample_key(file: str, line: int, item: int = 0) -> str:
    """A sample's name: "file:line", or "file:line#item" when a line holds many samples."""
    return f"{file}:{line}" if not item else f"{file}:{line}#{item}"


# ---- GRPO groups: one row per (step, group), and one per prompt over the run ----------
GROUP_SIZE = "size"
GROUP_LEFT_OUT = "left_out"  # the group's samples the trainer did not train on
PASS_RATE = "pass_rate"
PASSED = "passed"  # per sample: counted as correct (see loaders.groups.table.passed)
ADVANTAGE = "advantage"  # per sample: the trainer's, else derived from the group's rewards
ADVANTAGE_SPREAD = "advantage_spread"  # max - min of the group's advantages
TRUNCATED_SHARE = "truncated_share"
GROUP_REWARDED = "rewarded"  # the group's answers with a finite reward (its reward stats')
ZERO_VARIANCE = "zero_variance"  # >= 2 finite rewards, all equal: no learning signal
UNDER_TWO_REWARDS = "under_two_rewards"  # < 2 finite rewards: no std, no relative advantage
NO_SIGNAL = "no_signal"  # zero variance or under two rewards: GRPO learns nothing from it
ALL_CORRECT = "all_correct"
ALL_WRONG = "all_wrong"
GROUP_KIND = "kind"  # "solved" (all pass), "unsolved" (none pass) or "mixed"
GROUP_KINDS = ("solved", "unsolved", "mixed")
# a correctness key some trainers log beside the reward (verl reward_extra_info `acc`)
CORRECT_KEYS = ("acc", "correct", "is_correct", "accuracy")
STEPS_SEEN = "steps_seen"
FIRST_SOLVED = "first_solved"  # first step the prompt's group was solved
LAST_UNSOLVED = "last_unsolved"  # last step it was unsolved
ZERO_VARIANCE_STEPS = "zero_variance_steps"
PASS_TREND = "pass_trend"  # least-squares slope of the pass rate per step
PROMPT_CATEGORY = "category"  # the first of PROMPT_FLAGS that holds, else "other"
# a prompt's flags over the run (each a bool column; they can overlap), for prompts seen at
# >= 2 steps; "regressed": solved (all pass) and later at most half passing
PROMPT_FLAGS = ("never solved", "always solved", "regressed", "stuck at zero variance",
                "learning")
SEEN_ONCE = "seen once"

# ---- comparing runs (loaders.serve.runset) ------------------------------------------------
# a dataset's own id of a prompt, the same in every run of an ablation (verl's `uid` and
# slime's `group_index` are made per rollout, so they are not among them)
MATCH_ID_KEYS = ("example_id", "problem_id", "question_id", "prompt_uid", "data_id", "index",
                 "idx", "id")
MATCH_KEY = "match_key"  # what makes two runs' prompts one prompt: a shared id, or PROMPT_ID
RUNS_WITH = "runs_with"  # how many of the compared runs have the prompt at their step
DELTA = "delta"  # B − A


def run_column(column: str, run: int) -> str:
    """A compared run's value of a column, e.g. run_column(REWARD, 1) -> 'reward@1'."""
    return f"{column}@{run}"


# ---- health signals: one value per step, from the metrics and the dump ------------------
H_KL = "kl"  # policy KL from the trainer's metrics, else the dump's per-token KL
H_TOKEN_KL = "token_kl"  # mean per-token k3 KL of the step's samples (dump)
H_GRAD_NORM = "grad_norm"
H_ENTROPY = "entropy"
H_REWARD = "reward"
H_LENGTH = "response_length"
H_TOKENS = "tokens"  # tokens in the step's batch
H_TRUNCATION = "truncation_ratio"
H_ABORT = "abort_ratio"
H_TIMEOUT = "timeout_ratio"
H_MEM_RESERVED = "memory_reserved"
H_MEM_ALLOCATED = "memory_allocated"
H_MEM_TOTAL = "memory_total"
H_ZERO_VARIANCE = "zero_variance_share"  # GRPO groups whose rewards are all equal
H_GROUPS = "prompt_groups"  # GRPO groups (same prompt, same step, >= 2 samples)
H_LAG_MAX = "policy_lag_max"  # async RL: the step's stalest sample, in policy updates
H_LAG_P90 = "policy_lag_p90"  # and the lag 90 % of its samples stay within
H_GROUP_STD = "group_reward_std"  # mean within-group reward std over the step's groups
H_REF_KL = "ref_kl"  # KL to the reference: the trainer's kl_loss, else the dump's token KL
H_MISMATCH_KL = "mismatch_kl"  # KL between the rollout engine's and the trainer's logprobs
H_IS_RATIO = "importance_ratio"  # mean token importance ratio trainer / rollout engine
H_IS_OUTSIDE = "importance_ratio_outside"  # share of tokens with that ratio outside [0.5, 2]
H_REPETITIVE = "repetitive_share"  # share of responses with heavy n-gram repetition
H_CLUSTERS = "clusters_per_100"  # near-duplicate response clusters per 100 responses (dump)
H_LARGEST_CLUSTER = "largest_cluster_share"  # the step's largest response cluster's share
H_SAMPLES = "samples_n"  # the step's samples in the dump (trained ones): each mean's n


def h_se(signal: str) -> str:
    """The standard error of a dump-derived health signal (NaN where not known)."""
    return f"{signal}_se"
