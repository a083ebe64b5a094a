"""RL Logging Board: streamlit run rl_logging_board.py -- --dump-dir DIR [--root DIR]

Start it with `bash start.sh [DUMP_DIR]`.
"""
import sys

from pages.frame import main

main(sys.argv[1:])
