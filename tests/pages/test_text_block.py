"""pages.frame.widgets.text_block: model text shown literally (escaped, never HTML or Markdown)."""
from apptest import text_blocks
from streamlit.testing.v1 import AppTest

HOSTILE = '<img src=x onerror="alert(1)"> **bold** [link](http://example.com) & </pre><b>x</b>'


def _shown(text: str) -> AppTest:
    def app(text: str) -> None:
        from pages.frame.widgets import text_block

        text_block(text, 120)

    return AppTest.from_function(app, args=(text,)).run()


def test_hostile_text_is_one_escaped_block_read_back_verbatim():
    at = _shown(HOSTILE)
    body = str(at.get("html")[0].proto.body)
    assert "<img" not in body and "<b>" not in body and body.count("</pre>") == 1
    assert "max-height:120px" in body
    assert text_blocks(at) == [HOSTILE]


def test_bidi_overrides_and_terminal_controls_are_shown_not_obeyed():
    """A right-to-left override would show "evil" as "live"; an escape code shows as nothing:
    both are written out, and Arabic's own marks (RLM) stay as they are."""
    at = _shown("say \u202eevil\u202c now \x1b[31m red\n\u0645\u200f")
    assert text_blocks(at) == ["say ⟨U+202E⟩evil⟨U+202C⟩ now ⟨U+001B⟩[31m red\n\u0645\u200f"]
