"""Copy plotly.min.js from the installed plotly package into static/vendor/ (the app works offline),
with a gzip copy beside it that WhiteNoise serves to browsers that accept it (4.8 MB -> ~1.5 MB).

Then fetch the partial bundle with only the cartesian trace types the pages draw (bar, box, heatmap,
histogram, scatter: ``PARTIAL_PACKAGE`` from the npm registry, the same plotly.js version as the
full bundle, 1.3 MB -> ~0.45 MB gzipped) with ``npm pack``, once: pages load it when it is there
(``webapp.context.plotly_js``), the full bundle otherwise. ``--no-partial`` skips the fetch (no npm,
no network); a failed fetch only warns.
"""

from __future__ import annotations

import filecmp
import gzip
import re
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import plotly
from django.conf import settings
from django.core.management.base import BaseCommand


def plotly_js_source() -> Path:
    return Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def plotly_js_target() -> Path:
    return Path(settings.BASE_DIR) / "static" / "vendor" / "plotly.min.js"


PARTIAL_PACKAGE = "plotly.js-cartesian-dist-min"
PARTIAL_FILE = "plotly-cartesian.min.js"  # the bundle's name in the package and in static/vendor/


def partial_target() -> Path:
    return plotly_js_target().with_name(PARTIAL_FILE)


def bundle_version(path: Path) -> str | None:
    """The plotly.js version a bundle's header names: "plotly.js v4.1.1" (full bundle),
    "plotly.js (cartesian - minified) v4.1.1" (npm dist packages)."""
    with path.open("rb") as f:
        found = re.search(rb"plotly\.js (?:\([^)]*\) )?v(\d+\.\d+\.\d+)", f.read(2000))
    return found.group(1).decode() if found else None


def write_with_gzip(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    partial.write_bytes(data)
    partial.replace(target)
    packed = target.with_name(target.name + ".gz.part")  # never a half-written .gz under its name
    packed.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    packed.replace(target.with_name(target.name + ".gz"))


def fetch_partial(version: str) -> bytes:
    """The partial bundle of ``version`` from the npm registry (``npm pack``); raises OSError,
    subprocess.SubprocessError or KeyError on failure."""
    with tempfile.TemporaryDirectory(prefix="mlsched-npm-") as tmp:
        subprocess.run(
            ["npm", "pack", f"{PARTIAL_PACKAGE}@{version}", "--silent"],
            cwd=tmp,
            check=True,
            timeout=180,
            capture_output=True,
        )
        (tarball,) = Path(tmp).glob("*.tgz")
        with tarfile.open(tarball) as tar:
            member = tar.extractfile(f"package/{PARTIAL_FILE}")
            if member is None:
                raise KeyError(PARTIAL_FILE)
            return member.read()


class Command(BaseCommand):
    help = "Copy plotly.min.js from the installed plotly package into static/vendor/ (if missing or different)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--no-partial", action="store_true", help=f"do not fetch {PARTIAL_PACKAGE} with npm")

    def handle(self, *args: Any, **options: Any) -> None:
        source, target = plotly_js_source(), plotly_js_target()
        packed = target.with_name(target.name + ".gz")
        if target.exists() and filecmp.cmp(source, target, shallow=False) and packed.exists():
            self.stdout.write(f"{target} is up to date")
        else:
            write_with_gzip(target, source.read_bytes())
            self.stdout.write(f"copied {source} -> {target} (and {packed.name})")
        if not options.get("no_partial"):
            self.vendor_partial(target)

    def vendor_partial(self, full: Path) -> None:
        version, target = bundle_version(full), partial_target()
        if version is None:
            self.stderr.write(f"{full} names no plotly.js version: pages use the full bundle")
            return
        if target.exists() and bundle_version(target) == version:
            self.stdout.write(f"{target} is up to date")
            return
        try:
            data = fetch_partial(version)
        except (OSError, subprocess.SubprocessError, KeyError, ValueError, tarfile.TarError) as exc:
            self.stderr.write(
                f"could not fetch {PARTIAL_PACKAGE}@{version} with npm ({exc}): pages use the full bundle"
            )
            return
        write_with_gzip(target, data)
        self.stdout.write(f"fetched {PARTIAL_PACKAGE}@{version} -> {target} (and {target.name}.gz)")
