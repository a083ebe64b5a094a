"""Shared by formats that store token ids and a loss mask over the whole sequence."""
from __future__ import annotations

import math

from loaders import schema as S
from loaders.formats.masking import masked


def response_part(record: dict, mask_key: str) -> dict:
    """Every list as long as the mask, cut to the masked (response) tokens."""
    mask = record.get(mask_key)
    if not isinstance(mask, list):
        return dict(record)
    out = {}
    for key, value in record.items():
        if key == mask_key:
            continue
        out[key] = masked(value, mask) if isinstance(value, list) and len(value) == len(
            mask) else value
    return out


def prompt_ids_text(record: dict, mask_key: str, ids_key: str = "token_ids") -> str:
    """The prompt's token ids (those before the first trained token) as text, for a
    format that has no prompt text: equal prompts then share a prompt id and a group."""
    mask, ids = record.get(mask_key), record.get(ids_key)
    if not (isinstance(mask, list) and isinstance(ids, list)) or len(mask) != len(ids):
        return ""
    end = next((i for i, m in enumerate(mask) if m), len(mask))
    return " ".join(str(t) for t in ids[:end])


def id_tokens(ids: object) -> list[str] | None:
    """Token ids as token texts, until a tokenizer decodes them."""
    return [str(t) for t in ids] if isinstance(ids, list) else None


def mismatch(trainer: object, inference: object) -> dict[str, list[float]]:
    """Per-token rollout-vs-trainer mismatch.

    Tokens were sampled by the inference engine, so with r = log π_inf − log π_train the k3
    estimator exp(−r) − 1 + r estimates KL(π_inf‖π_train); the importance ratio is
    π_train / π_inf = exp(−r).
    """
    if not (isinstance(trainer, list) and isinstance(inference, list)):
        return {}
    kl, ratio = [], []
    for t, i in zip(trainer, inference):
        if t is None or i is None:
            kl.append(math.nan)
            ratio.append(math.nan)
            continue
        r = i - t
        kl.append(math.expm1(-r) + r if r > -700 else math.inf)
        ratio.append(math.exp(-r) if r > -700 else math.inf)
    return {"mismatch_kl": kl, "importance_ratio": ratio}


def scalar_reward(value: object) -> object:
    """A reward that some formats store as a one-element list."""
    if isinstance(value, list) and len(value) == 1:
        return value[0]
    return value


__all__ = ["S", "id_tokens", "mismatch", "prompt_ids_text", "response_part", "scalar_reward"]
