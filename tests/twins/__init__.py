"""Fast twins and the transcriptions they replace (core.py: the harness; one module per family)."""

from __future__ import annotations

from tests.twins.core import Twin


def all_twins() -> list[Twin]:
    """Every registered twin, in a fixed order."""
    from tests.twins import antman, asrpt, dorm, ledgers, lists, paths, zhou

    twins = [*lists.TWINS, *antman.TWINS, *ledgers.TWINS, *asrpt.TWINS, *zhou.TWINS, *dorm.TWINS, *paths.TWINS]
    names = [t.name for t in twins]
    assert len(set(names)) == len(names), f"two twins share a name: {sorted(names)}"
    return twins
