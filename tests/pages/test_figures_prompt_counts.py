"""The Prompts page's counts: one HTML row of figures, every name escaped, every count
grouped by thousands."""
from pages.figures.prompts import counts_html


def test_counts_are_one_escaped_row():
    block = counts_html({"never solved": 12_700, "<b>x</b>": 3, "seen once": 0})
    assert block.startswith('<div class="rlb-counts"') and block.count("<b>") == 0
    assert "&lt;b&gt;x&lt;/b&gt;" in block and ">12,700<" in block and ">0<" in block
    assert block.index("never solved") < block.index("12,700") < block.index("seen once")
