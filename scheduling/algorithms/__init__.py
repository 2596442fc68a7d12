"""Algorithm modules; importing this package registers every algorithm in scheduling.registry."""

from scheduling.algorithms import (
    asrpt,  # noqa: F401
    baselines,  # noqa: F401
)
