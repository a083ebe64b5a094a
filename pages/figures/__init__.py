"""Pure builders: data (frames, arrays) in, a Plotly figure, a table or escaped HTML out.
No Streamlit here: each is unit-tested without the UI.  Imports the schema and loaders'
pure helpers and types (never a reader: no file is opened here)."""
