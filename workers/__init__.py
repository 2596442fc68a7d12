"""The Celery app and its tasks: thin wrappers that call ``scheduling`` and record the outcome.

``celery -A workers worker`` finds the app here.
"""

from workers.celery import app

__all__ = ["app"]
