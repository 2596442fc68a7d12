from collections.abc import Callable

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.http.response import HttpResponseBase
from django.templatetags.static import static
from django.urls import URLPattern, include, path, re_path
from django.views.generic import RedirectView

from webapp import api, repetition_views, reproduction_views, views

ViewFunction = Callable[..., HttpResponseBase]


def experiment_routes(prefix: str, detail: ViewFunction, status: ViewFunction, name: str) -> list[URLPattern]:
    """The experiment page, its status and its exports, under an owner prefix or a share prefix."""
    return [
        path(f"{prefix}", detail, name=name),
        path(f"{prefix}status.json", status, name=f"{name}-status"),
        path(f"{prefix}export.zip", views.experiment_export, name=f"{name}-export"),
        path(f"{prefix}runs/<int:run>/result.json", views.run_export, {"what": "result"}, name=f"{name}-run-result"),
        path(f"{prefix}runs/<int:run>/jobs.csv", views.run_export, {"what": "jobs"}, name=f"{name}-run-jobs"),
        path(
            f"{prefix}runs/<int:run>/placements.csv",
            views.run_export,
            {"what": "placements"},
            name=f"{name}-run-placements",
        ),
        path(f"{prefix}repetitions.csv", repetition_views.per_seed_csv, name=f"{name}-repetitions-csv"),
        path(f"{prefix}repetitions-figures.html", repetition_views.figures_html, name=f"{name}-repetitions-html"),
        path(f"{prefix}repetitions-figure.svg", repetition_views.figure_image, {"fmt": "svg"}),
        path(f"{prefix}repetitions-figure.png", repetition_views.figure_image, {"fmt": "png"}),
    ]


api_routes = [
    path("experiments/", api.experiments, name="api-experiments"),
    path("experiments/<int:pk>/", api.experiment, name="api-experiment"),
    path("experiments/<int:pk>/cancel/", api.experiment_cancel, name="api-experiment-cancel"),
    path("experiments/<int:pk>/runs/<int:run>/result.json", api.run_file, {"what": "result"}),
    path("experiments/<int:pk>/runs/<int:run>/jobs.csv", api.run_file, {"what": "jobs"}),
    path("experiments/<int:pk>/runs/<int:run>/placements.csv", api.run_file, {"what": "placements"}),
    path("experiments/<int:pk>/repetitions.json", api.repetitions, name="api-repetitions"),
    path("experiments/<int:pk>/repetitions.csv", api.repetitions_csv),
    path("algorithms/", api.algorithms, name="api-algorithms"),
]

urlpatterns = [
    path("", views.experiment_list, name="home"),
    path("experiments/new/", views.experiment_new, name="experiment-new"),
    path("experiments/preset/", views.experiment_preset, name="experiment-preset"),
    *experiment_routes("experiments/<int:pk>/", views.experiment_detail, views.experiment_status, "experiment"),
    path("experiments/<int:pk>/cancel/", views.experiment_cancel, name="experiment-cancel"),
    path("experiments/<int:pk>/rerun/", views.experiment_rerun, name="experiment-rerun"),
    path("experiments/<int:pk>/share/", views.experiment_share, name="experiment-share"),
    path("experiments/<int:pk>/delete/", views.experiment_delete, name="experiment-delete"),
    *experiment_routes("s/<str:token>/", views.shared_detail, views.shared_status, "shared"),
    re_path(r"^s/(?P<rest>.*)$", views.shared_unmatched),  # after the share routes: every other /s/ URL
    path("runs/<int:pk>/result.json", views.run_result, name="run-result"),
    path("reproductions/", reproduction_views.reproduction_list, name="reproductions"),
    path("reproductions/<str:name>/start/", reproduction_views.reproduction_start, name="reproduction-start"),
    path(
        "reproductions/<str:name>/experiment/",
        reproduction_views.reproduction_experiment,
        name="reproduction-experiment",
    ),
    path("reproductions/<str:name>/<str:filename>", reproduction_views.reproduction_file, name="reproduction-file"),
    path("datasets/", views.dataset_list, name="datasets"),
    path("datasets/<int:pk>/", views.dataset_detail, name="dataset"),
    path("datasets/<int:pk>/delete/", views.dataset_delete, name="dataset-delete"),
    path("datasets/<int:pk>/rename/", views.dataset_rename, name="dataset-rename"),
    path("datasets/<int:pk>/check/<int:cluster_pk>.json", views.dataset_check_status, name="dataset-check"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/signup/", views.signup, name="signup"),
    path("accounts/", views.account, name="account"),
    path("api/", include(api_routes)),
    path("admin/", admin.site.urls),
    path("healthz", views.healthz, name="healthz"),
    # Pages without the icon link (the admin site) and non-HTML documents make browsers ask for this.
    path("favicon.ico", login_not_required(RedirectView.as_view(url=static("favicon.svg"), permanent=True))),
]

# JSON errors on API paths (webapp/api.py); Django's pages elsewhere.
handler400 = "webapp.api.bad_request"
handler403 = "webapp.api.permission_denied"
handler404 = "webapp.api.page_not_found"
handler500 = "webapp.api.server_error"
