"""scheduling/cli_quick.py reads `simulate`'s plain command lines as argparse does, and leaves every
other one to argparse."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from scheduling import cli
from scheduling.cli_quick import quick_simulate

BASE = ["simulate", "--cluster", "c.json", "--trace", "t.csv", "--algorithm", "fifo", "--out", "r.json"]
OPTIONAL = [
    ["--param", "placement=consolidated"],
    ["--param", "k=v=w"],
    ["--param", ""],
    ["--seed", "7"],
    ["--seed", "0"],
    ["--horizon", "100"],
    ["--restart-seconds", "30.5"],
    ["--restart-seconds", "0"],
    ["--history", "h.csv"],
    ["--convert-slots"],
    ["--algorithm", "srtf"],  # given twice: the last counts
    ["--out", "other.json"],
    ["--out", "/tmp/x/r.json"],
    ["--cluster", "../c.json"],
    ["--history", "a/b/h.json"],
]


def parsed(argv: list[str]) -> dict:
    """argparse's namespace, its Paths as strings (the quick reading gives a path as the string
    that ``str(Path(...))`` gives back; the handlers take either)."""
    out = dict(vars(cli._parser("simulate").parse_args(argv)))
    return {k: str(v) if isinstance(v, Path) else v for k, v in out.items()}


def test_plain_command_lines_give_argparse_s_namespace():
    rnd = random.Random(0)
    lines = [BASE]
    for _ in range(200):
        parts = [BASE[i : i + 2] for i in range(1, len(BASE), 2)] + rnd.sample(OPTIONAL, rnd.randint(0, 6))
        rnd.shuffle(parts)
        lines.append(["simulate", *(x for p in parts for x in p)])
    for argv in lines:
        quick = quick_simulate(argv)
        assert quick is not None, argv
        assert vars(quick) == parsed(argv), argv
        assert all(str(Path(v)) == v for k, v in vars(quick).items() if k in ("cluster", "trace", "out"))


@pytest.mark.parametrize(
    "extra",
    [
        ["--help"],
        ["-h"],
        ["--seed", "-1"],  # a bad value: argparse says why
        ["--seed", "x"],
        ["--horizon", "0"],
        ["--restart-seconds", "1e9"],
        ["--restart-seconds", "nan"],
        ["--seed=3"],
        ["--alg", "fifo"],  # an abbreviation argparse accepts
        ["--param"],
        ["--param", "-x"],
        ["--unknown", "1"],
        ["--"],
        ["extra"],
        ["--out", ""],  # pathlib spells these otherwise (".", "r.json", "a/r.json", ...)
        ["--out", "."],
        ["--out", "./r.json"],
        ["--out", "a//r.json"],
        ["--out", "a/./r.json"],
        ["--trace", "dir/"],
    ],
)
def test_other_command_lines_are_left_to_argparse(extra: list[str]):
    assert quick_simulate([*BASE, *extra]) is None


@pytest.mark.parametrize("missing", ["--cluster", "--trace", "--algorithm", "--out"])
def test_a_missing_required_option_is_left_to_argparse(missing: str):
    i = BASE.index(missing)
    assert quick_simulate(BASE[:i] + BASE[i + 2 :]) is None


def test_the_abbreviation_argparse_accepts_still_runs_through_it():
    argv = [*BASE[:5], "--alg", "fifo", *BASE[7:]]
    assert quick_simulate(argv) is None
    assert parsed(argv)["algorithm"] == "fifo"
