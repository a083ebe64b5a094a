"""The yardstick of bench_first_paint.py: Streamlit pages with nothing of the board in them.

    streamlit run benchmarks/first_paint_floor.py   (bench_first_paint.py starts it itself)

`?plot=N` adds N small Plotly charts, `?vega=N` N Vega-Lite ones, `?table=1` a 100-row
dataframe: what the same Streamlit
costs a fresh browser before any of the board's own work, so the board's figures can be read
against it (as load times are read against parse_limit.py).
"""
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

st.set_page_config(page_title="floor", layout="wide")
st.header("Floor")
for i in range(int(st.query_params.get("plot", 0))):
    st.plotly_chart(go.Figure(go.Scatter(x=list(range(100)), y=list(range(100)))), key=f"c{i}")
for i in range(int(st.query_params.get("vega", 0))):  # Streamlit's other chart library
    st.vega_lite_chart(pd.DataFrame({"x": range(100), "y": range(100)}),
                       {"mark": "line", "encoding": {"x": {"field": "x", "type": "quantitative"},
                                                     "y": {"field": "y", "type": "quantitative"}}},
                       key=f"v{i}")
if st.query_params.get("table"):
    st.dataframe(pd.DataFrame({"a": range(100), "b": [f"row {i}" for i in range(100)]}))
