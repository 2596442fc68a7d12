"""Re-queue or fail runs whose worker died, and send runs the broker did not take (it was down);
delete the datasets page's previewed files (drafts) older than ``MLSCHED_DRAFT_MAX_AGE`` or beyond
a user's newest ``MLSCHED_DRAFT_KEEP`` (``webapp.datasets.clean_drafts``).

Web requests never do this (a hung broker would hold every page): run this command with
``--every N`` beside the web server (bin/run-local and docker-compose's ``recover`` service do), or
from cron.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from webapp import datasets, services


class Command(BaseCommand):
    help = "Recover lost runs, dispatch runs that wait for the broker, delete old dataset drafts."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--every", type=float, default=0.0, help="repeat every N seconds (0: once)")

    def handle(self, *args: Any, **options: Any) -> None:
        while True:
            counts = {**services.recover_runs(), "drafts": datasets.clean_drafts()}
            self.stdout.write(" ".join(f"{k}={v}" for k, v in counts.items()))
            if options["every"] <= 0:
                return
            time.sleep(options["every"])
