"""The input schema (scheduling/schema.py) drives the trace and cluster readers: their bounds,
choices, reading order and messages come from its tables."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling import records, schema
from scheduling.errors import InputError
from scheduling.loaders import cluster_from_dict, job_from_row, parse_trace
from scheduling.model import Job, Stage
from scheduling.values import integer, number, reader_of
from tests.scenarios import TINY_CLUSTER

CLUSTER = cluster_from_dict(TINY_CLUSTER)


def test_every_job_field_has_a_column_and_every_stage_field_an_entry():
    # Job.outcome is read from the `status` column (a status replay's; scheduling/status_replay.py)
    assert set(records.names(Job)) - {"outcome"} <= schema.KNOWN_COLUMNS
    assert "outcome" in records.names(Job) and "status" in schema.KNOWN_COLUMNS
    assert tuple(f.name for f in schema.STAGE_FIELDS) == records.names(Stage)
    tables = (
        schema.TRACE_COLUMNS,
        schema.STAGE_FIELDS,
        schema.CLUSTER_FIELDS,
        schema.SERVER_FIELDS,
        schema.TYPE_FIELDS,
    )
    assert all(f.kind in schema.KINDS for table in tables for f in table)
    assert schema.REQUIRED_COLUMNS == ("job_id", "arrival")


BOUNDED = [c for c in schema.TRACE_COLUMNS if c.kind in ("integer", "number")]


@pytest.mark.parametrize("column", BOUNDED, ids=lambda c: c.name)
def test_a_value_beyond_a_columns_bound_is_refused_naming_the_bound(column: schema.Field) -> None:
    above = column.maximum * 2 if column.kind == "number" else int(column.maximum) + 1
    for value in (above, str(above)):
        with pytest.raises(InputError) as exc:
            job_from_row({"job_id": "j", "arrival": 0, column.name: value}, CLUSTER)
        assert exc.value.field == column.name
        assert f"must be <= {column.maximum:g}" in exc.value.problem
    lowest = column.minimum or 0
    below = lowest if column.strict else lowest - (1 if column.kind == "integer" else 1e-9)
    if column.name != "arrival" or below < 0:
        with pytest.raises(InputError, match=r"must be >") as exc:
            job_from_row({"job_id": "j", "arrival": 0, column.name: below}, CLUSTER)
        assert exc.value.field == column.name


def test_a_row_with_several_problems_is_refused_for_the_first_column_of_the_table():
    bad = {"job_id": "j", "arrival": 0, "gpus": 0, "epochs": 0, "arch": "ring"}
    for order in (list(bad), list(reversed(bad))):
        row = {k: bad[k] for k in order}
        with pytest.raises(InputError) as exc:
            job_from_row(row, CLUSTER)
        assert exc.value.field == "arch"  # arch, epochs, gpus: the table's order, whatever the row's
    with pytest.raises(InputError) as exc:
        job_from_row({**bad, "colour": "red"}, CLUSTER)
    assert exc.value.field == "colour" and "unknown field" in exc.value.problem  # unknown columns first
    with pytest.raises(InputError) as exc:
        job_from_row({"job_id": "j", "epochs": 0}, CLUSTER)
    assert exc.value.field == "arrival"  # a missing required column comes in its place too


JSON_VALUES = st.one_of(
    st.integers(-(10**13), 10**13),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, -0.0, 1e-6, 9.99e-7, 1e7, 1e12, 10**12, 10**12 + 1, 10**9, 10**9 + 1, True, False, None]),
)


@settings(max_examples=300, deadline=None)
@given(value=JSON_VALUES)
def test_the_readers_shortcut_for_json_numbers_reads_as_number_and_integer_do(value: object) -> None:
    """values.reader_of accepts an in-bounds JSON number without number()/integer(): the same value or error."""
    fields = [*BOUNDED, *schema.STAGE_FIELDS, *(c for c in schema.CLUSTER_FIELDS if c.kind in ("integer", "number"))]
    for f in fields:
        full = integer if f.kind == "integer" else number

        def direct(f: schema.Field = f, full=full) -> object:
            if full is integer:
                return integer(value, f.name, minimum=int(f.minimum or 0), maximum=f.maximum)
            return number(value, f.name, minimum=f.minimum, strict=f.strict, maximum=f.maximum)

        def outcome(read) -> object:
            try:
                got = read()
                return (type(got), got)
            except InputError as exc:
                return str(exc)

        assert outcome(lambda f=f: reader_of(f)(value, f.name)) == outcome(direct), (f.name, value)


def test_json_and_csv_rows_read_by_the_table_give_the_same_jobs():
    rows = [
        {"job_id": "a", "arrival": 3, "arch": "allreduce", "epochs": 2, "chunks": 4, "batch_time": 6, "priority": 2},
        {"job_id": "b", "arrival": 0, "gpus": 2, "duration": 61, "group": "g", "restart_seconds": 30},
    ]
    header = sorted({k for r in rows for k in r})
    csv_text = ",".join(header) + "\n" + "\n".join(",".join(str(r.get(h, "")) for h in header) for r in rows) + "\n"
    assert parse_trace(json.dumps(rows), CLUSTER, "t.json", "json") == parse_trace(csv_text, CLUSTER, "t.csv", "csv")
