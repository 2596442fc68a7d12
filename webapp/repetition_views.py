"""Exports of the repetitions tab, behind the owner prefix and a share link like the other exports:
the per-repetition table (CSV), the tab's figures as one interactive HTML file (plotly.js inlined,
opens offline), and one figure as SVG or PNG (Plotly's static export through kaleido and the
machine's Chromium). Parquet is not offered: pyarrow is not a dependency, and the CSV holds the same
table."""

from __future__ import annotations

import html
import logging
from typing import Any

import plotly.io as pio
from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from webapp import repetition_stats
from webapp.views import _download, _exp_for

logger = logging.getLogger(__name__)


def _figures(request: HttpRequest, pk: int | None, token: str | None) -> tuple[Any, list[dict[str, Any]]]:
    exp = _exp_for(request, pk, token)
    if not exp.repetition:
        raise Http404("not a repeated experiment")
    ctx = repetition_stats.page(exp, list(exp.runs.all()), request.GET.dict())
    return exp, ctx.get("rep_figures", [])


@login_not_required
@require_GET
def per_seed_csv(request: HttpRequest, pk: int | None = None, token: str | None = None) -> HttpResponse:
    exp = _exp_for(request, pk, token)
    if not exp.repetition:
        raise Http404("not a repeated experiment")
    body = repetition_stats.per_seed_csv(exp, list(exp.runs.all()))
    return _download(body, "text/csv; charset=utf-8", f"experiment-{exp.pk}-repetitions.csv")


@login_not_required
@require_GET
def figures_html(request: HttpRequest, pk: int | None = None, token: str | None = None) -> HttpResponse:
    """Every figure of the tab (for the metric and reference in the query), plotly.js inlined once."""
    exp, figures = _figures(request, pk, token)
    if not figures:
        raise Http404("no figure yet")
    parts = [
        pio.to_html(f, include_plotlyjs=i == 0, full_html=False, config={"displaylogo": False})
        for i, f in enumerate(figures)
    ]
    title = html.escape(f"{exp.name}: repetitions")
    body = (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title></head>'
        f"<body><h1>{title}</h1>{''.join(parts)}</body></html>"
    )
    return _download(body, "text/html; charset=utf-8", f"experiment-{exp.pk}-repetitions.html")


@login_not_required
@require_GET
def figure_image(request: HttpRequest, fmt: str, pk: int | None = None, token: str | None = None) -> HttpResponse:
    """One figure (``?figure=i``, in the tab's order) as SVG or PNG. Takes seconds: kaleido starts
    Chromium for each export. Without a usable Chromium: 503 naming the HTML export instead."""
    exp, figures = _figures(request, pk, token)
    raw = request.GET.get("figure", "0")
    if not raw.isdigit() or int(raw) >= len(figures):
        raise Http404("no such figure")
    try:
        image = pio.to_image(figures[int(raw)], format=fmt, width=900, scale=2 if fmt == "png" else 1)
    except Exception as exc:  # kaleido raises its own errors when Chromium is missing or fails
        logger.warning("static figure export failed: %s: %s", type(exc).__name__, exc)
        return HttpResponse(
            f"The {fmt.upper()} export needs Chromium (kaleido could not use it: {type(exc).__name__}). "
            "Download the figures as HTML instead.",
            status=503,
            content_type="text/plain; charset=utf-8",
        )
    content_type = "image/svg+xml" if fmt == "svg" else "image/png"
    return _download(image, content_type, f"experiment-{exp.pk}-repetitions-{raw}.{fmt}")
