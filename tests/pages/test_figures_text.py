"""Text helpers: system-prompt and pad stripping, user regex, escaped highlighting."""
import html
import re

import pytest
import regex as regex_engine

from loaders import schema as S
from pages.figures import search as Q
from pages.figures import text as X
from pages.frame.view import DisplayOptions

MARK = "<endofsystem>"


def test_display_options_defaults():
    opts = DisplayOptions()
    assert (opts.pad_token, opts.system_marker, opts.kl_estimator) == ("<PAD>", MARK, S.K3)


@pytest.mark.parametrize(("prompt", "expected"), [
    ("You are helpful.<endofsystem>What is 2+2?", "What is 2+2?"),
    ("sys<endofsystem>\n\nquestion\n", "question\n"),  # leading newlines only
    ("no marker here", "no marker here"),
    ("a<endofsystem>b<endofsystem>c", "c"),  # after the last marker
    ("<endofsystem>", ""),
    ("", ""),
])
def test_strip_system(prompt, expected):
    assert X.strip_system(prompt, MARK) == expected


def test_strip_system_without_marker_setting_keeps_text():
    assert X.strip_system("sys<endofsystem>q", "") == "sys<endofsystem>q"
    assert X.strip_system("sys###q", "###") == "q"


def test_strip_pad():
    assert X.strip_pad("answer<PAD><PAD>", "<PAD>") == "answer"
    assert X.strip_pad("<PAD>a<PAD>b", "<PAD>") == "ab"
    assert X.strip_pad("answer<PAD>", "") == "answer<PAD>"
    assert X.strip_pad("no pad", "<PAD>") == "no pad"


def test_compile_search_valid_is_case_insensitive():
    regex, error = Q.compile_search("hello\\s+World")
    assert error is None and isinstance(regex, regex_engine.Pattern)
    assert regex.search("say HELLO   world!")
    assert regex.flags & regex_engine.IGNORECASE
    assert not regex.search("helloworld")


@pytest.mark.parametrize("pattern", ["", None])
def test_compile_search_empty_is_no_search(pattern):
    assert Q.compile_search(pattern) == (None, None)


@pytest.mark.parametrize("pattern", ["(unclosed", "[a-", "*x"])
def test_compile_search_invalid_reports_the_error(pattern):
    regex, error = Q.compile_search(pattern)
    assert regex is None
    assert error.startswith("invalid regex: ")
    with pytest.raises(regex_engine.error) as info:
        regex_engine.compile(pattern)
    assert str(info.value) in error


def test_highlight_escapes_html_around_a_match():
    text = "before <img src=x onerror=alert(1)> after"
    out = Q.highlight(text, regex_engine.compile("onerror", regex_engine.I))
    assert "<img" not in out
    assert "&lt;img src=x " in out
    assert "<mark>onerror</mark>" in out
    assert out == "before &lt;img src=x <mark>onerror</mark>=alert(1)&gt; after"


def test_highlight_escapes_the_match_itself():
    text = "x <script>alert('hi')</script> y"
    out = Q.highlight(text, regex_engine.compile(regex_engine.escape("<script>")))
    assert "<script" not in out and "</script" not in out
    assert f"<mark>{html.escape('<script>')}</mark>" in out
    # the only raw tags left are the mark tags
    assert re.sub(r"</?mark>", "", out) == html.escape(text)


def test_highlight_without_regex_is_escaped_prefix():
    text = "<b>" + "z" * 300
    out = Q.highlight(text, None, context=10)
    assert out == html.escape(text[:20])
    assert "<b>" not in out


def test_highlight_context_and_ellipses():
    text = "a" * 100 + "NEEDLE" + "b" * 100
    out = Q.highlight(text, regex_engine.compile("needle", regex_engine.I), context=5)
    assert out == "…" + "aaaaa" + "<mark>NEEDLE</mark>" + "bbbbb" + "…"
    # near the start and end: no ellipsis on the side that reaches the edge
    out = Q.highlight("abNEEDLEcd", regex_engine.compile("NEEDLE"), context=5)
    assert out == "ab<mark>NEEDLE</mark>cd"
    out = Q.highlight("xxxxxxxxxNEEDLE", regex_engine.compile("NEEDLE"), context=3)
    assert out == "…xxx<mark>NEEDLE</mark>"


def test_highlight_limits_matches():
    text = " ".join(f"w{i}" for i in range(10))
    out = Q.highlight(text, regex_engine.compile(r"w\d"), context=0, limit=3)
    assert out.count("<mark>") == 3
    assert re.findall(r"<mark>(.*?)</mark>", out) == ["w0", "w1", "w2"]
    assert out.count(" ⋯ ") == 2
    assert Q.highlight(text, regex_engine.compile("absent")) == ""


@pytest.mark.parametrize(("token", "expected"), [
    (" the", "·the"), ("\n", "↵"), ("\t\tx", "→→x"), ("a b\n", "a·b↵"), ("\r\n", "␍↵"),
    ("plain", "plain"), ("", ""),
])
def test_visible_token(token, expected):
    assert X.visible_token(token) == expected


@pytest.mark.parametrize("name", ["![x](http://198.51.100.7/x.png)", "[a](http://h/)",
                                  "<img src=http://h/y.png>", "$\\href{http://h}{x}$",
                                  "**b** _i_ `c` # h | t |", "a\\b C:\\dir\\file_1.jsonl"])
def test_literal_leaves_no_markdown_syntax_and_decodes_back(name):
    import html as html_module

    out = X.literal(name)
    pieces = _CODE_SPAN.split(out)  # text, fence, code, text, ...: code is shown as written
    text = pieces[::3]
    bare = re.sub(r"&#[0-9]+;", "", "".join(text))  # a reference is shown as the character
    assert not set(bare) & set("![]()<>$`*_#|\\&;")
    shown = [html_module.unescape(p) if i % 3 == 0 else p if i % 3 == 2 else ""
             for i, p in enumerate(pieces)]
    assert "".join(shown) == name


_CODE_SPAN = re.compile(r"(`+) (.*?) \1(?!`)")


@pytest.mark.parametrize("word", ["http://evil.example/x", "https://e.example/a_b(c)",
                                  "www.evil.example", "x@evil.example", "mailto:x@e.example",
                                  "ftp://e.example/`x``"])
def test_a_word_gfm_would_link_is_inline_code(word):
    out = X.literal(f"Refused: {word} is outside")
    assert out.startswith("Refused&#58; ") and out.endswith(" is outside")
    fence, code = _CODE_SPAN.search(out).groups()
    assert code == word and "`" * len(fence) not in word


def test_a_metric_name_with_an_at_sign_is_plain_text():
    assert X.literal("pass@1 rose") == "pass&#64;1 rose"


def test_literal_keeps_line_breaks():
    assert X.literal("a\nb") == "a  \nb"


def test_controls_are_written_out_in_names_tokens_and_messages():
    assert X.visible_controls("a\u2066b\u2069\x00c\x9b\td") == (
        "a⟨U+2066⟩b⟨U+2069⟩⟨U+0000⟩c⟨U+009B⟩\td")
    assert X.visible_token("\u202e\x1b[31m x") == "⟨U+202E⟩⟨U+001B⟩[31m·x"
    assert html.unescape(X.literal("rank_\u202e7")) == "rank_⟨U+202E⟩7"
