"""Long CLI runs show a progress bar with the time left on stderr, only when stderr is a terminal."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from scheduling import api
from tests.scenarios import RIGID_TRACE, TINY_CLUSTER, instance


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    cluster, trace = tmp_path / "cluster.json", tmp_path / "trace.csv"
    cluster.write_text(json.dumps(TINY_CLUSTER))
    trace.write_text(RIGID_TRACE)
    return cluster, trace


def commands(cluster: Path, trace: Path, out: Path) -> dict[str, list[str]]:
    instance = ["--cluster", str(cluster), "--trace", str(trace)]
    return {
        "simulate": ["simulate", *instance, "--algorithm", "srtf", "--out", str(out / "r.json")],
        "compare": ["compare", *instance, "--algorithms", "fifo,srtf", "--out", str(out / "cmp")],
    }


def run_with_terminal_stderr(argv: list[str]) -> tuple[str, str]:
    """stdout (a pipe) and what was drawn on stderr (a 100-column pseudo-terminal)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "scheduling", *argv], stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    drawn = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal (Linux: EIO)
            break
        if not chunk:
            break
        drawn += chunk
    os.close(master)
    stdout, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0
    return stdout.decode(), drawn.decode()


@pytest.mark.parametrize("command", ["simulate", "compare"])
def test_a_terminal_sees_a_bar_with_the_time_left_for_each_algorithm_and_a_pipe_none(files, tmp_path, command):
    argv = commands(*files, tmp_path)[command]
    stdout, drawn = run_with_terminal_stderr(argv)
    names = ["srtf"] if command == "simulate" else ["fifo", "srtf"]
    for name in names:
        assert f"{name}:   0%|" in drawn
        assert f"{name}: 100%|" in drawn
        assert f"{name}: completed=" in stdout  # the summary line stays on stdout
    assert "elapsed" in drawn and "left" in drawn

    piped = subprocess.run([sys.executable, "-m", "scheduling", *argv], capture_output=True, text=True, check=True)
    assert piped.stderr == ""
    assert piped.stdout == stdout  # the same output, without the bar


def test_progress_grows_from_the_first_decision_to_one():
    seen: list[float] = []
    api.run(instance(RIGID_TRACE), "fifo", progress=seen.append)
    assert len(seen) > 2
    assert seen == sorted(seen) and 0 <= seen[0] < 1
    assert seen[-1] == 1.0
