"""ML-cluster scheduling lab: the simulation package (no Django, no Celery).

Library use::

    from scheduling import api
    instance = api.load_instance("cluster.json", "trace.csv")
    result = api.run(instance, "fifo", params={}, seed=1)
"""

__version__ = "0.1.0"
