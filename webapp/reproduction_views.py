"""The reproductions page (docs/architecture.md, "Reproductions"): list, start, and the files of a
figure's latest run."""

from __future__ import annotations

from django.contrib import messages
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_GET, require_POST

from webapp import reproductions


@require_GET
def reproduction_list(request: HttpRequest) -> HttpResponse:
    return render(request, "webapp/reproductions.html", {"figures": reproductions.entries()})


@require_POST
def reproduction_start(request: HttpRequest, name: str) -> HttpResponse:
    messages.info(request, reproductions.start(name, request.POST.get("seeds", "")))
    return redirect("reproductions")


@xframe_options_sameorigin  # the page shows figure.html in a sandboxed frame
@require_GET
def reproduction_file(request: HttpRequest, name: str, filename: str) -> HttpResponse:
    path = reproductions.file_path(name, filename)
    if path is None:
        raise Http404("no such file")
    response = FileResponse(path.open("rb"), content_type=reproductions.FILES[filename])
    if filename.endswith((".csv", ".md")):
        response["Content-Disposition"] = f'attachment; filename="{name}-{filename}"'
    return response
