"""The JSON API for scripts (docs/api.md): token authentication only (``Authorization: Token
<key>``; keys are created on the account page). No session cookies are accepted here, so the
views are exempt from CSRF checks: a browser cannot be tricked into sending the header.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.urls import reverse
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt

from scheduling import plugins, registry
from webapp import datasets, repetition_stats, services
from webapp.forms import ExperimentForm
from webapp.quotas import QuotaExceeded

View = Callable[..., HttpResponseBase]  # result.json is streamed


def error(status: int, message: str, **extra: Any) -> JsonResponse:
    return JsonResponse({"error": message, **extra}, status=status)


def is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith("/api/")


# Django's error views (``handler400`` ... ``handler500`` in webapp/urls.py): on an API path the
# answer is JSON like every other API error, whatever raised (a view, a middleware, a request
# Django cannot parse); pages keep Django's default error pages. With DEBUG on, an
# uncaught exception still shows Django's technical page.


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    return error(400, "bad request") if is_api(request) else defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    return error(403, "forbidden") if is_api(request) else defaults.permission_denied(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    return error(404, "not found") if is_api(request) else defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if is_api(request):  # the traceback is in the server's log (django.request)
        return error(500, "internal error: the server could not answer this request; it was logged")
    return defaults.server_error(request)


def api_view(methods: tuple[str, ...]) -> Callable[[View], View]:
    def decorate(view: View) -> View:
        @login_not_required
        @csrf_exempt
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if request.method not in methods:
                return error(405, f"method {request.method} not allowed; use {', '.join(methods)}")
            user = services.user_for_token(request.headers.get("Authorization", ""))
            if user is None:
                response = error(401, "authentication required: send the header 'Authorization: Token <key>'")
                response["WWW-Authenticate"] = "Token"
                return response
            request.user = user
            try:
                return view(request, *args, **kwargs)
            except Http404:
                return error(404, "not found")

        return wrapper

    return decorate


def _links(request: HttpRequest, exp_id: int) -> dict[str, str]:
    return {
        "self": request.build_absolute_uri(reverse("api-experiment", args=[exp_id])),
        "page": request.build_absolute_uri(reverse("experiment", args=[exp_id])),
        "export": request.build_absolute_uri(reverse("experiment-export", args=[exp_id])),
    }


@api_view(("GET", "POST"))
def experiments(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        items = [
            {"id": e.pk, "name": e.name, "kind": e.kind, "created": e.created.isoformat(),
             "statuses": [r.status for r in e.runs.all()]}
            for e in services.list_experiments(request.user)
        ]  # fmt: skip
        return JsonResponse({"experiments": items})
    form = ExperimentForm(request.POST, request.FILES, user=request.user, absent_flags_default=True)
    if not form.is_valid():
        errors = {k: [str(m) for m in v] for k, v in form.errors.items()}
        return error(400, "invalid experiment: nothing was stored", fields=errors)
    try:
        exp = services.create_experiment(form.submission(), request.user)
    except QuotaExceeded as exc:
        return error(429, str(exc))
    datasets.remember_uploads(request.user, form)
    exp.refresh_from_db()
    body = {**services.describe(exp), "links": _links(request, exp.pk)}
    return JsonResponse(body, status=201)


@api_view(("GET",))
def experiment(request: HttpRequest, pk: int) -> HttpResponse:
    exp = services.get_experiment(pk, request.user)
    base = request.build_absolute_uri(reverse("api-experiment", args=[pk]))
    body = services.describe(exp)
    for run in body["runs"]:
        if run["status"] == "done":
            run["links"] = {w: f"{base}runs/{run['id']}/{w}" for w in ("result.json", "jobs.csv", "placements.csv")}
    return JsonResponse({**body, "links": _links(request, pk)})


@api_view(("POST",))
def experiment_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    exp = services.get_experiment(pk, request.user, write=True)
    return JsonResponse({"cancelled": services.cancel(exp)})


@api_view(("GET",))
def run_file(request: HttpRequest, pk: int, run: int, what: str) -> HttpResponseBase:
    exp = services.get_experiment(pk, request.user)
    r = services.get_run(exp, run, done=True)
    if what == "result":
        return StreamingHttpResponse(services.result_chunks(r), content_type="application/json")
    doc = services.load_result(r)
    body = services.jobs_csv(doc) if what == "jobs" else services.placements_csv(doc)
    return HttpResponse(body, content_type="text/csv; charset=utf-8")


@api_view(("GET",))
def repetitions(request: HttpRequest, pk: int) -> HttpResponse:
    """Statistics over a repeated experiment's done runs: per metric the summaries, the paired
    differences against ``?reference=`` (default: the first variant) and the best, if any."""
    exp = services.get_experiment(pk, request.user)
    if not exp.repetition:
        return error(404, "not a repeated experiment")
    return JsonResponse(repetition_stats.summary_json(exp, list(exp.runs.all()), request.GET.get("reference")))


@api_view(("GET",))
def repetitions_csv(request: HttpRequest, pk: int) -> HttpResponse:
    exp = services.get_experiment(pk, request.user)
    if not exp.repetition:
        return error(404, "not a repeated experiment")
    body = repetition_stats.per_seed_csv(exp, list(exp.runs.all()))
    return HttpResponse(body, content_type="text/csv; charset=utf-8")


@api_view(("GET",))
def algorithms(request: HttpRequest) -> HttpResponse:
    specs = registry.all_specs()
    return JsonResponse(
        {
            "algorithms": [
                {
                    "name": name,
                    "summary": spec.summary,
                    "params": [p.describe() for p in spec.params],
                    "plugin": registry.PLUGIN_OF.get(name),
                }
                for name, spec in specs.items()
            ],
            "plugin_problems": list(plugins.problems()),
        }
    )
