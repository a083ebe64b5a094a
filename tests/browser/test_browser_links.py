"""A URL, www. name or e-mail address in a message the board shows (a refused dump dir, an
unknown alert-rule name) is shown as inline code in the real page: never a link.  GFM links
the text character references decode to, so escaping the punctuation alone is not enough."""
from urllib.parse import quote

import pytest
from browser import IDLE, browser_page, served
from dump_files import make_sample, write_dump

NAMES = ("http://evil.example/rule", "www.evil.example", "x@evil.example")
# links that lead to the names in the messages (the page's own links carry them in their
# query string, and lead nowhere else)
_LINKS = "els => els.filter(e => e.protocol === 'mailto:' || e.hostname.includes('evil'))" \
         ".map(e => e.href)"
_SHOWN = "els => els.map(e => e.innerText)"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("links") / "run"
    write_dump(root / "rollout_data_rank_0.jsonl",
               [make_sample(s, seed=i) for s in range(3) for i in range(2)])
    (root / "alerts.toml").write_text("".join(f'["{name}"]\nk = 1\n' for name in NAMES))
    with served(root) as url:
        yield url


def _page(url: str) -> tuple[list[str], str]:
    """The links to evil.example on the page at url, and the text of its messages."""
    with browser_page() as page:
        page.goto(url)
        page.wait_for_selector("[data-testid=stAlert]", timeout=60_000)
        page.wait_for_function(IDLE, timeout=60_000)
        links = page.eval_on_selector_all("a", _LINKS)
        shown = "\n".join(page.eval_on_selector_all("[data-testid=stAlert]", _SHOWN))
    return links, shown


@pytest.mark.parametrize("param", ["dir", "metrics"])
def test_a_refused_url_is_shown_as_code_not_a_link(server, tmp_path, param):
    bad = "http://evil.example/x"
    links, shown = _page(f"{server}/?{param}={quote(bad)}")
    assert "Refused" in shown and bad in shown
    assert links == []


def test_unknown_alert_rule_names_are_shown_as_code_not_links(server):
    links, shown = _page(f"{server}/alerts")
    assert all(f"unknown rule [{name}]" in shown for name in NAMES)
    assert links == []
