"""Where the work on a trace is done: a trace of at most ``INLINE_ROWS`` rows is checked (and a
library trace validated) in the request, well under a second; a larger one by a worker before the
runs start (webapp/inputchecks.py, webapp/tracechecks.py, webapp/submit_worker.py)."""

INLINE_ROWS = 5000


def too_large(text: str) -> bool:
    """Whether a trace's text has more rows than a web request checks."""
    return text.count("\n") > INLINE_ROWS
