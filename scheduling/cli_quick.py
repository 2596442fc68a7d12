"""``simulate``'s arguments in their plain form, read without argparse (scheduling/cli.py).

A short run spends about 4 ms importing argparse (with gettext and locale) and building its parser,
and about 3 ms importing pathlib (with urllib.parse, ipaddress, fnmatch), against some 70 ms for a
whole 300-job ``simulate --algorithm fifo`` process (bench/RESULTS-tiresias.md). ``quick_simulate``
reads the common form: every option by its full name (``--cluster``, ``--trace``, ``--history``,
``--algorithm``, ``--param``, ``--seed``, ``--horizon``, ``--restart-seconds``, ``--out``,
``--convert-slots``), each value as the next argument and not starting with ``-``, the required
ones given, every value valid for its option's type, each path as pathlib would spell it (then the
path is passed as that string; the handlers take strings and Paths alike). Anything else
(``--help``, an abbreviation, ``--option=value``, ``--``, a value argparse would refuse, a path
pathlib would spell otherwise, a missing option) gives None, and argparse parses the arguments as
always, with its messages and exit code 2. ``tests/test_cli_quick.py`` compares both on many
command lines.
"""

from __future__ import annotations

from types import SimpleNamespace

from scheduling.bounds import MAX_SLOTS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

REQUIRED = ("cluster", "trace", "algorithm", "out")


def plain_path(text: str) -> str:
    """A path given as ``str(Path(text))`` would give it back (no empty, ``.``, doubled or trailing
    slash, ``./``, ``/./``), as itself: the handlers take a string as they take argparse's Path, and
    pathlib is not imported; any other path goes to argparse (ValueError)."""
    if not text or text == "." or text.endswith("/") or "//" in text or text.startswith("./") or "/./" in text:
        raise ValueError(text)
    return text


def _readers() -> dict[str, Callable[[str], Any]]:
    from scheduling.cli import _seconds, _whole  # the types argparse's declaration uses

    return {
        "--cluster": plain_path,
        "--trace": plain_path,
        "--history": plain_path,
        "--algorithm": str,
        "--param": str,
        "--seed": _whole(0),
        "--horizon": _whole(1, MAX_SLOTS),
        "--restart-seconds": _seconds,
        "--out": plain_path,
    }


def quick_simulate(argv: Sequence[str]) -> SimpleNamespace | None:
    """The namespace argparse gives for ``argv`` (``simulate ...``), or None (see the module docstring)."""
    from scheduling.cli_commands import cmd_simulate

    readers = _readers()
    values: dict[str, Any] = {
        "cluster": None,
        "trace": None,
        "convert_slots": False,
        "history": None,
        "algorithm": None,
        "param": [],
        "seed": 0,
        "horizon": None,
        "restart_seconds": None,
        "out": None,
    }
    i = 1
    while i < len(argv):
        option = argv[i]
        if option == "--convert-slots":
            values["convert_slots"] = True
            i += 1
            continue
        read = readers.get(option)
        if read is None or i + 1 >= len(argv) or argv[i + 1].startswith("-"):
            return None
        try:
            value = read(argv[i + 1])
        except Exception:  # argparse's own message for it
            return None
        key = option[2:].replace("-", "_")
        if key == "param":
            values["param"].append(value)
        else:
            values[key] = value  # given twice: the last, as argparse
        i += 2
    if any(values[key] is None for key in REQUIRED):
        return None
    return SimpleNamespace(command="simulate", handler=cmd_simulate, **values)
