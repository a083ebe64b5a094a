"""Optional token-id decoding: never downloads, says plainly what is missing."""
import sys
import types

import pytest

from loaders.serve import tokenizer


def test_non_id_tokens_pass_through_without_loading_anything(tmp_path):
    assert tokenizer.decode_ids(["a", " b"], str(tmp_path)) == ["a", " b"]


def test_missing_transformers_is_a_clear_message(tmp_path, monkeypatch):
    tokenizer._load.cache_clear()
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(tokenizer.TokenizerUnavailable, match="pip install transformers"):
        tokenizer.decode_ids(["1", "2"], str(tmp_path))


def test_local_tokenizer_decodes_each_id(tmp_path, monkeypatch):
    tokenizer._load.cache_clear()
    calls = []

    class Auto:
        @staticmethod
        def from_pretrained(directory, local_files_only):
            calls.append((directory, local_files_only))
            return types.SimpleNamespace(decode=lambda ids: f"<{ids[0]}>")

    monkeypatch.setitem(sys.modules, "transformers", types.SimpleNamespace(AutoTokenizer=Auto))
    assert tokenizer.decode_ids(["7", "8"], str(tmp_path)) == ["<7>", "<8>"]
    assert calls == [(str(tmp_path), True)]
    tokenizer._load.cache_clear()
