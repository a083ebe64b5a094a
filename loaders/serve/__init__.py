"""Serve: the data provider the pages talk to: Run (a loaded run), Catalog (a dump dir's
sub-runs and loaded runs), samples read on demand, a live run's growth, runs compared, and
the CLI's report.  Imports every other part of loaders; nothing in loaders imports it but
the package's re-exports."""
