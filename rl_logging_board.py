"""RL Logging Board: streamlit run rl_logging_board.py -- --dump-dir DIR [--root DIR]

Start it with `bash start.sh [DUMP_DIR]`.
"""
import sys

from streamlit.runtime.pages_manager import PagesManager

from pages.frame import main

# the routes come from st.navigation, not from the files in pages/ (see scripts/serve.py)
PagesManager.uses_pages_directory = False
main(sys.argv[1:])
