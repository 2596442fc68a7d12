"""Thin views: fetch through one helper (which checks the user or the share token), call a
service, render or redirect.

An experiment's pages exist twice: under ``/experiments/<pk>/`` for its owner (and, read-only, for
every user when it is an example) and under ``/s/<token>/`` for a share link. Both render the same
templates; ``base`` is the URL prefix the templates build links from, ``shared`` hides controls.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeVar

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User
from django.core.exceptions import BadRequest
from django.db import connection
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, QueryDict, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from scheduling.errors import InputError
from webapp import adapted, datasets, preflight, regime_notes, services, tracechecks
from webapp.forms import ExperimentForm
from webapp.models import ApiToken, Experiment, Run, TraceCheck, WorkerProblem
from webapp.quotas import QuotaExceeded

# ---------------------------------------------------------------------------------------------
# Experiments


@require_GET
def experiment_list(request: HttpRequest) -> HttpResponse:
    return render(request, "webapp/experiment_list.html", {"experiments": services.list_experiments(request.user)})


@require_http_methods(["GET", "POST"])
def experiment_new(request: HttpRequest) -> HttpResponse:
    form = ExperimentForm(request.POST or None, request.FILES or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        try:
            exp = services.create_experiment(form.submission(), request.user)
        except QuotaExceeded as exc:
            form.add_error(None, str(exc))
            return render(request, "webapp/experiment_form.html", {"form": form}, status=429)
        datasets.remember_uploads(request.user, form)
        return redirect(exp)
    pre = {**preflight.reasons(request.user), "models": adapted.reasons()}
    return render(request, "webapp/experiment_form.html", {"form": form, "preflight": pre})


@require_POST
def experiment_preset(request: HttpRequest) -> HttpResponse:
    """One click: a preset's default instance with every algorithm that supports it (the paper's
    setting; the algorithm docs say which figure each preset reproduces)."""
    from scheduling import presets
    from webapp.management.commands.load_examples import example

    name = request.POST.get("preset", "")
    if name not in presets.PRESETS:
        raise Http404("unknown preset")
    sub = example(name)
    sub = services.Submission(name=f"{name} preset, all algorithms", inputs=sub.inputs, runs=sub.runs, seed=sub.seed)
    try:
        return redirect(services.create_experiment(sub, request.user))
    except QuotaExceeded as exc:
        messages.error(request, str(exc))
        return redirect("home")


def _page(request: HttpRequest, exp: Experiment, base: str, shared: bool) -> HttpResponse:
    ctx = services.experiment_page(exp, request.GET.dict())
    ctx.update(base=base, shared=shared, can_edit=not shared and _can_edit(request, exp))
    ctx["regime_note"] = regime_notes.note(exp)
    if ctx["can_edit"]:
        live = services.live_share_links(exp)
        ctx["share_links"] = [(link, services.share_url(request, link.token)) for link in live]
        ctx["share_expiry_days"] = services.SHARE_EXPIRY_DAYS
    response = render(request, "webapp/experiment_detail.html", ctx)
    if shared:
        response["X-Robots-Tag"] = "noindex, nofollow"
        response["Referrer-Policy"] = "no-referrer"  # the token does not leak to linked sites
    return response


def _can_edit(request: HttpRequest, exp: Experiment) -> bool:
    user: Any = request.user
    return bool(exp.owner_id == user.pk or (exp.owner_id is None and user.is_staff))


def _base(exp: Experiment) -> str:
    return reverse("experiment", args=[exp.pk])


def _posted_id(request: HttpRequest, name: str) -> int:
    """The object id posted as ``name``; a 400 when it is not a whole number."""
    value = request.POST[name]
    if not value.isascii() or not value.isdigit():
        raise BadRequest(f"{name} is not an id: {value[:50]!r}")
    return int(value)


@require_GET
def experiment_detail(request: HttpRequest, pk: int) -> HttpResponse:
    exp = services.get_experiment(pk, request.user)
    return _page(request, exp, _base(exp), shared=False)  # the page says when runs wait for the broker


@require_GET
def experiment_status(request: HttpRequest, pk: int) -> JsonResponse:
    return JsonResponse(services.status(services.get_experiment(pk, request.user)))


@require_POST
def experiment_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    exp = services.get_experiment(pk, request.user, write=True)
    run = services.get_run(exp, _posted_id(request, "run")) if request.POST.get("run") else None
    n = services.cancel(exp, run)
    messages.info(request, f"Cancelling {n} run(s): a running simulation stops at its next decision.")
    return redirect(exp)


@require_POST
def experiment_rerun(request: HttpRequest, pk: int) -> HttpResponse:
    exp = services.get_experiment(pk, request.user)
    try:
        return redirect(services.rerun(exp, request.user))
    except QuotaExceeded as exc:
        messages.error(request, str(exc))
        return redirect(exp)


@require_POST
def experiment_share(request: HttpRequest, pk: int) -> HttpResponse:
    exp = services.get_experiment(pk, request.user, write=True)
    if request.POST.get("revoke"):
        services.revoke(exp, _posted_id(request, "revoke"))
        messages.info(request, "The share link was revoked: it no longer opens.")
    else:
        days = request.POST.get("expires_days", "")
        services.share(exp, int(days) if days.isdigit() and int(days) in services.SHARE_EXPIRY_DAYS else None)
        messages.info(request, "Share link created: anyone with it can view this experiment (read-only).")
    # Back on the view the form was posted from (tab, run, filters, window): the new link's box
    # then holds the link to that view, as the card says.
    view = QueryDict(request.POST.get("view", "").lstrip("?")).urlencode()
    return redirect(f"{exp.get_absolute_url()}?{view}" if view else exp.get_absolute_url())


@require_POST
def experiment_delete(request: HttpRequest, pk: int) -> HttpResponse:
    exp = services.get_experiment(pk, request.user, write=True)
    services.delete_experiment(exp)
    messages.info(request, f"Deleted {exp.name}.")
    return redirect("home")


# Shared (no login): the token is the only key.


@login_not_required
@require_GET
def shared_detail(request: HttpRequest, token: str) -> HttpResponse:
    exp, _ = services.get_shared(token)
    return _page(request, exp, reverse("shared", args=[token]), shared=True)


@login_not_required
@require_GET
def shared_status(request: HttpRequest, token: str) -> JsonResponse:
    exp, _ = services.get_shared(token)
    response = JsonResponse(services.status(exp))
    response["X-Robots-Tag"] = "noindex"
    return response


@login_not_required
def shared_unmatched(request: HttpRequest, rest: str = "") -> HttpResponse:
    """Any other address under ``/s/`` (``/s/``, a link pasted with a trailing character): the
    share 404 page, so that DEBUG's 404 page, which lists the URL patterns, never shows."""
    raise services.ShareUnavailable(404, "unknown")


# Exports: the same four views behind both prefixes.


def _exp_for(request: HttpRequest, pk: int | None, token: str | None) -> Experiment:
    if token is not None:
        return services.get_shared(token)[0]
    assert pk is not None
    if not request.user.is_authenticated:
        raise Http404
    return services.get_experiment(pk, request.user)


def _download(body: bytes | str, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type=content_type)
    return _attachment(response, filename)


def _download_stream(pieces: Iterator[bytes], content_type: str, filename: str) -> StreamingHttpResponse:
    """An attachment sent a piece at a time (a result document, never held whole)."""
    return _attachment(StreamingHttpResponse(pieces, content_type=content_type), filename)


R = TypeVar("R", HttpResponse, StreamingHttpResponse)


def _attachment(response: R, filename: str) -> R:
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Robots-Tag"] = "noindex"
    return response


@login_not_required
@require_GET
def run_export(
    request: HttpRequest, run: int, what: str, pk: int | None = None, token: str | None = None
) -> HttpResponseBase:
    exp = _exp_for(request, pk, token)
    r = services.get_run(exp, run, done=True)
    stem = f"experiment-{exp.pk}-run-{r.pk}-{services._safe(r.algorithm)}"
    if what == "result":
        return _download_stream(services.result_chunks(r), "application/json", f"{stem}.json")
    doc = services.load_result(r)
    if what == "jobs":
        return _download(services.jobs_csv(doc), "text/csv; charset=utf-8", f"{stem}-jobs.csv")
    if what == "placements":
        return _download(services.placements_csv(doc), "text/csv; charset=utf-8", f"{stem}-placements.csv")
    raise Http404


@login_not_required
@require_GET
def experiment_export(request: HttpRequest, pk: int | None = None, token: str | None = None) -> HttpResponse:
    exp = _exp_for(request, pk, token)
    return _download(services.experiment_zip(exp), "application/zip", f"experiment-{exp.pk}.zip")


@require_GET
def run_result(request: HttpRequest, pk: int) -> HttpResponseBase:
    """``/runs/<id>/result.json`` (the first dashboard's URL), for runs the user may see."""
    experiment_id = Run.objects.filter(pk=pk).values_list("experiment_id", flat=True).first()
    if experiment_id is None:
        raise Http404
    return run_export(request, pk, "result", pk=experiment_id)


# ---------------------------------------------------------------------------------------------
# Datasets


@require_http_methods(["GET", "POST"])
def dataset_list(request: HttpRequest) -> HttpResponse:
    initial = {"kind": request.GET["kind"]} if request.GET.get("kind") in dict(datasets.KINDS) else None
    form = datasets.DatasetForm(request.POST or None, request.FILES or None, user=request.user, initial=initial)
    preview = None
    if request.method == "POST" and form.is_valid():
        if request.POST.get("action") == "preview":
            preview = form.preview()
        else:
            ds = form.save()
            messages.info(request, f"Added {ds.name} to your datasets.")
            return redirect(ds)
    context = {"form": form, "datasets": datasets.mine(request.user), "preview": preview}
    return render(request, "webapp/dataset_list.html", context)


@require_GET
def dataset_detail(request: HttpRequest, pk: int) -> HttpResponse:
    ds = services.get_dataset(pk, request.user)
    against = request.GET.get("cluster")
    return render(request, "webapp/dataset_detail.html", datasets.preview_page(ds, request.user, against))


@require_GET
def dataset_check_status(request: HttpRequest, pk: int, cluster_pk: int) -> JsonResponse:
    """How far the background check of a trace against a cluster spec got (the page polls it)."""
    ds = services.get_dataset(pk, request.user)
    check = get_object_or_404(TraceCheck, trace=ds, cluster_id=cluster_pk)
    return JsonResponse(tracechecks.status(check))


@require_POST
def dataset_rename(request: HttpRequest, pk: int) -> HttpResponse:
    ds = services.get_dataset(pk, request.user)
    try:
        name = datasets.rename(ds, request.POST.get("name", ""))
    except InputError as exc:
        messages.error(request, exc.problem)
    else:
        messages.info(request, f"Renamed to {name}.")
    return redirect(ds)


@require_POST
def dataset_delete(request: HttpRequest, pk: int) -> HttpResponse:
    ds = services.get_dataset(pk, request.user)
    datasets.delete(ds)
    messages.info(request, f"Deleted {ds.name}.")
    return redirect("datasets")


# ---------------------------------------------------------------------------------------------
# Accounts


@login_not_required
@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if not settings.MLSCHED_OPEN_SIGNUP:
        raise Http404("sign-up is closed: ask an operator for an account")
    form: UserCreationForm[User] = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("home")
    return render(request, "registration/signup.html", {"form": form})


@require_http_methods(["GET", "POST"])
def account(request: HttpRequest) -> HttpResponse:
    user = request.user
    assert isinstance(user, User)  # the login middleware lets no anonymous request reach this view
    new_key = None
    if request.method == "POST":
        if request.POST.get("revoke"):
            ApiToken.objects.filter(pk=_posted_id(request, "revoke"), user=user).delete()
            messages.info(request, "API token revoked.")
        else:
            _, new_key = ApiToken.issue(user, request.POST.get("name", "")[:100])
    tokens = ApiToken.objects.filter(user=user)
    return render(request, "webapp/account.html", {"tokens": tokens, "new_key": new_key})


# ---------------------------------------------------------------------------------------------
# Health (docker-compose health check)


@login_not_required
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """200 ``{"ok": true}`` while the web side and its database answer; names the workers that
    stopped taking runs because they cannot store results (``WorkerProblem``: the admin has the
    reason), which does not make the web side unhealthy."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    body: dict[str, object] = {"ok": True}
    if unable := list(WorkerProblem.objects.values_list("worker", flat=True)):
        body["workers_unable_to_store"] = unable
    return JsonResponse(body)
