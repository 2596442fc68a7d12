"""Signals between the layers that must not import each other: the result store (webapp/runstore.py,
run on a worker) tells the pages (webapp/pages.py) that an experiment's last run has finished, so
its tabs' figures are drawn there in advance (``MLSCHED_WARM_FIGURES``), not on a visit."""

from django.dispatch import Signal

experiment_finished = Signal()  # keyword argument: experiment_id
