"""Algorithm modules. Each registers its algorithms in scheduling.registry when imported; the
registry imports them in the order of ``MODULES`` (all of them to list the algorithms, only as many
as it takes to find one by name), so the registry's order is always that of a full load."""

# baselines first: fifo, srtf, tiresias and drf are found without importing the other modules
# (antman imports baselines anyway, so its entries came first before this order was declared).
MODULES = ("baselines", "antman", "asrpt", "edge", "oasis", "zhou")
