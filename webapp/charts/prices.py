"""Prices (schema mlsched.prices/3, /2 or /1, scheduling/prices.py): per resource, the mean and max price
after each decision, decisions not admitted marked (rejected, or in ``zhou``'s log carried over)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from webapp.charts.style import LEGEND_RIGHT, PALETTE, _small


def declined(prices: Mapping[str, Any]) -> str:
    """What ``admitted: false`` means in this log (the optional ``declined``; older logs: rejected)."""
    return str(prices.get("declined") or "rejected")


def price_lines(prices: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per resource, mean and max price of the current and upcoming slots after each decision."""
    figures = []
    n = len(prices["decisions"])
    admitted = [d["admitted"] for d in prices["decisions"]]
    label = prices.get("label") or "price"
    price = "price" if label == "price" else f"price ({label})"  # the paper's symbol: delta, p/q
    for resource in prices["resources"]:
        s = prices["summary"][resource]
        x = list(range(n))
        data = [
            {"type": "scatter", "mode": "lines", "name": "mean", "x": x, "y": s["mean"], "line": {"color": PALETTE[0]}},
            {"type": "scatter", "mode": "lines", "name": "max", "x": x, "y": s["max"], "line": {"color": PALETTE[1]}},
            {
                "type": "scatter",
                "mode": "markers",
                "name": declined(prices),
                "x": [i for i in x if not admitted[i]],
                "y": [s["max"][i] for i in x if not admitted[i]],
                "marker": {"color": PALETTE[3], "symbol": "x", "size": 6},
            },
        ]
        figures.append(
            _small(
                f"{resource}: {price} of the current and upcoming slots, mean and max over servers",
                data,
                xaxis={"title": {"text": "decision"}},
                yaxis={"title": {"text": price}},
                showlegend=True,
                legend=LEGEND_RIGHT,
            )
        )
    return figures
