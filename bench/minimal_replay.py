"""A minimal exact replay of fifo and srtf on a rigid GPU trace: a plain heap-based pool simulator.

Usage: python bench/minimal_replay.py --trace TRACE.csv --servers N --algorithm fifo|srtf --out OUT.csv

It reads an imported trace (``job_id, arrival, gpus, duration`` columns, duration in seconds,
``--slot-seconds`` long slots) and replays it on N servers of 8 GPUs with the rules our ``fifo`` and
``srtf`` state (scheduling/algorithms/baselines.py), written down as plainly as possible: pool
placement (the first server that holds the whole job, else first-fit over the servers, as many
GPUs on each as are free); fifo starts the queue in arrival order until its head does not fit;
srtf sorts the active jobs by remaining slots at every arrival and completion (a stable sort of
the previous order, new jobs appended), keeps a running job where it is, places a waiting job in
free GPUs, else evicts the running jobs after it, the last first, until it fits (none if even all
of them would not do). Writes ``job_id,completion`` per job; bench/scale_million.py compares it
job by job with our engine's result.
"""

from __future__ import annotations

import argparse
import csv
import heapq
import math

G = 8  # GPUs per server


def load(path: str, slot: float) -> list[tuple[int, str, int, int]]:
    """(arrival slot, job id, GPUs, duration in slots) per job, by arrival then job id."""
    with open(path, newline="") as f:
        rows = csv.DictReader(f)
        jobs = [
            (int(r["arrival"]), r["job_id"], int(r["gpus"]), max(1, math.ceil(float(r["duration"]) / slot - 1e-9)))
            for r in rows
        ]
    return sorted(jobs)


def place(free: list[int], n: int) -> list[tuple[int, int]] | None:
    """Pool placement of n one-GPU workers: [(server, GPUs)], booked in ``free``; None if it does not fit."""
    for s, f in enumerate(free):
        if f >= n:
            free[s] -= n
            return [(s, n)]
    if sum(free) < n:
        return None
    parts = []
    for s, f in enumerate(free):
        k = min(n, f)
        if k:
            free[s] -= k
            parts.append((s, k))
            n -= k
            if n == 0:
                break
    return parts


def release(free: list[int], parts: list[tuple[int, int]]) -> None:
    for s, k in parts:
        free[s] += k


def fifo(jobs: list[tuple[int, str, int, int]], servers: int) -> dict[str, int]:
    free, done, queue, heap = [G] * servers, {}, [], []  # heap: (end, job id, parts)
    i, head, t = 0, 0, jobs[0][0] if jobs else 0
    while True:
        while heap and heap[0][0] <= t:
            end, job_id, parts = heapq.heappop(heap)
            release(free, parts)
            done[job_id] = end
        while i < len(jobs) and jobs[i][0] <= t:
            queue.append(jobs[i])
            i += 1
        while head < len(queue) and (parts := place(free, queue[head][2])) is not None:
            heapq.heappush(heap, (t + queue[head][3], queue[head][1], parts))
            head += 1
        nxt = [x for x in (heap[0][0] if heap else None, jobs[i][0] if i < len(jobs) else None) if x is not None]
        if not nxt:
            return done
        t = min(nxt)


def srtf(jobs: list[tuple[int, str, int, int]], servers: int) -> dict[str, int]:
    free, done, order = [G] * servers, {}, []  # order: the active job ids, in the previous decision's order
    left, gpus, held = {}, {}, {}  # job id -> remaining slots, GPUs, parts held (running jobs only)
    i, t, last = 0, jobs[0][0] if jobs else 0, 0
    while True:
        for job_id in held:  # progress since the last decision: one unit per slot
            left[job_id] -= t - last
        for job_id in [j for j in held if left[j] <= 0]:
            release(free, held.pop(job_id))
            done[job_id] = t
        order = [j for j in order if j not in done]
        while i < len(jobs) and jobs[i][0] <= t:
            _a, job_id, gpus[job_id], left[job_id] = jobs[i]
            order.append(job_id)
            i += 1
        order.sort(key=left.__getitem__)  # stable: ties stay in the previous order
        was, booked = held, dict(held)  # every running job stays booked until evicted
        for k, job_id in enumerate(order):
            if job_id in booked:
                continue
            parts = None
            if job_id in was and all(free[s] >= n for s, n in was[job_id]):
                parts = was[job_id]  # evicted earlier in this walk: back where it was
                for s, n in parts:
                    free[s] -= n
            if parts is None:
                parts = place(free, gpus[job_id])
            if parts is None:
                later = [j for j in reversed(order[k + 1 :]) if j in booked]
                if sum(free) + sum(gpus[j] for j in later) >= gpus[job_id]:
                    trial = list(free)
                    for n, victim in enumerate(later, 1):
                        release(trial, booked[victim])
                        if (parts := place(trial, gpus[job_id])) is not None:
                            free[:] = trial
                            for j in later[:n]:
                                del booked[j]
                            break
            if parts is not None:
                booked[job_id] = parts
        held, last = booked, t
        nxt = [t + left[j] for j in held] + ([jobs[i][0]] if i < len(jobs) else [])
        if not nxt:
            return done
        t = min(nxt)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trace", required=True)
    ap.add_argument("--servers", type=int, required=True)
    ap.add_argument("--slot-seconds", type=float, default=60.0)
    ap.add_argument("--algorithm", choices=("fifo", "srtf"), required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    done = (fifo if a.algorithm == "fifo" else srtf)(load(a.trace, a.slot_seconds), a.servers)
    with open(a.out, "w") as f:
        f.writelines(f"{job_id},{c}\n" for job_id, c in sorted(done.items()))


if __name__ == "__main__":
    main()
