"""Running the real board (entry script, sidebar, frame) under Streamlit's AppTest."""
from __future__ import annotations

import html
from pathlib import Path

from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

_pages_manager_init = PagesManager.__init__


def _init_as_served(self: PagesManager, *args: object, **kwargs: object) -> None:
    # AppTest sets uses_pages_directory back to None before every run, so each run would go
    # through Streamlit's pages/-folder mode; the real server never does (scripts/serve.py)
    PagesManager.uses_pages_directory = False
    _pages_manager_init(self, *args, **kwargs)


PagesManager.__init__ = _init_as_served
ENTRY = str(Path(__file__).resolve().parents[1] / "rl_logging_board.py")


def board(dump_dir: Path | str, **params: str) -> AppTest:
    """The board opened on dump_dir with the given query params, after its first run."""
    at = AppTest.from_file(ENTRY, default_timeout=60)
    at.query_params["dir"] = str(dump_dir)
    for name, value in params.items():
        at.query_params[name] = value
    return at.run()


def texts(at: AppTest) -> str:
    """Everything textual the page shows, for coarse assertions."""
    parts = [e.value for kind in ("markdown", "caption", "header", "subheader", "code", "error",
                                  "warning", "info", "success")
             for e in getattr(at, kind)]
    parts += [e.value for e in at.sidebar.caption] + [e.value for e in at.sidebar.code]
    parts += text_blocks(at)
    return html.unescape("\n".join(str(p) for p in parts))


def text_blocks(at: AppTest) -> list[str]:
    """The model texts shown by pages.frame.widgets.text_block, as the user reads them."""
    bodies = [str(h.proto.body) for h in at.get("html")]
    return [html.unescape(b.split(">", 1)[1].rsplit("</pre>", 1)[0])
            for b in bodies if b.startswith('<pre class="rlb-text"')]


def errors(at: AppTest) -> list[str]:
    """Error messages as the user reads them (character references decoded)."""
    return [html.unescape(e.value) for e in at.error] + [str(e.value) for e in at.exception]


def current_page(at: AppTest) -> str:
    """The url path of the page the last run showed ("" before st.navigation ran)."""
    info = at._registered_pages.get(at._finished_page_script_hash, {})
    return info.get("url_pathname", "") or "rewards"  # the default page's public path is ""


def goto(at: AppTest, url_path: str) -> AppTest:
    """Open another page in the same session, through the `?page=` redirect."""
    at.query_params["page"] = url_path
    return at.run()
