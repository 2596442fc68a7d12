"""Plotly draws the text it is given as a small HTML subset (``<a href>``, ``<b>``, ``<br>``...):
a job id, server id or run label from an uploaded file would render as a live link or markup. Every
string of a figure is escaped (``&``, ``<``, ``>`` as entities, which Plotly shows as the characters
themselves) before it leaves the server; only the hover/text templates, which this app writes, keep
their markup."""

from __future__ import annotations

from typing import Any

TEMPLATES = frozenset({"hovertemplate", "texttemplate"})
"""Keys whose values are the app's own templates (markup intended, data substituted by Plotly)."""


def plotly_text(value: str) -> str:
    """``value`` with the characters Plotly reads as markup written as entities."""
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape_figure(value: Any, key: str | None = None) -> Any:
    """A copy of a figure (or part of one) with every string escaped by ``plotly_text``, except
    the values of TEMPLATES keys. Figures are a few levels deep: recursion is bounded."""
    if isinstance(value, str):
        return value if key in TEMPLATES else plotly_text(value)
    if isinstance(value, dict):
        return {k: escape_figure(v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if not any(isinstance(v, (str, dict, list, tuple)) for v in value):
            return value  # numbers: the bulk of a large figure, nothing to escape
        return [escape_figure(v, key) for v in value]
    return value
