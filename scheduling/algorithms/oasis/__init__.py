"""OASiS (Bao et al., INFOCOM'18; seeds/001): online admission with resource prices.

Modules: ``online`` (Alg. 1, price functions (22), bounds (23)-(26); registers ``oasis``), ``dp``
(Alg. 2, transcription and fast path), ``history`` (U, L estimated from an earlier window),
``baselines`` (``rrh``, ``dorm``), ``opt`` (``offline-opt``, the exact ILP of problem (1)).
"""

from scheduling.algorithms.oasis import baselines, online, opt  # noqa: F401
