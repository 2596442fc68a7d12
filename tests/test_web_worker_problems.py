"""Workers that stopped because they cannot store results are named on /healthz (which stays 200:
the web side is fine) and listed with the reason in the admin."""

from __future__ import annotations

import pytest
from django.test import Client

from webapp.models import WorkerProblem

pytestmark = [pytest.mark.django_db]


def test_healthz_names_the_workers_that_cannot_store_and_the_admin_gives_the_reason(django_user_model):
    assert Client().get("/healthz").json() == {"ok": True}
    WorkerProblem.objects.create(worker="celery@gpu-2", problem="cannot store results: OSError: [Errno 28] No space")
    health = Client().get("/healthz")
    assert health.status_code == 200
    assert health.json() == {"ok": True, "workers_unable_to_store": ["celery@gpu-2"]}  # no reason: it is public
    admin = Client()
    admin.force_login(django_user_model.objects.create_superuser("root", password="root-password-1"))
    page = admin.get("/admin/webapp/workerproblem/").content.decode()
    assert "celery@gpu-2" in page and "No space" in page
