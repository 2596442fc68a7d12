"""A-SRPT (Luo et al.): stage-graph jobs, Heavy-Edge mapping, Alg. 1, predictors and baselines.

Modules: ``mapping`` (job graph, Heavy-Edge, alpha~_min), ``predictors`` (random forest, mean,
median, perfect), ``cluster`` (profiles, free GPUs, placement), ``scheduler`` (Alg. 1 and the
list baselines), ``exact`` (exact ILP mapping for Table II), ``philly`` (rigid trace -> stage jobs),
``spec`` (registry entries).
"""

from scheduling.algorithms.asrpt import spec  # noqa: F401
