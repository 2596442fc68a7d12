from django.apps import AppConfig


class WebappConfig(AppConfig):
    name = "webapp"
    verbose_name = "Scheduling lab"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from webapp import pages, signals

        # The figures of a finished experiment drawn in advance by the worker that stored its last run.
        signals.experiment_finished.connect(pages.warm, dispatch_uid="webapp.pages.warm")
