"""bench/real_trace_windows.py: its tables show compare's statistics from the paper algorithm's side."""

import csv
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = next((p for p in (ROOT.parent / "shared" / "traces", Path("/work/shared/traces")) if p.exists()), ROOT)
pytestmark = pytest.mark.skipif(not (SHARED / "philly" / "philly.csv").exists(), reason="Philly trace not found")


def test_the_headline_rows_give_the_paper_algorithms_wins_which_compare_counts_as_the_baselines_losses(
    tmp_path: Path,
) -> None:
    cmd = [sys.executable, "bench/real_trace_windows.py", "--out", str(tmp_path), "--windows", "2", "--jobs", "20"]
    cmd += ["--models", "edge-cloud", "--servers", "1"]
    text = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    with (tmp_path / "edge-cloud" / "stats.csv").open(newline="") as f:
        stats = {(r["metric"], r["algorithm"]): r for r in csv.DictReader(f)}
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| edge-cloud: edge-cloud vs ")]
    assert [r[0].rsplit(" ", 1)[1] for r in rows] == ["srtf", "tiresias-l", "batchsche"]
    assert any(
        stats[("total_jct", c[0].rsplit(" ", 1)[1])]["wins"] != stats[("total_jct", c[0].rsplit(" ", 1)[1])]["losses"]
        for c in rows
    )  # the orientation shows
    for cells in rows:
        baseline = cells[0].rsplit(" ", 1)[1]
        row = stats[("total_jct", baseline)]
        assert cells[5] == f"{row['losses']}/{row['ties']}/{row['wins']} ({row['not_comparable'] or 0})"
        assert "20 [" in cells[3]  # completed counts shown
    assert "--adapt edge-cloud --windows 2" in text  # the exact command is printed
