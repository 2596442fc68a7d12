"""Hostile inputs: every loader answers a crafted file with a clear InputError, in time that grows
with the file's size, never with its square (docs/security.md, "Hostile inputs").

The size bounds below are generous (a loaded two-core machine); the quadratic checks these tests
were written against took 40 s and more on the same files.
"""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduling.errors import InputError
from scheduling.loaders import parse_cluster, parse_trace
from tests.scenarios import TINY_CLUSTER

N = 40_000  # entries of a hostile file (a few hundred KB)
BOUND = 8.0  # seconds


def cluster_text(**changes) -> str:
    doc = json.loads(json.dumps(TINY_CLUSTER))
    doc.update(changes)
    return json.dumps(doc)


def refused_quickly(load) -> str:
    began = time.perf_counter()
    with pytest.raises(InputError) as exc:
        load()
    assert time.perf_counter() - began < BOUND
    return str(exc.value)


def test_a_header_of_forty_thousand_columns_is_refused_quickly():
    header = ",".join(["job_id", "arrival", *(f"c{i}" for i in range(N)), "c7"])
    message = refused_quickly(lambda: parse_trace(header + "\n", parse_cluster(cluster_text()), "wide.csv"))
    assert "duplicate column 'c7'" in message
    assert "line 1" in message


def test_a_wide_header_without_job_id_names_only_a_few_columns():
    header = ",".join(f"c{i}" for i in range(N))
    message = refused_quickly(lambda: parse_trace(header + "\nx\n", parse_cluster(cluster_text()), "wide.csv"))
    assert "missing column 'job_id'" in message
    assert f"({N - 20:,} more)" in message
    assert len(message) < 1000


def test_forty_thousand_resources_with_one_repeated_are_refused_quickly():
    resources = [f"r{i}" for i in range(N)] + ["r5"]
    message = refused_quickly(lambda: parse_cluster(cluster_text(resources=resources), "c.json"))
    assert "duplicate resource 'r5'" in message


def test_forty_thousand_servers_with_one_repeated_id_are_refused_quickly():
    servers = [{"id": f"s{i}", "capacity": {"gpu": 1}} for i in range(N)] + [
        {"id": f"s{N - 1}", "capacity": {"gpu": 1}}
    ]
    message = refused_quickly(lambda: parse_cluster(cluster_text(servers=servers), "c.json"))
    assert f"duplicate server id 's{N - 1}'" in message


def test_forty_thousand_worker_types_with_one_repeated_id_are_refused_quickly():
    types = [{"id": f"w{i}", "demand": {"gpu": 1}} for i in range(N)] + [{"id": f"w{N - 1}", "demand": {"gpu": 1}}]
    message = refused_quickly(lambda: parse_cluster(cluster_text(worker_types=types), "c.json"))
    assert f"duplicate type id 'w{N - 1}'" in message


def test_rows_naming_servers_of_a_large_cluster_load_in_time_linear_in_the_trace():
    # Every row names a server in its upload_delay object: each row used to rebuild the set of the
    # cluster's 40,000 server ids.
    cluster = parse_cluster(
        cluster_text(servers=[{"id": "s", "count": N, "capacity": {"gpu": 4, "cpu": 16, "bw": 20}}])
    )
    job = {"arrival": 0, "arch": "allreduce", "batch_time": 6, "upload_delay": {"s-1": 1}}
    rows = [{"job_id": f"j{i}", **job} for i in range(2_000)]
    rows.append({"job_id": "bad", **job, "upload_delay": {"nowhere": 1}})
    message = refused_quickly(lambda: parse_trace(json.dumps(rows), cluster, "t.json", "json"))
    assert "job 'bad'" in message and "unknown server 'nowhere'" in message


def test_json_nested_a_hundred_thousand_deep_is_refused():
    message = refused_quickly(lambda: parse_cluster("[" * 100_000 + "]" * 100_000, "deep.json"))
    assert "nested too deeply" in message


def test_a_number_of_a_million_digits_is_refused():
    message = refused_quickly(lambda: parse_cluster('{"slot_seconds": ' + "9" * 1_000_000 + "}", "big.json"))
    assert "big.json" in message


hostile_text = st.one_of(
    st.text(max_size=300),
    st.builds(lambda n, c: c * n, st.integers(1, 5_000), st.sampled_from(["[", "{", ",", '"', "\\", "\n", "a,"])),
    st.builds(
        lambda head, body: head + "\n" + body,
        st.lists(st.sampled_from(["job_id", "arrival", "gpus", "a.b", "a", "", "x"]), max_size=30).map(",".join),
        st.text(alphabet='0123456789,.-e\n"x\x00\ud800', max_size=300),
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=hostile_text, fmt=st.sampled_from(["csv", "json"]))
def test_any_text_loads_or_is_refused_with_an_input_error(content, fmt):
    cluster = parse_cluster(cluster_text())
    began = time.perf_counter()
    try:
        parse_trace(content, cluster, "fuzz." + fmt, fmt)
        parse_cluster(content, "fuzz.json")
    except InputError as exc:
        assert "fuzz." in str(exc)
    assert time.perf_counter() - began < BOUND
