"""The text columns of a batch of samples: previews, lengths, prompt ids and repetition.

A text field that is a string (the usual case) is read as it is, for the whole batch in one
list comprehension; anything else (a chat message list, a number) goes through text_of one
sample at a time.  A prompt is hashed in C once for the samples in a row that share it (a
GRPO group of 8: kernel.text_ids); without the build, once per distinct text this process
has seen (_PromptIds), so a later step that asks it again shares it too.
"""
from __future__ import annotations

import threading

import numpy as np

from loaders import schema as S
from loaders.index import kernel
from loaders.index.fields import column
from loaders.index.grouping import PAD_EDGES, prompt_id
from loaders.index.repetition import repetitions
from loaders.index.signatures import signatures
from loaders.index.text_preview import previews
from loaders.parse.text import text_of


class _PromptIds:
    """Prompt ids this process knows: a dataset's prompts recur every epoch, and a parser
    worker scans many chunks of one run.  Forgotten at once past KEPT_CHARS of prompts (a
    long system prompt in each must not make it hold a run's texts)."""

    KEPT_CHARS = 16 << 20

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.chars = 0
        self._lock = threading.Lock()  # the server scans growth on many threads

    def of(self, prompts: list[str]) -> np.ndarray:
        with self._lock:
            return self._of(prompts)

    def _of(self, prompts: list[str]) -> np.ndarray:
        distinct = dict.fromkeys(prompts).keys()
        new = distinct - self.ids.keys()
        chars = sum(map(len, new))
        if self.chars + chars > self.KEPT_CHARS:  # forget the rest: keep this batch's
            self.ids = {text: self.ids[text] for text in distinct - new}
            self.chars = sum(map(len, self.ids))
        ids = self.ids
        for text in new:
            ids[text] = prompt_id(text)
        self.chars += chars
        return np.fromiter(map(ids.__getitem__, prompts), np.int64, len(prompts))


_PROMPT_IDS = _PromptIds()


def texts(objs: list[dict], key: str, keys: set[str]) -> list[str]:
    """The key's text in every sample ("" where missing)."""
    if key not in keys:
        return [""] * len(objs)
    values = column(objs, key, keys)
    if kernel.all_strings(values):
        return values
    return [v if v.__class__ is str else text_of(v) for v in values]


def text_columns(objs: list[dict], keys: set[str], cols: dict) -> None:
    """Previews (PREVIEW_CHARS), lengths, the prompt id and the response's repetition."""
    prompts = texts(objs, S.PROMPT, keys)
    ids = kernel.text_ids(prompts, "", prompt_id, PAD_EDGES)  # no table of ids: hashed in C
    cols[S.PROMPT_ID] = _PROMPT_IDS.of(prompts) if ids is None else ids
    # a prompt's question is at its end (after any system prompt), so keep its tail
    cols[S.PROMPT_CHARS], cols[S.PROMPT] = previews(prompts, tail=True)
    for key, chars in ((S.RESPONSE, S.RESPONSE_CHARS), (S.REF_RESPONSE, S.REF_RESPONSE_CHARS),
                       (S.GROUND_TRUTH, None)):
        values = texts(objs, key, keys)
        lengths, cols[key] = previews(values, tail=False)
        if chars:
            cols[chars] = lengths
        if key == S.RESPONSE:
            cols[S.REPETITION] = repetitions(values)
            bands = signatures(values).view(np.int64)  # two uint32 bands an int64
            cols.update(zip(S.SIGNATURES, bands.T.copy()))
