"""The Celery app, configured from the Django settings' ``CELERY_*`` names (see webapp/settings.py)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

app = Celery("mlsched", include=["workers.tasks", "workers.reproductions", "workers.submissions"])
app.config_from_object("django.conf:settings", namespace="CELERY")
