"""The board's UI: the frame (sidebar, loading, navigation) and one module per page."""
