"""Parse: one record (a JSON line, a .pt file, a Parquet row group) into a dict, token
arrays and text, each reader held to loaders/limits.py before it allocates.  Imports the
schema, limits and find's remote paths; never index, serve or the UI."""
