"""Settings for the test suite: the production settings with a test-only secret key (the real
settings refuse to start without DJANGO_SECRET_KEY unless DEBUG is on). Set in the environment so
that servers and workers the tests start as subprocesses get it too."""

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "test-only-secret-key-not-for-deployment-4f1c9a7e2b")
os.environ.setdefault("MLSCHED_WARM_FIGURES", "0")  # tests that count what a page opens; on in its own test

from webapp.settings import *  # noqa: F403
