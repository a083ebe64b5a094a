"""The frame every page shares: the CLI config and the sidebar (dir, run, split, step,
options) up to the View a page draws (board.py), loading runs through the shared catalog,
the Follow toggle, URL and session state, and the widgets pages reuse.

It imports figures/ and loaders/, never a route nor the route table (pages.routes).
"""
