"""The reproductions page (docs/architecture.md, "Reproductions"): list, start, and the files of a
figure's latest run."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_GET, require_POST

from scheduling import reproduce
from webapp import reproductions, services
from webapp.labels import run_labels
from webapp.quotas import QuotaExceeded


@require_GET
def reproduction_list(request: HttpRequest) -> HttpResponse:
    return render(request, "webapp/reproductions.html", {"figures": reproductions.entries()})


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


@xframe_options_sameorigin  # the page shows figure.html in a sandboxed frame
@require_GET
def reproduction_file(request: HttpRequest, name: str, filename: str) -> HttpResponseBase:
    stored = reproductions.file_name(name, filename)
    if stored is None:
        raise Http404("no such file")
    response = FileResponse(default_storage.open(stored, "rb"), content_type=reproductions.FILES[filename])
    if filename.endswith((".csv", ".md")):
        response["Content-Disposition"] = f'attachment; filename="{name}-{filename}"'
    return response
