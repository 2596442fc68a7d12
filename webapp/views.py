"""Thin views: fetch through one helper, call a service, render or redirect."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from webapp import services
from webapp.forms import ExperimentForm


@require_GET
def experiment_list(request: HttpRequest) -> HttpResponse:
    return render(request, "webapp/experiment_list.html", {"experiments": services.list_experiments()})


@require_http_methods(["GET", "POST"])
def experiment_new(request: HttpRequest) -> HttpResponse:
    form = ExperimentForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        return redirect(services.create_experiment(form.submission()))
    return render(request, "webapp/experiment_form.html", {"form": form})


@require_GET
def experiment_detail(request: HttpRequest, pk: int) -> HttpResponse:
    page = services.experiment_page(services.get_experiment(pk))
    return render(request, "webapp/experiment_detail.html", page)


@require_GET
def experiment_status(request: HttpRequest, pk: int) -> JsonResponse:
    return JsonResponse(services.status(services.get_experiment(pk)))


@require_GET
def run_result(request: HttpRequest, pk: int) -> HttpResponse:
    run, body = services.get_result_file(pk)
    response = HttpResponse(body, content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="experiment-{run.experiment_id}-{run.algorithm}.json"'
    return response
