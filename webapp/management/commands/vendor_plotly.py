"""Copy plotly.min.js from the installed plotly package into static/vendor/ (the app works offline),
with a gzip copy beside it that WhiteNoise serves to browsers that accept it (4.8 MB -> ~1.5 MB)."""

from __future__ import annotations

import filecmp
import gzip
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
        packed = target.with_name(target.name + ".gz")
        if target.exists() and filecmp.cmp(source, target, shallow=False) and packed.exists():
            self.stdout.write(f"{target} is up to date")
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        partial = packed.with_name(packed.name + ".part")  # never a half-written .gz under its name
        partial.write_bytes(gzip.compress(target.read_bytes(), compresslevel=9, mtime=0))
        partial.replace(packed)
        self.stdout.write(f"copied {source} -> {target} (and {packed.name})")
