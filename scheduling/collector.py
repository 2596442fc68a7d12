"""How often Python's garbage collector runs while simulations run.

A run's objects (the inputs, the engine's records, the result document) mostly live until the run
ends and form few reference cycles. With Python's default thresholds (700, 10, 10) the full
collections of a long run walk all of them again and again and free almost nothing: on the whole
Philly trace (82,247 jobs, ``srtf``) collections took 3.4 s of a 14.8 s process, 2.3 s of it in
full ones (bench/RESULTS.md, "The garbage collector runs less often during a run"). With
``THRESHOLDS`` the youngest generation is collected after 10,000 allocations instead of 700, and a
full collection needs 1,000 collections of the middle generation instead of 10; cycles are still
freed, later.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

THRESHOLDS = (10_000, 10, 1_000)


def for_one_command() -> None:
    """For a process that runs one command and exits (``python -m scheduling``): everything
    imported so far is moved out of the collector's generations (``gc.freeze``: it lives until the
    process ends, so no collection during the run or at exit walks it again), then ``THRESHOLDS``."""
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


def before_exit() -> None:
    """For the same process when its command has finished: what the command imported and built
    (``python -m scheduling`` imports each command's modules when it runs) is frozen too, so that
    the full collections of the interpreter's shutdown do not walk it (about 4 ms of a 300-job
    ``simulate``, bench/RESULTS-tiresias.md). Cycles among those objects are not freed at exit,
    which a process that ends anyway does not need; refcounted objects (an open file held by a
    module) are still released when the modules are cleared."""
    gc.freeze()


@contextmanager
def fewer_collections() -> Iterator[None]:
    """For one run in a long-lived process (a Celery worker): ``THRESHOLDS`` while the run lasts,
    then the process's own thresholds again, whose collections free what the run left in reference
    cycles. No full collection is forced at the end: in a worker it takes 30-40 ms, which a
    repetition of many small runs would pay at every run."""
    before = gc.get_threshold()
    gc.set_threshold(*THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
