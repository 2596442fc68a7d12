"""Create a sign-in for a fresh local dashboard (bin/run-local): a superuser, once.

Does nothing when any user exists. The name and password come from the options, else from
``MLSCHED_DEV_USER`` / ``MLSCHED_DEV_PASSWORD``, else ``lab`` / ``lab`` (a local, single-user
setting: a deployment creates its operators with ``createsuperuser``).
"""

from __future__ import annotations

import os
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Create a superuser for local use unless a user exists."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default=os.environ.get("MLSCHED_DEV_USER", "lab"))
        parser.add_argument("--password", default=os.environ.get("MLSCHED_DEV_PASSWORD", "lab"))

    def handle(self, *args: Any, **options: Any) -> None:
        users = get_user_model()
        if users.objects.exists():
            self.stdout.write("users exist: none created")
            return
        users.objects.create_superuser(options["username"], password=options["password"])
        self.stdout.write(f"sign in as {options['username']!r} with password {options['password']!r}")
