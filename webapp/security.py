"""Checks at the web boundary (docs/security.md): text no database column stores is refused with a
400 before any view sees it, and names are fitted to their columns."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse

from scheduling.errors import InputError


def bad_text(value: str) -> str | None:
    """What makes ``value`` unstorable, or None: a NUL character (PostgreSQL text refuses it) or an
    unpaired UTF-16 surrogate (not encodable as UTF-8: every CSV or page showing it would fail)."""
    if "\x00" in value:
        return "a NUL character"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "an unpaired surrogate character"
    return None


def fit(value: str, limit: int) -> str:
    """``value`` cut to ``limit`` characters with an ellipsis (a generated name over its column)."""
    return value if len(value) <= limit else value[: limit - 1] + "…"


def parse_deadline(label: str) -> Callable[[], None]:
    """A ``checkpoint`` for ``loaders.parse_trace`` in a web request: InputError once checking has
    taken MLSCHED_WEB_PARSE_SECONDS, so that no request holds a web worker parsing for longer (the
    row cap bounds the work; this bounds the time on a loaded machine too)."""
    limit = float(settings.MLSCHED_WEB_PARSE_SECONDS)
    deadline = time.monotonic() + limit

    def checkpoint() -> None:
        if time.monotonic() > deadline:
            raise InputError(
                f"checking this trace took more than {limit:g} s on the dashboard: use a smaller trace, "
                "or the command line (python -m scheduling validate / simulate)",
                file=label,
            )

    return checkpoint


def _request_texts(request: HttpRequest) -> Iterable[tuple[str, str]]:
    yield "path", request.path
    for key, values in request.GET.lists():
        yield "query", key
        for v in values:
            yield f"query field {key[:40]!r}", v
    if request.method == "POST" and request.content_type in (
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    ):
        for key, values in request.POST.lists():
            yield "form", key
            for v in values:
                yield f"form field {key[:40]!r}", v
        for key, files in request.FILES.lists():
            for f in files:
                yield f"file name of {key[:40]!r}", f.name or ""


class TextCheckMiddleware:
    """400 for a request whose path, query or form values hold text no column stores."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        for where, value in _request_texts(request):
            if problem := bad_text(value):
                message = f"the {where} contains {problem}"
                if request.path.startswith("/api/"):
                    return JsonResponse({"error": message}, status=400)
                return HttpResponseBadRequest(f"Bad request: {message}.\n", content_type="text/plain; charset=utf-8")
        return self.get_response(request)


# Every page's scripts and styles come from /static/ (plotly.js included, vendored); figure data
# travels in <script type="application/json"> blocks, which CSP does not treat as scripts. Styles
# allow 'unsafe-inline' because plotly.js styles its SVG through style attributes and a <style>
# element it adds; data:/blob: images are plotly's "download as PNG".
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


def site_flags(request: HttpRequest) -> dict[str, Any]:
    """Template context: whether anyone may create an account (the sign-in page links sign-up)."""
    return {"open_signup": settings.MLSCHED_OPEN_SIGNUP}


class HeadersMiddleware:
    """Content-Security-Policy on every response, and ``Cache-Control: private, no-store`` on every
    response to a signed-in user (pages, exports, API) and on share links: no shared cache or
    browser history keeps a copy of someone's experiments."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        user = getattr(request, "user", None)
        if request.path.startswith("/s/") or (user is not None and user.is_authenticated):
            response["Cache-Control"] = "private, no-store"
        return response


def csv_cell(value: Any) -> Any:
    """A CSV cell; text starting with a formula character is prefixed with ' (spreadsheet injection)."""
    if isinstance(value, Mapping):
        value = json.dumps(value, separators=(",", ":"), sort_keys=True)
    if value is None:
        return ""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value
