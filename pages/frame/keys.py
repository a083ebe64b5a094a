"""Every session-state key and every URL parameter more than one module reads, named once.

A widget bound to the URL (`bind="query-params"`) has its parameter's name as its key, so
the URL names below are widget keys too.  Keys a single module keeps to itself (a chart's
selection, a table's sort) stay beside their widget.  Constants only: any part of pages/
may import it.
"""
# URL parameters (and the keys of the widgets bound to them)
DIR = "dir"  # the dump dir
RUN = "run"  # a sub-run under it
SPLIT = "split"  # train or validation samples
STEP = "step"
SAMPLE = "sample"  # a sample's key, file:line[#item]
WINDOW = "window"  # the first token row of the Sample page's token window
GROUP = "gid"  # a GRPO group opened on the Groups page (not "group": Metrics' own)
OLD_GROUP = "group"  # the Groups page's parameter in earlier links
METRICS = "metrics"  # the training-metrics path
FOLLOW = "follow"  # the live follow's toggle
# the frame's own (its widgets are drawn, and bound, on every page)
FRAME_PARAMS = frozenset((DIR, RUN, METRICS, SPLIT, STEP, FOLLOW))

# session state the frame keeps for every page
PAGES = "_board_pages"  # the st.Page objects by url path, set by the frame
PENDING = "_board_pending"  # widget values a jump asked for, set on the next run
VIEW = "_board_view"  # this run's View, read by the page callable
RUN_SECONDS = "_board_run_seconds"  # the server time of the last run (benchmarks read it)
LOADED = "_board_loaded"  # (dump dir, run dir) of this rerun's run
REPARSED = "_board_reparsed"  # file versions this session re-parsed by itself
NEWEST = "_board_newest_step"  # the newest step when the page was last drawn
FOLLOW_DEFAULT = "_board_follow_default"  # (run dir, default) of this session
SAMPLE_ORDER = "_board_sample_order"  # {run, step, keys, how} of the last table shown
SAMPLE_JUMPED = "_sample_jumped"  # a page jumped to this sample with its own window
