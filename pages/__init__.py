"""The board's UI, three things: the frame every page shares (frame/), the routes, one
module or small package per page with its helpers, and the table of them (routes/), and the
pure builders, data in and figure, table or HTML out (figures/).

Pages ask loaders/ for frames and arrays; they never open a file nor parse one.  Imports go
one way: routes -> frame -> figures -> loaders, with no cycle (tests/test_architecture.py);
the session and URL keys more than one module reads are named once, in frame/keys.py.
"""
