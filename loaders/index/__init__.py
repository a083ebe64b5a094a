"""Index: byte-range chunks scanned by a worker pool into the columnar summary, the on-disk
Parquet index and its partial refresh, and how a served run reads it back (by column, by
step, by row: numbers.py, previews.py).  Imports find, parse and formats; never serve."""
