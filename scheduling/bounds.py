"""Magnitude bounds of the inputs, shared by the loaders and the plain-CSV reader
(scheduling.loaders re-exports them)."""

# Magnitude bounds (docs/formats.md, "Bounds"): far above anything the presets, the papers or real
# traces use (the whole Philly trace imported with 1-s slots spans ~10^7 slots and its largest job
# ~10^8 mini-batches), low enough that no computation overflows. (Time and memory may still grow
# with them: zhou's price arrays hold one column per slot spanned.)
MAX_AMOUNT = 1e12
"""Largest number of any kind unless a tighter bound applies: capacities, demands, MB, GB, Gbps,
weights, utilities."""
MAX_SLOTS = 10**9
"""Largest slot count: arrivals, horizons, upload delays, durations in slots."""

MAX_RESTART_SECONDS = 7 * 24 * 3600.0
"""Largest restart time (cluster field ``restart_seconds``, run option ``--restart-seconds``): a week."""
MAX_WORK = 10**12
"""Largest amount of work of a job (mini-batches or slots), and so of epochs, mini-batches and iterations."""
MAX_WORKERS = 10**6
"""Largest chunks (the worker limit), GPUs and stage replicas of a job."""
MAX_SERVERS = 100_000
"""Largest number of servers after expanding ``count``."""
SLOT_SECONDS = (1e-3, 1e7)
"""Shortest and longest slot, seconds."""
STEP_SECONDS = (1e-6, 1e7)
"""Shortest and longest mini-batch time and PS update time, seconds."""
