"""Time left of a running run, as the CLI's progress bar estimates it (tqdm's ``remaining``: the
time so far times the share still to do over the share done, with ``scheduling.progress``'s
fraction), for the run table and its live updates."""

from __future__ import annotations

from datetime import datetime

MIN_PROGRESS = 0.01  # below this the estimate is noise: none is shown
MIN_ELAPSED = 2.0  # seconds


def seconds_left(progress: float, started: datetime | None, now: datetime) -> float | None:
    """Estimated seconds until the run ends; None before it can be told."""
    if started is None or not MIN_PROGRESS <= progress < 1:
        return None
    elapsed = (now - started).total_seconds()
    if elapsed < MIN_ELAPSED:
        return None
    return elapsed * (1 - progress) / progress


def left_text(seconds: float | None) -> str:
    """``about 40 s left``, ``about 3 min left``, ``about 1.5 h left``; "" when unknown."""
    if seconds is None:
        return ""
    if seconds < 90:
        return f"about {max(1, round(seconds))} s left"
    if seconds < 5400:
        return f"about {round(seconds / 60)} min left"
    return f"about {seconds / 3600:.1f} h left"
