"""Algorithm modules; importing this package registers every algorithm in scheduling.registry."""

from scheduling.algorithms import baselines, edge_baselines, edge_cloud  # noqa: F401
