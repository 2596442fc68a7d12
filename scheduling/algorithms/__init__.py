"""Algorithm modules; importing this package registers every algorithm in scheduling.registry."""

from scheduling.algorithms import (  # noqa: F401
    antman,
    asrpt,
    baselines,
    edge,
    oasis,
    zhou,
)
