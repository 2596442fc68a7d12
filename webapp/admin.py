"""The admin site for operators: experiments, runs, datasets, share links, API tokens, and workers
that stopped because they cannot store results."""

from django.contrib import admin

from webapp.models import ApiToken, Dataset, Experiment, Run, ShareLink, WorkerProblem


class RunInline(admin.TabularInline):  # type: ignore[type-arg]
    model = Run
    extra = 0
    fields = ("algorithm", "params", "status", "progress", "attempts", "error", "started", "finished")
    readonly_fields = fields


@admin.register(Experiment)
class ExperimentAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("name", "owner", "kind", "source", "created", "pending_dispatch")
    list_filter = ("kind", "source", "pending_dispatch")
    search_fields = ("name", "owner__username")
    exclude = ("cluster_input", "trace_input", "history_input")
    inlines = (RunInline,)


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("id", "experiment", "algorithm", "status", "progress", "attempts", "started", "finished")
    list_filter = ("status", "algorithm")
    search_fields = ("error",)


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("name", "kind", "owner", "size", "created")
    list_filter = ("kind",)
    exclude = ("input",)


@admin.register(ShareLink)
class ShareLinkAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("experiment", "created", "revoked")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("user", "name", "created", "last_used")
    exclude = ("key",)


@admin.register(WorkerProblem)
class WorkerProblemAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("worker", "problem", "since")
    readonly_fields = ("worker", "problem", "since")
