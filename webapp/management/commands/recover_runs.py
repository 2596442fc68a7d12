"""Re-queue or fail runs and trace checks whose worker died, and send those the broker did not take
(it was down, or lost their message); delete the datasets page's previewed files (drafts) older than
``MLSCHED_DRAFT_MAX_AGE`` or beyond a user's newest ``MLSCHED_DRAFT_KEEP``
(``webapp.drafts.clean_drafts``).

Web requests never do this (a hung broker would hold every page): run this command with
``--every N`` beside the web server (bin/run-local and docker-compose's ``recover`` service do), or
from cron. With ``--every``, a pass that fails (the database or the broker restarting) is logged
with its traceback and the next pass runs N seconds later on a new database connection: the
command does not end while its infrastructure comes and goes.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import close_old_connections, connections

from webapp import drafts, services, tracechecks

logger = logging.getLogger(__name__)


def recover_once() -> dict[str, int]:
    return {**services.recover_runs(), **tracechecks.recover_checks(), "drafts": drafts.clean_drafts()}


class Command(BaseCommand):
    help = "Recover lost runs and trace checks, dispatch those that wait for the broker, delete old dataset drafts."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--every", type=float, default=0.0, help="repeat every N seconds (0: once)")

    def handle(self, *args: Any, **options: Any) -> None:
        every = options["every"]
        if every <= 0:
            self.report(recover_once())
            return
        while True:
            close_old_connections()  # a connection the database dropped (restart) is not reused
            try:
                self.report(recover_once())
            except Exception as exc:
                logger.exception("recovery pass failed, next one in %g s", every)
                self.stderr.write(f"recovery failed: {type(exc).__name__}: {exc}")
                connections.close_all()
            time.sleep(every)

    def report(self, counts: dict[str, int]) -> None:
        self.stdout.write(" ".join(f"{k}={v}" for k, v in counts.items()))
        self.stdout.flush()
