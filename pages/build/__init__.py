"""Pure builders: data frames and arrays in, plotly figures and tables out; no streamlit."""
