"""The edge-cloud paper (seeds/003): A_online-E and its baselines on the edge-cloud model.

Modules: ``online`` (A_online, Alg. 1, with A_ps, Alg. 5; registers ``edge-cloud``), ``greedy``
(A_greedy, Algs. 2-4: per-worker chunk queues), ``lp`` (speed augmentation and the LP lower bound of
Sec. V-C), ``baselines`` (``tiresias-l``, ``batchsche``).
"""

from scheduling.algorithms.edge import baselines, online  # noqa: F401
