"""RL Logging Board: streamlit run rl_logging_board.py -- --dump-dir DIR [--root DIR]

Start it with `bash start.sh [DUMP_DIR]`.
"""
import sys

from streamlit.runtime.pages_manager import PagesManager

from pages.routes import main

# the routes come from st.navigation, not from the files in pages/ (see scripts/serve.py)
PagesManager.uses_pages_directory = False
# Streamlit runs this file as the __main__ module, so a parser pool first started during a
# page run starts its forkserver with this file as the main module to import (as __mp_main__);
# the board must not run there (it would load the dump again in that process and fail the pool)
if __name__ != "__mp_main__":
    main(sys.argv[1:])
