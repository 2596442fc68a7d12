"""Copy plotly.min.js from the installed plotly package into static/vendor/ (the app works offline)."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path
from typing import Any

import plotly
from django.conf import settings
from django.core.management.base import BaseCommand


def plotly_js_source() -> Path:
    return Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def plotly_js_target() -> Path:
    return Path(settings.BASE_DIR) / "static" / "vendor" / "plotly.min.js"


class Command(BaseCommand):
    help = "Copy plotly.min.js from the installed plotly package into static/vendor/ (if missing or different)."

    def handle(self, *args: Any, **options: Any) -> None:
        source, target = plotly_js_source(), plotly_js_target()
        if target.exists() and filecmp.cmp(source, target, shallow=False):
            self.stdout.write(f"{target} is up to date")
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        self.stdout.write(f"copied {source} -> {target}")
