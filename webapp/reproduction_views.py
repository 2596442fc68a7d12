"""The reproductions page (docs/architecture.md, "Reproductions"): list, start, and the files of a
figure's latest run.

A finished figure shows in the page as the other charts do (its Plotly JSON drawn by the local
plotly.js, from ``summary.csv``), with its table rendered from ``table.md``. The ``figure.html`` the
reproduction writes is served with a Content-Security-Policy of its own that allows exactly its
inline scripts (by their SHA-256) and ``plotly.min.js`` beside it, and may be framed by this site
only; ``?download=1`` gives a copy with plotly.js inlined that opens from disk, offline."""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_GET, require_POST

from scheduling import reproduce
from webapp import markdown_tables, reproduction_state, reproductions, services
from webapp.charts.reproduction import reproduction_figure
from webapp.charts.safe import escape_figure
from webapp.labels import run_labels
from webapp.quotas import QuotaExceeded


def _shown(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` with, once its latest run is done, the table as HTML and the chart's figure."""
    run = entry["run"]
    if run["status"] != "done":
        return entry
    fig = reproduce.FIGURES[entry["name"]]
    summary = reproductions.file_name(entry["name"], "summary.csv")
    chart = None
    if summary is not None:
        chart = reproduction_figure(fig, reproduction_state.read(summary).decode("utf-8"), len(run.get("seeds", [])))
    return {
        **entry,
        "table_html": markdown_tables.render(run["table"]),
        "chart": escape_figure(chart) if chart is not None else None,
        "chart_id": f"reproduction-figure-{entry['name']}",
        "chart_script": f"reproduction-figure-{entry['name']}-data",
    }


@require_GET
def reproduction_list(request: HttpRequest) -> HttpResponse:
    figures = [_shown(e) for e in reproductions.entries()]
    charts = any(f.get("chart") for f in figures)
    return render(request, "webapp/reproductions.html", {"figures": figures, "charts": charts})


@require_POST
def reproduction_start(request: HttpRequest, name: str) -> HttpResponse:
    messages.info(request, reproductions.start(name, request.POST.get("seeds", ""), request.user))
    return redirect("reproductions")


@require_POST
def reproduction_experiment(request: HttpRequest, name: str) -> HttpResponse:
    """Launch a figure as a repeated experiment; open it on the figure's metric and reference."""
    fig = reproduce.FIGURES.get(name)
    if fig is None or not reproductions.launchable(fig):
        raise Http404("this figure cannot be launched as an experiment")
    try:
        reproductions.check_launch(fig, request.user)  # before the preset is generated
        sub = reproductions.as_experiment(fig)
        assert sub is not None  # launchable
        exp = services.create_experiment(sub, request.user)
    except QuotaExceeded as exc:
        messages.error(request, str(exc))
        return redirect("reproductions")
    first = [r for r in exp.runs.all() if r.repetition == 0]  # one per algorithm, in the figure's order
    labels = run_labels(exp, first, repetition=False)
    index = next((i for i, (label, _, _) in enumerate(fig.algorithms) if label == fig.reference), 0)
    query = urlencode({"tab": "repetitions", "metric": fig.metric, "reference": labels[first[index].pk]})
    return redirect(f"{exp.get_absolute_url()}?{query}")


_INLINE_SCRIPT = re.compile(rb"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.DOTALL | re.IGNORECASE)
_PLOTLY_TAG = re.compile(rb'<script[^>]*\bsrc="plotly\.min\.js"[^>]*></script>')


def figure_policy(html: bytes) -> str:
    """The Content-Security-Policy of a figure document: its own inline scripts (by hash) and
    scripts from this site (``plotly.min.js`` beside it); framed by this site's pages only."""
    hashes = " ".join(
        f"'sha256-{base64.b64encode(hashlib.sha256(body).digest()).decode()}'" for body in _INLINE_SCRIPT.findall(html)
    )
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src 'self' {hashes}".strip(),
            "style-src 'self' 'unsafe-inline'",  # plotly.js styles its SVG through style attributes
            "img-src 'self' data: blob:",
            "font-src 'self' data:",
            "connect-src 'self'",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'self'",
        ]
    )


def _figure_document(name: str, html: bytes, download: bool) -> HttpResponse:
    if download:  # one file that opens offline: plotly.js inlined in place of the tag loading it
        bundle = reproductions.file_name(name, "plotly.min.js")
        if bundle is not None:
            code = reproduction_state.read(bundle).replace(b"</script", b"<\\/script")
            html = _PLOTLY_TAG.sub(lambda _: b'<script charset="utf-8">' + code + b"</script>", html, count=1)
        response = HttpResponse(html, content_type=reproductions.FILES["figure.html"])
        response["Content-Disposition"] = f'attachment; filename="{name}-figure.html"'
        return response
    response = HttpResponse(html, content_type=reproductions.FILES["figure.html"])
    response["Content-Security-Policy"] = figure_policy(html)
    return response


@xframe_options_sameorigin  # figure.html may be framed by this site's pages (its CSP says so too)
@require_GET
def reproduction_file(request: HttpRequest, name: str, filename: str) -> HttpResponseBase:
    stored = reproductions.file_name(name, filename)
    if stored is None:
        raise Http404("no such file")
    if filename == "figure.html":
        return _figure_document(name, reproduction_state.read(stored), request.GET.get("download") == "1")
    response = FileResponse(default_storage.open(stored, "rb"), content_type=reproductions.FILES[filename])
    if filename.endswith((".csv", ".md")):
        response["Content-Disposition"] = f'attachment; filename="{name}-{filename}"'
    return response
