"""pages.figures.diff: a bounded word diff of two answers, escaped."""
import numpy as np

from pages.figures import diff as D


def _side(segments, keep: str) -> str:
    return "".join(s.text for s in segments if s.op in ("same", keep))


def test_words_keep_the_text_exactly():
    text = "  Let me think.\n\nx = 2\t y\n"
    assert "".join(D.words(text)) == text


def test_unfolded_diff_rebuilds_both_answers():
    rng = np.random.default_rng(1)
    vocab = ["Wait", "so", "x", "=", "2", "\n", "the", "answer", "is", "4."]
    for _ in range(30):
        old = " ".join(rng.choice(vocab, rng.integers(0, 80))).replace(" \n ", "\n")
        new = " ".join(rng.choice(vocab, rng.integers(0, 80))).replace(" \n ", "\n")
        segments = D.word_diff(old, new, context=10**6)
        assert _side(segments, "removed") == old and _side(segments, "added") == new


def test_a_changed_word_is_found_in_a_long_answer_and_the_rest_folded():
    lines = [f"step {i}: keep going.\n" for i in range(400)]
    old = "".join(lines)
    new = old.replace("step 200: keep going.", "step 200: Wait, no.")
    segments = D.word_diff(old, new)
    removed = [s.text for s in segments if s.op == "removed"]
    added = [s.text for s in segments if s.op == "added"]
    assert removed == ["keep going.\n"] and added == ["Wait, no.\n"]
    assert sum(s.op == "folded" for s in segments) == 2
    assert D.changed_share(segments) == (2, 2)


def test_a_huge_changed_block_is_compared_up_to_the_cap():
    old = "a " * 5000
    new = "b " * 5000
    segments = D.word_diff(old, new, max_words=100)
    assert segments[-1].op == "folded" and "4900 more words" in segments[-1].text
    assert D.changed_share(segments) == (100, 100)


def test_html_is_escaped_and_capped():
    segments = D.word_diff("<b>bold</b> ok", "<img src=x onerror=alert(1)> ok")
    body = D.diff_html(segments)
    assert "<img" not in body and "&lt;img" in body and "&lt;b&gt;" in body
    many = [D.Segment("added", f"w{i} ") for i in range(10)]
    capped = D.diff_html(many, limit=3)
    assert capped.count("background:#dfd") == 3 and "7 more changes not shown" in capped
    assert "both answers are empty" in D.diff_html([])
