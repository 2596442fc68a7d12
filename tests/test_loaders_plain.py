"""The plain CSV path of parse_trace reads every row as the general path does, errors included."""

from __future__ import annotations

import csv
import io

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from scheduling.errors import InputError
from scheduling.loaders import cluster_from_dict, parse_trace
from scheduling.model import ARCHITECTURES
from scheduling.plain_csv import PlainCsv
from tests.scenarios import TINY_CLUSTER

CLUSTER = cluster_from_dict(TINY_CLUSTER)  # 60-s slots, 8 GPUs, worker types w1 and w2

ODD = ["", " ", "0", "-0", "1", "2", "8", "9", "60", "1e3", "1.0", "1.5", "+3", "1_000", " 7 ", "0x10", "abc",
       "nan", "inf", "-inf", "1e400", "-1", "1e-7", "0.000001", "10000000", "1e12", "1e13", "999999999",
       "1000000001", "4" * 30, "\u0663", "w1", "ring"]  # fmt: skip
"""Values that are out of bounds, unusual but valid, or no number at all."""
ODD_VALUES = st.one_of(
    st.sampled_from(ODD),
    st.integers(-3, 2 * 10**12).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(alphabet="0123456789.e-+_ ", max_size=6),
)


def ints(low: int, high: int) -> st.SearchStrategy[str]:
    return st.integers(low, high).map(str)


def numbers(low: float, high: float) -> st.SearchStrategy[str]:
    return st.one_of(st.floats(low, high).map(repr), st.integers(int(low) + 1, int(high)).map(str))


CLEAN = {  # valid values of each column (empty: not given)
    "job_id": st.text(alphabet="abcdefgh-", min_size=2, max_size=6),
    "arrival": st.one_of(ints(0, 50), ints(0, 10**9)),
    "arch": st.sampled_from(ARCHITECTURES),
    "weight": numbers(0, 100),
    "priority": numbers(0, 100),
    "decay": numbers(0, 6),
    "target": numbers(0, 1000),
    "epochs": ints(1, 100),
    "chunks": ints(1, 100),
    "minibatches": ints(1, 100),
    "batch_time": numbers(1e-6, 1e7),
    "ps_update": numbers(1e-6, 1e7),
    "gradient_mb": numbers(0, 1000),
    "gpus": ints(1, 8),
    "gpu_request": ints(1, 8),
    "duration": numbers(1e-3, 1e6),
    "iterations": ints(0, 10**6),
    "predicted_iterations": ints(0, 10**6),
    "work": numbers(1e-3, 1e6),
    "chunk_gb": numbers(1e-3, 1e3),
    "restart_seconds": numbers(0, 604800),
    "checkpoint_gb": numbers(0, 1000),
    "group": st.sampled_from(["g", "x y", "6214e9"]),
    "user": st.sampled_from(["u", "v"]),
    "model": st.sampled_from(["ResNet-50", "VGG"]),
    "status": st.sampled_from(["Pass", "Killed"]),
    "slot_seconds": st.sampled_from(["60", "60.0"]),
    "": st.just(""),  # an unnamed column (a trailing comma)
}
OPTIONAL = sorted(set(CLEAN) - {"job_id", "arrival"})


@st.composite
def traces(draw: st.DrawFn) -> tuple[list[str], str]:
    """A CSV trace of plain columns: rows of valid values, some with one value blank or odd."""
    header = ["job_id", "arrival", *draw(st.lists(st.sampled_from(OPTIONAL), unique=True, max_size=8))]
    header = draw(st.permutations(header))
    rows = []
    for _ in range(draw(st.integers(1, 5))):
        row = [draw(st.one_of(CLEAN[h], st.just(""))) if h not in ("job_id", "arrival") else draw(CLEAN[h])
               for h in header]  # fmt: skip
        if draw(st.booleans()):
            row[draw(st.integers(0, len(row) - 1))] = draw(ODD_VALUES)
        rows.append(row)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    return header, out.getvalue()


def outcome(text: str, plain: bool, convert: bool) -> list[str] | str:
    """The jobs as their reprs (1 and 1.0 differ there; the reprs are the trace's digest), or the error."""
    with pytest.MonkeyPatch.context() as patch:
        if not plain:
            patch.setattr(PlainCsv, "of", classmethod(lambda cls, header, cluster: None))
        try:
            return [repr(job) for job in parse_trace(text, CLUSTER, "t.csv", "csv", convert_slots=convert)]
        except (InputError, ArithmeticError) as exc:
            return f"{type(exc).__name__}: {exc}"


@settings(max_examples=800, deadline=None)
@given(traces(), st.booleans())
@example((["job_id", "arrival", "gpus", "duration"], "job_id,arrival,gpus,duration\na,1e3,2,61\nb,0,1,60\n"), False)
@example((["job_id", "arrival", "duration"], "job_id,arrival,duration\na,0,60\n"), False)
@example((["job_id", "arrival", "epochs", ""], "job_id,arrival,epochs,\na,0,2,\nb,1,2,x\n"), False)
@example((["job_id", "arrival", "epochs", "chunks"], "job_id,arrival,epochs,chunks\na,0,1000000000000,2\n"), False)
@example((["job_id", "arrival", "slot_seconds"], "job_id,arrival,slot_seconds\na,3,30\nb,5,30\n"), True)
def test_the_plain_path_reads_every_row_as_the_general_path(trace: tuple[list[str], str], convert: bool) -> None:
    header, text = trace
    assert PlainCsv.of(header, CLUSTER) is not None  # the plain path is the one compared
    assert outcome(text, True, convert) == outcome(text, False, convert)


def test_a_column_the_plain_path_does_not_read_sends_the_trace_to_the_general_path() -> None:
    for column in ("batch_time.w1", "upload_delay", "stages", "worker_demand", "utility", "colour"):
        assert PlainCsv.of(["job_id", "arrival", column], CLUSTER) is None
    text = "job_id,arrival,batch_time.w1\na,0,6\n"
    assert parse_trace(text, CLUSTER)[0].batch_time == {"w1": 0.1}


BOUNDS = ["1000000000", "1000000001", "1000000000000", "1000000000001", "1000000", "1000001", "1e-6", "9.99e-7",
          "1e7", "10000000.000001", "1e12", "1.0000000001e12", "120.000000006", "120.00000006", "59.99999999",
          "0.0", "-0.0", "00", "1e-320", "60000000000"]  # fmt: skip
"""Values at the bounds of the columns (MAX_SLOTS, MAX_WORK, MAX_WORKERS, STEP_SECONDS, MAX_AMOUNT) and
at the rounding of durations to 60-s slots."""


@pytest.mark.parametrize("column", sorted(set(CLEAN) - {""}))
def test_every_odd_or_bound_value_of_a_column_reads_as_on_the_general_path(column: str) -> None:
    for base in ({"job_id": "j", "arrival": "0"}, {"job_id": "j", "arrival": "0", "gpus": "1", "duration": "60"}):
        for value in (*ODD, *BOUNDS):
            row = {**base, column: value}
            text = ",".join(row) + "\n" + ",".join(row.values()) + "\n"
            assert outcome(text, True, False) == outcome(text, False, False), (column, value)
