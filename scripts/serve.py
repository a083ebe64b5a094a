"""`python scripts/serve.py run rl_logging_board.py ...`: streamlit's own CLI, with the
pages/ folder left to st.navigation, and one warning at start when the board is shared.

Streamlit runs an app as a "pages/ directory" app whenever a pages/ folder sits beside the
entry script, and then resolves a deep link such as /responses against the files in that
folder before the entry's st.navigation runs: the first visit shows a "Page not found" dialog
over the right page.  The board's routes all come from st.navigation, so the folder is not a
page source here.  rl_logging_board.py sets the same flag for `streamlit run` started by hand;
this launcher sets it before the first session, which the entry cannot.

The board listens on 127.0.0.1 (.streamlit/config.toml) unless `--server.address` (or
$STREAMLIT_SERVER_ADDRESS) says otherwise; another address without --root is said once on
stderr here, before the server starts (pages/frame/exposure.py).

Streamlit's hashed script bundles are given again from memory once served
(scripts/static_memo.py): a fresh browser fetches about 150 of them a page.
"""
import argparse
import os
import sys

# before Streamlit imports NumPy: its OpenBLAS threads spin beside the parser's workers
# (loaders/__init__.py says why)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _listen_address(streamlit_args: list[str]) -> str | None:
    """The address the server will bind, in Streamlit's order: flag, environment, config."""
    flags = [value for flag, value in zip(streamlit_args, streamlit_args[1:])
             if flag == "--server.address"]
    flags += [a.split("=", 1)[1] for a in streamlit_args if a.startswith("--server.address=")]
    if flags:  # start.sh passes the one form, by hand either can come (one is enough)
        return flags[-1]
    if "STREAMLIT_SERVER_ADDRESS" in os.environ:
        return os.environ["STREAMLIT_SERVER_ADDRESS"]
    from streamlit import config

    return config.get_option("server.address")


def _root(app_args: list[str]) -> str | None:
    """--root as pages.frame.board.parse_config reads it; the frame itself is not imported before
    the runtime exists (its caches would be made without one)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--root", default=os.environ.get("RL_BOARD_ROOT"))
    return parser.parse_known_args(app_args)[0].root


def _allowed(app_args: list[str]) -> list[str]:
    """--allow-remote values and $RL_BOARD_ALLOW_REMOTE's, as pages.frame.board.parse_config reads
    them."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--allow-remote", action="append",
                        default=os.environ.get("RL_BOARD_ALLOW_REMOTE", "").split())
    return parser.parse_known_args(app_args)[0].allow_remote


def warn_when_shared(argv: list[str]) -> None:
    from loaders.find.reach import unusable_prefixes
    from pages.frame.exposure import exposure_warning

    cut = argv.index("--") if "--" in argv else len(argv)
    warnings = [exposure_warning(_listen_address(argv[:cut]), _root(argv[cut + 1:]))]
    warnings += [f"--allow-remote {prefix!r} is not a URL prefix (scheme://bucket[/path]); "
                 "it allows nothing" for prefix in unusable_prefixes(_allowed(argv[cut + 1:]))]
    for warning in filter(None, warnings):
        print(f"warning: {warning}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    # imports stay under the guard: parser worker processes re-run this file as
    # __mp_main__, and they must not pay for Streamlit (or pandas)
    import static_memo  # scripts/, beside this file
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    warn_when_shared(sys.argv[1:])
    PagesManager.uses_pages_directory = False
    if not static_memo.install():
        print("note: this Streamlit has no static mount where 1.67 has it: its bundles are "
              "read from disk on every request", file=sys.stderr, flush=True)
    sys.exit(cli.main())
