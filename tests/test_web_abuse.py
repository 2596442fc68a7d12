"""Abuse: oversized uploads, a million-row CSV, markup in ids and names, guessed or revoked share
tokens, other users' objects by id, posts without a CSRF token, anonymous access."""

import secrets

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from tests.webhelpers import upload_data
from webapp.models import ApiToken, Dataset, Experiment, Run, ShareLink

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

NEW = reverse("experiment-new")
XSS_JOB = "<img src=x onerror=alert(1)>"
XSS_NAME = "<script>alert('name')</script>"


@pytest.fixture
def client(auth_client):
    """Pages need a signed-in user (conftest ``auth_client``)."""
    return auth_client


# ---------------------------------------------------------------------------------------------
# Sizes


def test_an_upload_over_the_size_limit_is_refused_everywhere(client, user, tiny_cluster):
    big = b"job_id,arrival\n" + b"x" * (33 * 2**20)
    response = client.post(reverse("datasets"), {"kind": "cluster", "file": SimpleUploadedFile("big.json", big)})
    assert "big.json: file is 33.0 MiB, larger than the 32 MiB limit" in response.content.decode()
    response = client.post(NEW, upload_data(tiny_cluster, big))
    assert "larger than the 32 MiB limit" in " ".join(response.context["form"].errors["trace_file"])
    key = ApiToken.issue(user)[1]
    api = Client(HTTP_AUTHORIZATION=f"Token {key}")
    response = api.post("/api/experiments/", upload_data(tiny_cluster, big))
    assert response.status_code == 400 and "larger than the 32 MiB limit" in response.json()["fields"]["trace_file"][0]
    assert Dataset.objects.count() == 0 and Experiment.objects.count() == 0


def test_a_csv_with_a_million_rows_is_refused_before_parsing(client, tiny_cluster):
    rows = "".join(f"j{i},{i % 50}\n" for i in range(1_000_000))
    response = client.post(NEW, upload_data(tiny_cluster, "job_id,arrival\n" + rows))
    errors = " ".join(response.context["form"].errors["trace_file"])
    assert "trace.csv: 1,000,000 rows, more than the 200,000 jobs the dashboard accepts" in errors
    assert Experiment.objects.count() == 0


# ---------------------------------------------------------------------------------------------
# Markup in ids and names is text everywhere


def test_markup_in_job_ids_and_names_is_escaped_on_every_page(
    client, user, tiny_cluster, django_capture_on_commit_callbacks
):
    trace = (
        f'job_id,arrival,epochs,chunks,minibatches,batch_time,ps_update\n"{XSS_JOB}",0,1,2,2,60,30\nok,1,1,2,2,60,30\n'
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(NEW, upload_data(tiny_cluster, trace, algorithms=["fifo", "drf"], name=XSS_NAME))
    exp = Experiment.objects.get()
    assert exp.name == XSS_NAME and {r.status for r in exp.runs.all()} == {"done"}
    client.post(reverse("experiment-share", args=[exp.pk]))
    token = ShareLink.objects.get().token
    pages = [reverse("home"), *(f"{response.url}?tab={t}" for t in ("summary", "jct", "gantt", "time", "inputs"))]
    pages += [reverse("shared", args=[token]) + "?tab=gantt", reverse("datasets")]
    pages += [ds.get_absolute_url() for ds in Dataset.objects.all()]
    for url in pages:
        html = client.get(url).content.decode()
        assert XSS_NAME not in html and XSS_JOB not in html, url
        assert "<script>alert" not in html and "<img src=x" not in html, url
    gantt = client.get(f"{response.url}?tab=gantt").content.decode()
    # JSON for Plotly: the id as entities (Plotly shows "<img ...>" as text, never as markup)
    assert "\\u0026lt;img src=x onerror=alert(1)\\u0026gt;" in gantt
    assert "&lt;script&gt;alert(&#x27;name&#x27;)&lt;/script&gt;" in client.get(reverse("home")).content.decode()


# ---------------------------------------------------------------------------------------------
# Share tokens


def test_a_guessed_or_revoked_share_token_is_not_found(client, user, tiny_cluster, tiny_trace):
    exp = Experiment.objects.create(name="x", source="upload", cluster_text=tiny_cluster, trace_name="t.csv",
                                    trace_text=tiny_trace, owner=user)  # fmt: skip
    link = ShareLink.objects.create(experiment=exp)
    anon = Client()
    assert anon.get(reverse("shared", args=[link.token])).status_code == 200
    for guess in (secrets.token_urlsafe(24), str(exp.pk), link.token[:-1], link.token.upper()):
        assert anon.get(reverse("shared", args=[guess])).status_code == 404
    client.post(reverse("experiment-share", args=[exp.pk]), {"revoke": link.pk})
    assert anon.get(reverse("shared", args=[link.token])).status_code == 410  # gone: revoked
    assert anon.get(reverse("shared-status", args=[link.token])).status_code == 410
    assert anon.get(reverse("shared-export", args=[link.token])).status_code == 410


# ---------------------------------------------------------------------------------------------
# Other users' objects


def test_another_users_experiment_is_not_found_by_id(client, other_user, tiny_cluster, tiny_trace):
    exp = Experiment.objects.create(name="secret", source="upload", cluster_text=tiny_cluster, trace_name="t.csv",
                                    trace_text=tiny_trace, owner=other_user)  # fmt: skip
    run = Run.objects.create(experiment=exp, algorithm="fifo")
    base = exp.get_absolute_url()
    for url in (base, f"{base}status.json", f"{base}export.zip", f"{base}runs/{run.pk}/jobs.csv",
                f"{base}?tab=gantt", reverse("run-result", args=[run.pk])):  # fmt: skip
        assert client.get(url).status_code == 404, url
    for name in ("experiment-cancel", "experiment-share", "experiment-delete", "experiment-rerun"):
        assert client.post(reverse(name, args=[exp.pk])).status_code == 404, name
    assert "secret" not in client.get(reverse("home")).content.decode()
    assert Experiment.objects.filter(pk=exp.pk).exists() and not ShareLink.objects.exists()


def test_examples_without_owner_are_readable_but_not_changeable_by_users(client, tiny_cluster, tiny_trace):
    exp = Experiment.objects.create(name="Example", source="preset", cluster_text=tiny_cluster, trace_name="t.csv",
                                    trace_text=tiny_trace)  # fmt: skip
    assert client.get(exp.get_absolute_url()).status_code == 200
    assert client.post(reverse("experiment-share", args=[exp.pk])).status_code == 404
    assert client.post(reverse("experiment-delete", args=[exp.pk])).status_code == 404


# ---------------------------------------------------------------------------------------------
# CSRF and anonymous access


def test_form_posts_without_a_csrf_token_are_forbidden(user, tiny_cluster, tiny_trace):
    exp = Experiment.objects.create(name="x", source="upload", cluster_text=tiny_cluster, trace_name="t.csv",
                                    trace_text=tiny_trace, owner=user)  # fmt: skip
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    posts = [
        (NEW, upload_data(tiny_cluster, tiny_trace)),
        (reverse("experiment-cancel", args=[exp.pk]), {}),
        (reverse("experiment-share", args=[exp.pk]), {}),
        (reverse("experiment-delete", args=[exp.pk]), {}),
        (reverse("datasets"), {"kind": "cluster", "file": SimpleUploadedFile("c.json", tiny_cluster.encode())}),
        (reverse("account"), {"name": "x"}),
    ]
    for url, data in posts:
        assert strict.post(url, data).status_code == 403, url
    assert Experiment.objects.count() == 1 and not ShareLink.objects.exists() and not Dataset.objects.exists()
    assert not ApiToken.objects.exists()
    assert Client(enforce_csrf_checks=True).post(reverse("login"), {"username": "alice"}).status_code == 403


def test_anonymous_visitors_are_sent_to_sign_in(tiny_cluster, tiny_trace):
    anon = Client()
    for url in (reverse("home"), NEW, reverse("datasets"), reverse("account"), "/experiments/1/"):
        response = anon.get(url)
        assert response.status_code == 302 and response.url.startswith(reverse("login")), url
    assert anon.get(reverse("login")).status_code == 200
    assert anon.get(reverse("healthz")).json() == {"ok": True}


# ---------------------------------------------------------------------------------------------
# Crafted form posts


def test_a_posted_id_that_is_not_a_number_is_a_bad_request(client, user, tiny_cluster, tiny_trace):
    exp = Experiment.objects.create(name="x", source="upload", cluster_text=tiny_cluster, trace_name="t.csv",
                                    trace_text=tiny_trace, owner=user)  # fmt: skip
    run = Run.objects.create(experiment=exp, algorithm="fifo")
    link = ShareLink.objects.create(experiment=exp)
    token = ApiToken.issue(user)[0]
    cancel, share = reverse("experiment-cancel", args=[exp.pk]), reverse("experiment-share", args=[exp.pk])
    for bad in ("abc", "1.5", "-1", " 1", "١"):
        assert client.post(cancel, {"run": bad}).status_code == 400, bad
        assert client.post(share, {"revoke": bad}).status_code == 400, bad
        assert client.post(reverse("account"), {"revoke": bad}).status_code == 400, bad
    sibling = Experiment.objects.create(name="y", source="upload", cluster_text=tiny_cluster, trace_name="t.csv",
                                        trace_text=tiny_trace, owner=user)  # fmt: skip
    other = Run.objects.create(experiment=sibling, algorithm="fifo")
    for missing in (other.pk, 10**30):  # a run of another experiment, an id beyond any integer column
        assert client.post(cancel, {"run": missing}).status_code == 404, missing
    assert client.post(share, {"revoke": 10**30}).status_code == 302
    run.refresh_from_db()
    link.refresh_from_db()
    assert run.status == "queued" and link.revoked is None and ApiToken.objects.filter(pk=token.pk).exists()


# ---------------------------------------------------------------------------------------------
# Inputs Python's json module or PostgreSQL cannot take are form errors, not server errors

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("cluster", "trace", "trace_name", "field", "expected"),
    [
        (DEEP, None, "trace.csv", "cluster_file", "cluster.json: invalid JSON: nested too deeply"),
        (None, DEEP, "trace.json", "trace_file", "trace.json: invalid JSON: nested too deeply"),
        (
            None,
            b"job_id,arrival\nj1,0\nj\x002,1\n",
            "trace.csv",
            "trace_file",
            "trace.csv, line 3: contains a NUL byte",
        ),
        (None, '[{"job_id": "j\\u0000", "arrival": 0}]', "trace.json", "trace_file", "contains a NUL character"),
    ],
)
def test_json_python_cannot_read_and_nul_characters_are_form_and_api_errors(
    client, user, tiny_cluster, tiny_trace, cluster, trace, trace_name, field, expected
):
    data = upload_data(cluster or tiny_cluster, trace or tiny_trace, trace_name)
    response = client.post(NEW, data)
    assert response.status_code == 200
    assert expected in " ".join(response.context["form"].errors[field])
    api = Client(HTTP_AUTHORIZATION=f"Token {ApiToken.issue(user)[1]}")
    response = api.post("/api/experiments/", upload_data(cluster or tiny_cluster, trace or tiny_trace, trace_name))
    assert response.status_code == 400 and expected in response.json()["fields"][field][0]
    assert Experiment.objects.count() == 0


def test_json_python_cannot_read_and_nul_bytes_are_dataset_form_errors(client, tiny_cluster):
    def post(kind, name, text, **extra):
        upload = SimpleUploadedFile(name, text.encode() if isinstance(text, str) else text)
        return client.post(reverse("datasets"), {"kind": kind, "file": upload, **extra}).content.decode()

    assert "c.json: invalid JSON: nested too deeply" in post("cluster", "c.json", DEEP)
    post("cluster", "tiny.json", tiny_cluster)
    cluster = Dataset.objects.get().pk
    assert "t.json: invalid JSON: nested too deeply" in post("trace", "t.json", DEEP, cluster=cluster)
    assert "t.csv, line 3: contains a NUL byte" in post(
        "trace", "t.csv", b"job_id,arrival\nj1,0\nj\x00,1\n", cluster=cluster
    )
    assert Dataset.objects.count() == 1
