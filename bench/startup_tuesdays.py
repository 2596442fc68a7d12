"""bench/startup_unseen.py's measurement on the Tuesday windows of bench/tiresias_windows.py (for tuning).

    TIRESIAS_PYTHON2=/path/to/python2.7 nice -n 10 .venv/bin/python bench/startup_tuesdays.py /path/to/Tiresias \
        [--windows 15] [--rounds 5] [--root <other checkout> --root .]

The same processes, timing (CPU of the whole process by os.wait4) and tables as
bench/startup_unseen.py, on windows of 300 jobs starting at 00:00 on 2017-09-05 + 7k days on 4 x 8
GPUs: bench/tiresias_windows.py's rule, whose windows start-up work was tuned on. The held-out
sets of bench/startup_unseen.py (``mondays``, ``thursdays``) are not touched by this script.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import startup_unseen


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", help="the authors' repository (SymbioticLab/Tiresias), outside this one")
    ap.add_argument("--windows", type=int, default=15)
    ap.add_argument("--rounds", default="5")
    ap.add_argument("--root", action="append", default=[], help="our checkouts (default: this one)")
    args = ap.parse_args()
    startup_unseen.RULES["tuesdays"] = (dt.date(2017, 9, 5), args.windows)
    startup_unseen.AT = "00:00:00"
    roots = [x for root in args.root for x in ("--root", root)]
    sys.argv = [sys.argv[0], args.checkout, "--rule", "tuesdays", "--rounds", args.rounds, *roots]
    return startup_unseen.main()


if __name__ == "__main__":
    raise SystemExit(main())
