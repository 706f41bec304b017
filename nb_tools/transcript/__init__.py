"""The record of a run: its types, JSON Schema, the recorder of agent events, and the HTML
renderer (safe HTML, hidden characters, Markdown). Nothing here imports Jupyter."""
