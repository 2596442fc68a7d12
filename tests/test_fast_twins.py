"""Every fast twin gives what its transcription gives (tests/twins/: the registry), on generated
small instances and on its named hand-picked cases."""

from __future__ import annotations

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from tests.twins import all_twins
from tests.twins.core import TWIN_SETTINGS, Twin, first_difference

TWINS = all_twins()


def check(twin: Twin, case: object) -> set[str]:
    """Runs both paths on ``case``; fails naming the twin and the first difference."""
    fast, reference = twin.fast(case), twin.reference(case)
    diff = twin.compare(fast, reference)
    assert diff is None, f"twin {twin.name!r} ({twin.what}) differs at {diff}"
    return twin.features(fast)


@pytest.mark.parametrize("twin", TWINS, ids=lambda t: t.name)
def test_the_fast_twin_gives_what_its_transcription_gives_on_generated_instances(twin: Twin) -> None:
    seen: set[str] = set()

    @settings(TWIN_SETTINGS, max_examples=twin.examples)
    @given(case=twin.cases)
    def generated(case: object) -> None:
        note(f"twin {twin.name!r}: {twin.what}")
        seen.update(check(twin, case))

    generated()
    missing = twin.must_see - seen
    assert not missing, f"twin {twin.name!r}: no generated instance exercised {sorted(missing)}"


NAMED = [(t, name) for t in TWINS for name in t.named]


@pytest.mark.parametrize(("twin", "name"), NAMED, ids=[f"{t.name}: {n}" for t, n in NAMED])
def test_the_fast_twin_gives_what_its_transcription_gives_on_a_named_case(twin: Twin, name: str) -> None:
    check(twin, twin.named[name])


def test_a_twin_that_differs_fails_naming_itself_and_the_first_difference() -> None:
    off_by_one = Twin(
        "off-by-one",
        "x vs x + 1 past 2",
        st.integers(0, 5),
        lambda n: list(range(n)),
        lambda n: [i + (i > 2) for i in range(n)],
        lambda a, b: first_difference(a, b, "values"),
    )
    with pytest.raises(
        AssertionError, match=r"twin 'off-by-one' \(x vs x \+ 1 past 2\) differs at values\[3\]: fast 3, reference 4"
    ):
        check(off_by_one, 4)
    assert check(off_by_one, 3) == set()
