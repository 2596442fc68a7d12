"""The edge-cloud paper (seeds/003): A_online(-E) and its baselines on the edge-cloud model.

Modules: ``online`` (A_online, Alg. 1, with A_ps, Alg. 5), ``greedy`` (A_greedy, Algs. 2-4:
per-worker chunk queues), ``lp`` (speed augmentation and the LP lower bound of Sec. V-C),
``baselines`` (``tiresias-l``, ``batchsche``), ``spec`` (the registry entries, which name their
factories lazily: importing this package imports none of the algorithms).
"""

from scheduling.algorithms.edge import spec  # noqa: F401
