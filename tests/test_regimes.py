"""The headline regimes (scheduling.regimes): which preset instances are outside the setting their
paper's headline was measured in, and the dashboard's note on a preset experiment outside it."""

from __future__ import annotations

import pytest
from django.urls import reverse

from scheduling import presets, regimes
from webapp.models import Experiment


@pytest.mark.parametrize("preset", ["zhou-ps", "zhou-allreduce", "edge-cloud", "asrpt"])
def test_the_default_instance_of_these_papers_is_in_its_headlines_regime(preset: str) -> None:
    assert regimes.outside(preset) is None


def test_the_oasis_default_is_outside_its_headline_and_60_jobs_is_inside() -> None:
    note = regimes.outside("oasis")
    n = presets.PRESETS["oasis"].default_jobs
    assert (note is not None) == (n > 100)
    assert regimes.outside("oasis", 60) is None


@pytest.mark.parametrize(
    ("preset", "args", "words"),
    [
        ("asrpt", {"size": 0.2}, "size 0.2, measured at size 0.5 or more"),
        ("asrpt", {"jobs": 250, "size": 0.5}, "500 per full cluster"),
        ("zhou-ps", {"load": 1.0}, "offered load 1, measured at 4 or more"),
        ("zhou-allreduce", {"jobs": 40}, "40 jobs, measured at 100 or more"),
        ("edge-cloud", {"jobs": 60, "size": 0.3}, "200 per full cluster"),
        ("zhou-batch", {"jobs": 100}, "measured at 40-60 jobs"),
    ],
)
def test_an_instance_outside_the_regime_is_named_with_what_differs(preset: str, args: dict, words: str) -> None:
    note = regimes.outside(preset, **args)
    assert note is not None and words in note, note


def test_the_demo_and_a_scaled_instance_of_the_same_contention_are_not_flagged() -> None:
    assert regimes.outside("demo", 5) is None
    assert regimes.outside("edge-cloud", 30, 0.1) is None  # 300 per full cluster


@pytest.mark.django_db
def test_the_result_page_of_a_preset_experiment_outside_the_regime_warns(auth_client, user) -> None:
    def page(jobs: int) -> str:
        exp = Experiment.objects.create(
            owner=user,
            name=f"oasis {jobs}",
            cluster_text="{}",
            trace_text="",
            source=Experiment.Source.PRESET,
            preset="oasis",
            preset_options={"jobs": jobs, "seed": 0, "size": 1.0},
        )
        return auth_client.get(reverse("experiment", args=[exp.pk])).content.decode()

    assert 'id="regime-note"' in page(200) and "at 200 jobs rrh leads" in page(200)
    assert 'id="regime-note"' not in page(60)


def test_compare_on_a_preset_outside_its_headlines_regime_notes_it(tmp_path, capsys) -> None:
    from scheduling.cli import main

    args = ["compare", "--preset", "zhou-allreduce", "--jobs", "4", "--size", "0.1", "--seeds", "0-1"]
    assert main([*args, "--algorithms", "fifo", "--out", str(tmp_path / "z")]) == 0
    assert "note: This zhou-allreduce instance is outside the regime" in capsys.readouterr().err
    demo = ["compare", "--preset", "demo", "--jobs", "4", "--seeds", "0-1", "--algorithms", "fifo"]
    assert main([*demo, "--out", str(tmp_path / "d")]) == 0
    assert "outside the regime" not in capsys.readouterr().err
