"""Re-queue or fail runs whose worker died, and send runs the broker did not take (it was down).

Pages and API calls do this by themselves at most every MLSCHED_RECOVER_EVERY seconds; run this
command from cron (or ``--every N`` as a small loop) when nobody may be looking at the dashboard.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from webapp import services


class Command(BaseCommand):
    help = "Recover lost runs and dispatch runs that wait for the broker."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--every", type=float, default=0.0, help="repeat every N seconds (0: once)")

    def handle(self, *args: Any, **options: Any) -> None:
        while True:
            counts = services.recover_runs(force=True)
            self.stdout.write(" ".join(f"{k}={v}" for k, v in counts.items()))
            if options["every"] <= 0:
                return
            time.sleep(options["every"])
