"""Share links that do not open get a page saying why, in every mode (DEBUG's technical 404 page,
which lists the URL patterns, is never shown to someone holding a link)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from webapp.sharing import ShareUnavailable

MESSAGES = {
    "unknown": "This share link does not exist. Check that it was copied whole, or ask for a new one.",
    "revoked": "This share link was revoked by the experiment's owner: it no longer opens. Ask them for a new one.",
    "expired": "This share link has expired. Ask the experiment's owner for a new one.",
}


class ShareErrors:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if not isinstance(exc, ShareUnavailable):
            return None
        message = MESSAGES[exc.reason]
        if request.path.endswith(".json"):
            response: HttpResponse = JsonResponse({"error": message, "reason": exc.reason}, status=exc.status)
        else:
            context = {"reason": exc.reason, "message": message}
            response = render(request, "webapp/share_unavailable.html", context, status=exc.status)
        response["X-Robots-Tag"] = "noindex"
        return response
