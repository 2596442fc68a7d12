"""``numpy.random.default_rng([seed, key]).integers(n)`` for many keys at once, with the same values.

The generic-gpu import draws a model profile per group (``import_gpu.profile_of``): one
``default_rng([seed, digest])`` per key, whose ``SeedSequence`` and ``PCG64`` set-up take about 30 us
each, i.e. half a minute for a million-row trace without groups (every job its own key). This module
computes the same first draw for a whole batch of keys: numpy's ``SeedSequence`` entropy mixing and
``generate_state`` (numpy/random/bit_generator.pyx) vectorised over the keys in uint32 arithmetic,
then ``PCG64``'s seeding and first XSL-RR output (numpy/random/src/pcg64) in Python integers, then
``integers(n)``'s bounded draw (Lemire's method on the low 32 bits of that output).

``draws`` checks its first keys against numpy itself and, if any differs (another numpy), or a key
needs Lemire's rejection step (never for n a power of two), computes those keys with numpy; so its
values are numpy's in every case (``tests/test_batch_draws.py`` compares many keys).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MASK32 = 0xFFFFFFFF
MASK64 = (1 << 64) - 1
MASK128 = (1 << 128) - 1
INIT_A = 0x43B0D7E5
MULT_A = 0x931E8875
INIT_B = 0x8B51F9DD
MULT_B = 0x58F38DED
MIX_MULT_L = 0xCA01F9DD
MIX_MULT_R = 0x4973F715
POOL = 4
PCG_MULT = (2549297995355413924 << 64) | 4865540595714422341

CHECKED = 8
"""Keys of each batch compared with numpy's own draw before the batch's values are used."""


def _words(n: int) -> list[int]:
    """``_int_to_uint32_array``: a non-negative integer as little-endian 32-bit words ([0] for 0)."""
    out = [n & MASK32]
    n >>= 32
    while n:
        out.append(n & MASK32)
        n >>= 32
    return out


def _pools(entropy: np.ndarray) -> np.ndarray:
    """SeedSequence.mix_entropy for each row of ``entropy`` (uint32, shape (keys, words)): (keys, 4)."""
    hc = INIT_A

    def hashmix(value: np.ndarray) -> np.ndarray:
        nonlocal hc
        value = value ^ np.uint32(hc)
        hc = (hc * MULT_A) & MASK32
        value = value * np.uint32(hc)
        return value ^ (value >> np.uint32(16))

    def mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        result: np.ndarray = x * np.uint32(MIX_MULT_L) - y * np.uint32(MIX_MULT_R)
        mixed: np.ndarray = result ^ (result >> np.uint32(16))
        return mixed

    n, width = entropy.shape
    zero = np.zeros(n, dtype=np.uint32)
    mixer = [hashmix(entropy[:, i] if i < width else zero) for i in range(POOL)]
    for src in range(POOL):
        for dst in range(POOL):
            if src != dst:
                mixer[dst] = mix(mixer[dst], hashmix(mixer[src]))
    for src in range(POOL, width):
        for dst in range(POOL):
            mixer[dst] = mix(mixer[dst], hashmix(entropy[:, src]))
    return np.stack(mixer, axis=1)


def _states(pools: np.ndarray) -> np.ndarray:
    """SeedSequence.generate_state(4, uint64) per row: (keys, 4) uint64."""
    hc = INIT_B
    words = []
    for i in range(2 * POOL):
        value = pools[:, i % POOL] ^ np.uint32(hc)
        hc = (hc * MULT_B) & MASK32
        value = value * np.uint32(hc)
        words.append(value ^ (value >> np.uint32(16)))
    low = np.stack(words[0::2], axis=1).astype(np.uint64)
    high = np.stack(words[1::2], axis=1).astype(np.uint64)
    out: np.ndarray = low | (high << np.uint64(32))
    return out


def _first_u32(state: Sequence[int]) -> int:
    """PCG64 seeded with ``state`` (generate_state's four words): the low 32 bits of its first output."""
    seed = (state[0] << 64) | state[1]
    inc = (((state[2] << 64) | state[3]) << 1 | 1) & MASK128
    s = (inc + seed) & MASK128  # srandom: state = 0, step, += seed, step (the first step leaves inc)
    s = (s * PCG_MULT + inc) & MASK128
    s = (s * PCG_MULT + inc) & MASK128  # next64: step, then the XSL-RR output of the new state
    x = ((s >> 64) ^ s) & MASK64
    rot = s >> 122
    out = ((x >> rot) | (x << ((64 - rot) & 63))) & MASK64
    return out & MASK32


def _numpy_draw(seed: int, key: int, n: int) -> int:
    return int(np.random.default_rng([seed, key]).integers(n))


BATCH = 1 << 16
"""Keys drawn together (the SeedSequence states of a batch are held as Python integers)."""


def draws(seed: int, keys: Sequence[int], n: int) -> list[int]:
    """``int(np.random.default_rng([seed, k]).integers(n))`` for every k of ``keys`` (non-negative)."""
    if len(keys) > BATCH:
        return [v for i in range(0, len(keys), BATCH) for v in draws(seed, keys[i : i + BATCH], n)]
    if not keys:
        return []
    if seed < 0 or n < 1 or min(keys) < 0:
        return [_numpy_draw(seed, k, n) for k in keys]
    seed_words = _words(seed)
    out: list[int | None] = [None] * len(keys)
    if max(keys) > MASK64:
        return [_numpy_draw(seed, k, n) for k in keys]
    values = np.array(keys, dtype=np.uint64)
    wide = values > np.uint64(MASK32)  # a key of two 32-bit words (else one)
    for two in (False, True):
        rows = np.flatnonzero(wide == two)
        if len(rows) == 0:
            continue
        entropy = np.zeros((len(rows), len(seed_words) + 1 + two), dtype=np.uint32)
        entropy[:, : len(seed_words)] = seed_words
        entropy[:, len(seed_words)] = (values[rows] & np.uint64(MASK32)).astype(np.uint32)
        if two:
            entropy[:, len(seed_words) + 1] = (values[rows] >> np.uint64(32)).astype(np.uint32)
        states = _states(_pools(entropy)).tolist()
        for i, state in zip(rows.tolist(), states, strict=True):
            m = _first_u32(state) * n
            if (m & MASK32) < n and (m & MASK32) < (MASK32 + 1 - n) % n:
                continue  # Lemire's rejection: numpy draws again (left to numpy below)
            out[i] = m >> 32
    checked = range(min(CHECKED, len(keys)))
    if any(out[i] != _numpy_draw(seed, keys[i], n) for i in checked):
        return [_numpy_draw(seed, k, n) for k in keys]
    return [v if v is not None else _numpy_draw(seed, keys[i], n) for i, v in enumerate(out)]
