"""Benchmark: requests per second and latency of the experiment page under concurrent clients.

Usage: .venv/bin/python bench/dashboard_load.py [--clients 20] [--seconds 20] [--gunicorn-workers 3]
                                                [--database-url postgres://...]

A signed-in session; ``--clients`` threads on loopback each send GET requests back to back (a new
connection per request, as gunicorn's sync workers close them) for ``--seconds`` to each of: the
experiment page (summary tab of a 3-run comparison on 1,000 jobs), its status.json (what the page
polls every second while runs are unfinished) and its Gantt tab (1,000 bars). Prints requests per
second, median, 95th percentile and maximum latency, and errors. The load generator runs on the
same 2 cores as the server.
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import threading
import time
from urllib.parse import urlsplit

from dashboard_common import configure, experiment, gunicorn, rigid_inputs, session_cookie


def hammer(base: str, path: str, cookie: str, clients: int, seconds: float) -> tuple[list[float], int]:
    host = urlsplit(base)
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client() -> None:
        mine, bad = [], 0
        while time.monotonic() < stop:
            t = time.perf_counter()
            try:
                conn = http.client.HTTPConnection(host.hostname, host.port, timeout=30)
                conn.request("GET", path, headers={"Cookie": cookie})
                response = conn.getresponse()
                response.read()
                conn.close()
                if response.status != 200:
                    bad += 1
                    continue
            except OSError:
                bad += 1
                continue
            mine.append(time.perf_counter() - t)
        with lock:
            latencies.extend(mine)
            errors[0] += bad

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return latencies, errors[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--gunicorn-workers", type=int, default=3)
    ap.add_argument("--database-url", default=None)
    a = ap.parse_args()
    var = configure(a.database_url)
    from django.contrib.auth.models import User

    user = User.objects.create_user("bench", password="bench")
    exp = experiment(user, "load", *rigid_inputs(1000, 16), ["fifo", "srtf", "drf"])
    run = exp.runs.first()
    cookie = session_cookie(user)
    server, base = gunicorn(a.gunicorn_workers, var / "gunicorn.log")
    url = exp.get_absolute_url()
    db = "PostgreSQL" if a.database_url else "SQLite"
    print(f"\n{a.clients} clients, {a.seconds:g} s per page, gunicorn {a.gunicorn_workers} sync workers, {db}")
    print("\n| page | requests/s | median | p95 | max | errors |\n|---|---|---|---|---|---|")
    try:
        for label, path in (
            ("experiment page (summary tab)", url),
            ("status.json (polling)", f"{url}status.json"),
            ("Gantt tab, 1,000 bars", f"{url}?tab=gantt&run={run.pk}"),
        ):
            lat, errors = hammer(base, path, cookie, a.clients, a.seconds)
            lat.sort()
            p95 = lat[int(0.95 * (len(lat) - 1))]
            print(f"| {label} | {len(lat) / a.seconds:.1f} | {statistics.median(lat) * 1000:.0f} ms | "
                  f"{p95 * 1000:.0f} ms | {lat[-1] * 1000:.0f} ms | {errors} |", flush=True)  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"\n(date {time.strftime('%Y-%m-%d %H:%M')}; load average at the end {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores)")  # fmt: skip


if __name__ == "__main__":
    main()
