"""Template context shared by every page."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.http import HttpRequest

FULL = "vendor/plotly.min.js"
PARTIAL = "vendor/plotly-cartesian.min.js"  # management command vendor_plotly


def plotly_js(request: HttpRequest) -> dict[str, str]:
    """The plotly.js bundle chart pages load: the partial (cartesian) bundle when it was vendored."""
    partial = Path(settings.BASE_DIR) / "static" / PARTIAL
    return {"plotly_js": PARTIAL if partial.exists() else FULL}
