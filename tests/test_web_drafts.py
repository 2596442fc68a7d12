"""Previewed files (drafts) do not pile up: those older than MLSCHED_DRAFT_MAX_AGE go when the
maintenance command runs and when their owner previews another file, and a user keeps at most their
newest MLSCHED_DRAFT_KEEP."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from webapp import drafts
from webapp.models import StoredFile

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("inline_tasks")]

DATASETS = reverse("datasets")


def preview(client, cluster_text, name="c.json"):
    response = client.post(
        DATASETS, {"kind": "cluster", "action": "preview", "file": SimpleUploadedFile(name, cluster_text.encode())}
    )
    assert response.status_code == 200 and 'id="dataset-preview"' in response.content.decode()
    return response.context["form"].data["draft"]


class Draft:
    """A draft in the default storage (the database)."""

    def __init__(self, name):
        self.name = name

    def exists(self):
        return default_storage.exists(self.name)


def draft_file(settings, user, token):
    return Draft(f"{drafts.DRAFTS}/{user.pk}-{token}.json")


def age(draft, seconds):
    """Make the draft ``seconds`` old."""
    assert StoredFile.objects.filter(name=draft.name).update(modified=timezone.now() - timedelta(seconds=seconds))


@pytest.fixture
def bob(django_user_model):
    return django_user_model.objects.create_user("bob", password="bob-password-1")


def test_the_maintenance_command_deletes_every_users_drafts_older_than_the_setting(
    client, user, bob, tiny_cluster, settings
):
    settings.MLSCHED_DRAFT_MAX_AGE = 3600
    client.force_login(user)
    old, fresh = preview(client, tiny_cluster), preview(client, tiny_cluster)
    client.force_login(bob)
    bobs_old = preview(client, tiny_cluster)
    age(draft_file(settings, user, old), 3700)
    age(draft_file(settings, bob, bobs_old), 3700)
    age(draft_file(settings, user, fresh), 3500)
    out = StringIO()
    call_command("recover_runs", stdout=out)
    assert "drafts=2" in out.getvalue()
    assert not draft_file(settings, user, old).exists() and not draft_file(settings, bob, bobs_old).exists()
    assert draft_file(settings, user, fresh).exists()
    assert drafts.load_draft(user, fresh) is not None and drafts.load_draft(user, old) is None


def test_a_new_preview_deletes_its_owners_old_drafts_but_not_another_users(client, user, bob, tiny_cluster, settings):
    settings.MLSCHED_DRAFT_MAX_AGE = 60
    client.force_login(bob)
    bobs_old = preview(client, tiny_cluster)
    age(draft_file(settings, bob, bobs_old), 120)
    client.force_login(user)
    old = preview(client, tiny_cluster)
    age(draft_file(settings, user, old), 120)
    new = preview(client, tiny_cluster)
    assert not draft_file(settings, user, old).exists()
    assert draft_file(settings, user, new).exists()
    assert draft_file(settings, bob, bobs_old).exists()  # cleaned by the command, not by alice's preview


def test_a_user_keeps_only_their_newest_drafts_and_the_newest_is_still_added(client, user, bob, tiny_cluster, settings):
    settings.MLSCHED_DRAFT_KEEP = 3
    client.force_login(bob)
    bobs = preview(client, tiny_cluster)
    client.force_login(user)
    tokens = []
    for k in range(6):
        tokens.append(preview(client, tiny_cluster, name=f"c{k}.json"))
        age(draft_file(settings, user, tokens[-1]), 60 - k)  # distinct times, oldest first
    kept = [t for t in tokens if draft_file(settings, user, t).exists()]
    assert kept == tokens[-3:]
    assert draft_file(settings, bob, bobs).exists()
    response = client.post(DATASETS, {"kind": "cluster", "action": "add", "draft": tokens[-1]})
    assert response.status_code == 302 and user.datasets.get().name == "c5.json"
