"""Helpers shared by the dashboard tests: a price-recording test algorithm, a slow one, posting forms."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np
from django.core.files.uploadedfile import SimpleUploadedFile

from scheduling import registry
from scheduling.prices import PriceLog
from scheduling.registry import AlgorithmSpec, Param


class Priced:
    """fifo, plus a PriceLog of a made-up price per (resource, server, slot) raised at each arrival:
    enough to exercise the price pages with a real ``mlsched.prices/3`` document."""

    def __init__(self, instance, params, rng):
        fifo = registry.get("fifo")
        self.inner = fifo.build(instance, fifo.parse_params({}), 0)
        servers = [s.id for s in instance.cluster.servers]
        self.log = PriceLog(["gpu", "cpu"], servers, slots=8, label="p")
        self.prices = np.zeros(self.log.shape)

    def decide(self, view):
        for k, job in enumerate(view.arrived):
            h = (view.t + k) % self.prices.shape[1]
            self.prices[0, h, min(view.t, 7) :] += 1.5
            self.log.record(view.t, job.job_id, admitted=k % 2 == 0, prices=self.prices)
        return self.inner.decide(view)

    def report(self):
        return {**self.inner.report(), "prices": self.log.to_dict()}


PRICED = AlgorithmSpec("priced", "test: fifo with a price log", "-", "-", factory=Priced, prices=True)


class Slow:
    """fifo that sleeps ``delay`` seconds at every decision and wakes every slot: a long run whose
    length is simulated work (decisions), for cancellation and worker-kill tests."""

    def __init__(self, instance, params, rng):
        fifo = registry.get("fifo")
        self.inner = fifo.build(instance, fifo.parse_params({}), 0)
        self.delay = params["delay"]

    def decide(self, view):
        time.sleep(self.delay)
        d = self.inner.decide(view)
        return dataclasses.replace(d, wake_at=view.t + 1)  # keeps a change-based decision's changes

    def report(self):
        return self.inner.report()


SLOW = AlgorithmSpec(
    "slow", "test: fifo, slowly", "-", "-", factory=Slow, params=(Param("delay", float, 0.2, "seconds per decision"),)
)


def upload_data(cluster, trace, trace_name="trace.csv", algorithms=("fifo",), **extra):
    return {
        "source": "upload",
        "cluster_file": SimpleUploadedFile("cluster.json", cluster.encode() if isinstance(cluster, str) else cluster),
        "trace_file": SimpleUploadedFile(trace_name, trace.encode() if isinstance(trace, str) else trace),
        "algorithms": list(algorithms),
        "seed": "0",
        **extra,
    }


CHROMIUM_ARGS = [  # Debian's Chromium on a machine with no network beyond loopback (DESIGN section 7)
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]


def sign_in(page, live_server, username="alice", password="alice-password-1"):
    """Sign ``page`` in on the live server (the ``user`` fixture's account) and return it."""
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("#login-form button[type=submit]")
    page.wait_for_selector("#account-link")
    return page


def single_entries(prices: dict[str, Any]) -> dict[str, Any]:
    """A log of runs of slots (mlsched.prices/2 or /3) as results written before the runs stored it
    (mlsched.prices/1, single entries; a rebase there resets every slot, as in /2)."""
    decisions = [
        {**d, "changes": [[r, h, s, v] for r, h, s0, n, v in d["changes"] for s in range(s0, s0 + n)]}
        for d in prices["decisions"]
    ]
    return {**prices, "schema": "mlsched.prices/1", "decisions": decisions}
