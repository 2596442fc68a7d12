"""Accounts as a production site does them (docs/security.md): login throttling, password rules,
sign-up closed unless asked for, no start without a secret key, `check --deploy` clean, and the
headers every page carries."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from webapp.models import ShareLink

pytestmark = [pytest.mark.django_db]

ROOT = Path(__file__).resolve().parent.parent
LOGIN = reverse("login")


def sign_in(client: Client, password: str, username: str = "alice", ip: str = "10.0.0.1"):
    return client.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=ip)


def test_five_wrong_passwords_lock_that_user_from_that_address_even_for_the_right_one(user, settings):
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert sign_in(client, "wrong-password").status_code == 200  # the form again, with its error
    locked = sign_in(client, "wrong-password")
    assert locked.status_code == 429
    assert "Too many failed sign-ins" in locked.content.decode()
    assert sign_in(client, "alice-password-1").status_code == 429
    # another address still signs in
    assert sign_in(Client(), "alice-password-1", ip="10.0.0.2").status_code == 302


def test_a_successful_sign_in_clears_the_count_of_failures(user, settings):
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        sign_in(client, "wrong-password")
    assert sign_in(client, "alice-password-1").status_code == 302
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        sign_in(client, "wrong-password")
    assert sign_in(client, "alice-password-1").status_code == 302


def test_sign_up_is_closed_by_default_and_the_sign_in_page_says_whom_to_ask():
    assert Client().get(reverse("signup")).status_code == 404
    page = Client().get(LOGIN).content.decode()
    assert "Ask an operator" in page and reverse("signup") not in page


@pytest.mark.parametrize("password", ["a", "1", "password", "12345678901", "bob-the-builder"])
def test_open_sign_up_refuses_weak_passwords(settings, password, django_user_model):
    settings.MLSCHED_OPEN_SIGNUP = True
    response = Client().post(
        reverse("signup"), {"username": "bob-the-builder", "password1": password, "password2": password}
    )
    assert response.status_code == 200
    assert response.context["form"].errors["password2"]
    assert not django_user_model.objects.filter(username="bob-the-builder").exists()


def test_open_sign_up_accepts_a_good_password(settings, django_user_model):
    settings.MLSCHED_OPEN_SIGNUP = True
    good = "plum-orbit-harness-42"
    response = Client().post(reverse("signup"), {"username": "bob", "password1": good, "password2": good})
    assert response.status_code == 302
    assert django_user_model.objects.filter(username="bob").exists()


def manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "MLSCHED_OPEN"))}
    clean["DJANGO_SETTINGS_MODULE"] = "webapp.settings"
    clean["MLSCHED_VAR_DIR"] = os.environ.get("MLSCHED_VAR_DIR", str(ROOT / "var"))
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_app_refuses_to_start_with_debug_off_and_no_secret_key():
    refused = manage("check")
    assert refused.returncode != 0
    assert "DJANGO_SECRET_KEY is not set" in refused.stderr
    assert manage("check", DJANGO_DEBUG="1").returncode == 0


def test_check_deploy_is_clean_with_the_documented_production_settings():
    checked = manage("check", "--deploy", DJANGO_SECRET_KEY=secrets.token_urlsafe(50), DJANGO_HTTPS="1")
    assert checked.returncode == 0, checked.stderr
    assert "System check identified no issues (0 silenced)." in checked.stdout


def test_signed_in_pages_are_private_and_carry_the_content_security_policy(auth_client):
    response = auth_client.get(reverse("home"))
    assert response["Cache-Control"] == "private, no-store"
    csp = response["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-eval" not in csp and "frame-ancestors 'none'" in csp


def test_share_pages_are_private(auth_client, user):
    from webapp.models import Experiment

    exp = Experiment.objects.create(owner=user, name="x", source="upload", trace_name="t.csv")
    link = ShareLink.objects.create(experiment=exp)
    response = Client().get(f"/s/{link.token}/")
    assert response.status_code == 200
    assert response["Cache-Control"] == "private, no-store"


def test_the_health_check_answers_plain_http_under_https_settings(settings):
    settings.SECURE_SSL_REDIRECT = True
    assert Client().get("/healthz").status_code == 200
    assert Client().get(LOGIN).status_code == 301
