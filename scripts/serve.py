"""`python scripts/serve.py run rl_logging_board.py ...`: streamlit's own CLI, with the
pages/ folder left to st.navigation.

Streamlit runs an app as a "pages/ directory" app whenever a pages/ folder sits beside the
entry script, and then resolves a deep link such as /responses against the files in that
folder before the entry's st.navigation runs: the first visit shows a "Page not found" dialog
over the right page.  The board's routes all come from st.navigation, so the folder is not a
page source here.  rl_logging_board.py sets the same flag for `streamlit run` started by hand;
this launcher sets it before the first session, which the entry cannot.
"""
import sys

if __name__ == "__main__":
    # imports stay under the guard: parser worker processes re-run this file as
    # __mp_main__, and they must not pay for Streamlit (or pandas)
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    PagesManager.uses_pages_directory = False
    sys.exit(cli.main())
