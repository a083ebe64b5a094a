"""The Tinker cookbook's rollout summaries: iteration_{N:06d}/{base}_rollout_summaries.jsonl.

Written when `rollout_json_export` is on (tinker_cookbook/rl/train.py
`_maybe_export_rollout_summary_jsonl`, through tinker_cookbook/stores/training_store.py
`write_rollouts`), one line a trajectory (tinker_cookbook/rl/rollout_logging.py
`serialize_rollout_summaries`): `schema_version`, `split`, `iteration`, `group_idx`,
`traj_idx`, `tags`, `sampling_client_step`, `total_reward`, `final_reward`,
`trajectory_metrics`, `final_ob_len` and `steps` (`step_idx`, `ob_len`, `ac_len`, `reward`,
`episode_done`, `metrics`, `logs`).  A summary holds no text and no tokens: the board shows
rewards, groups, stop reasons, lengths and metrics, and says once that the texts are not
in the dump (loaders.formats.notes).
Why a trajectory ended is the one-hot `stop/<reason>` metric of its last step
(tinker_cookbook/rl/types.py `StopReason`); a token budget's reasons are cuts.
"""
from __future__ import annotations

from loaders import schema as S
from loaders.formats.context import FileContext

_CUTS = frozenset({"max_tokens", "max_sampled_tokens", "context_overflow"})
_STOP = "stop/"


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _stop_reason(steps: list[dict]) -> str | None:
    metrics = steps[-1].get("metrics") if steps else None
    if not isinstance(metrics, dict):
        return None
    return next((key[len(_STOP):] for key, on in metrics.items()
                 if isinstance(key, str) and key.startswith(_STOP) and on), None)


def normalize(record: dict, context: FileContext) -> list[dict]:
    steps = [s for s in record.get("steps") or [] if isinstance(s, dict)]
    iteration, sampled = record.get("iteration"), record.get("sampling_client_step")
    split = record.get("split")
    sample = {
        S.STEP: iteration, "group_id": record.get("group_idx"),
        "traj_idx": record.get("traj_idx"), S.REWARD: record.get("total_reward"),
        "final_reward": record.get("final_reward"), "env_steps": len(steps),
        "action_tokens": sum(s["ac_len"] for s in steps if _number(s.get("ac_len"))),
        "final_ob_len": record.get("final_ob_len"), "split": split,
        "tags": ", ".join(map(str, record.get("tags") or [])),
        # the sampler's weights: the board's policy lag is iteration - this
        S.POLICY_VERSION: sampled,
    }
    metrics = record.get("trajectory_metrics")
    if isinstance(metrics, dict):
        sample.update({f"metric_{k}": v for k, v in metrics.items() if _number(v)})
    stop = _stop_reason(steps)
    if stop is not None:
        sample["stop_reason"] = "length" if stop in _CUTS else stop
        sample["tinker_stop_reason"] = stop
    name = context.rel.rsplit("/", 1)[-1]
    sample[S.VALIDATION] = (context.validation or name.startswith("eval_")
                            or (isinstance(split, str) and split != "train"))
    return [sample]
