"""Records (scheduling/records.py) behave as the dataclasses of the same declaration.

Every record class of the package is compared with the twin that ``dataclasses.dataclass`` makes
from its declaration: constructor signature, defaults and factories, ``repr``, ``==``, ``hash``,
``__match_args__``, frozen assignment; and ``dataclasses.replace``/``fields``/``is_dataclass`` work
on records.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pickle
from types import MappingProxyType
from typing import Any

import pytest

from scheduling import records
from scheduling.records import field, record

# The modules whose classes are records (every `simulate` process loads them).
MODULES = (
    "scheduling.model",
    "scheduling.engine",
    "scheduling.views",
    "scheduling.runlog",
    "scheduling.registry",
    "scheduling.speed",
    "scheduling.metrics",
    "scheduling.loaders",
    "scheduling.job_rows",
    "scheduling.feasibility",
    "scheduling.cluster_spec",
    "scheduling.values",
    "scheduling.pipeline",
    "scheduling.algorithms.common",
    "scheduling.algorithms.tiresias",
)


def record_classes() -> list[type]:
    found = []
    for name in MODULES:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == name and "__record_fields__" in vars(value):
                found.append(value)
    return found


CLASSES = record_classes()


def twin(cls: type) -> Any:
    """The dataclass of the same declaration as ``cls``."""
    return records.as_dataclass(cls)


def required_values(cls: type, salt: int) -> dict[str, Any]:
    """A value for every field without a default (hashable, distinct per field and salt)."""
    out = {}
    for f in dataclasses.fields(twin(cls)):
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            out[f.name] = (f.name, salt)
    return out


def test_the_records_are_the_classes_a_run_makes():
    names = {c.__qualname__ for c in CLASSES}
    assert {"Job", "Cluster", "Server", "Allocation", "JobView", "View", "Decision", "JobRecord", "Run"} <= names
    # (the engine's per-job state, scheduling.jobstate.JobState, is a plain class with __slots__)
    assert len(CLASSES) == 28


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__qualname__)
def test_a_record_behaves_as_the_dataclass_of_its_declaration(cls: type):
    dc = twin(cls)
    params = inspect.signature(cls).parameters
    dc_params = inspect.signature(dc).parameters
    assert list(params) == list(dc_params)
    for name, p in params.items():
        expected = dc_params[name].default
        if repr(expected) == "<factory>":  # a factory: called at construction, compared below
            continue
        assert p.default is expected or p.default == expected, name
    assert cls.__match_args__ == dc.__match_args__

    values = required_values(cls, 1)
    a, b, other, d = cls(**values), cls(**values), cls(**required_values(cls, 2)), dc(**values)
    assert repr(a) == repr(d)
    for f in dataclasses.fields(dc):  # defaults and factories give the same values
        assert getattr(a, f.name) == getattr(d, f.name), f.name
    assert a == b and (a == d) is False  # equal fields, same class; another class
    assert a != other or not values  # other required values (a class whose fields all have defaults: none)
    assert repr(cls(*values.values())) == repr(a)  # positional arguments
    frozen = cls.__dict__["__record_declaration__"][2]
    if frozen:
        try:
            expected_hash = hash(d)
        except TypeError:  # a field holds a mapping: the dataclass is unhashable too
            with pytest.raises(TypeError):
                hash(a)
        else:
            assert hash(a) == hash(b) == expected_hash
        with pytest.raises(dataclasses.FrozenInstanceError):
            a.__setattr__(next(iter(values or {"x": 0})), 0)
    else:
        assert cls.__hash__ is None and dc.__hash__ is None
    assert dataclasses.is_dataclass(cls) and tuple(f.name for f in dataclasses.fields(a)) == records.names(cls)
    if any(isinstance(getattr(a, n), MappingProxyType) for n in records.names(cls)):
        with pytest.raises(TypeError):  # as the dataclass: a read-only mapping does not pickle
            pickle.dumps(a)
    else:
        assert pickle.loads(pickle.dumps(a)) == a


def test_replace_makes_a_changed_copy_both_ways():
    from scheduling.model import Job, Utility

    job = Job("j1", 3, utility=Utility(2.0))
    for replace in (records.replace, dataclasses.replace):
        moved = replace(job, arrival=7)
        assert (moved.job_id, moved.arrival, moved.utility) == ("j1", 7, Utility(2.0))
        assert job.arrival == 3 and moved != job
    with pytest.raises(TypeError):
        records.replace(job, no_such_field=1)


def test_factories_give_each_instance_its_own_value_and_a_given_value_wins():
    @record(frozen=False)
    class Box:
        """A mutable record with a factory."""

        items: list[int] = field(default_factory=list)
        label: str = "x"

    one, two = Box(), Box()
    one.items.append(1)
    assert two.items == [] and Box([5]).items == [5] and Box(label="y").label == "y"
    assert "items" not in vars(Box)  # no class attribute for a factory field, as dataclass


def test_repr_and_compare_can_leave_a_field_out():
    @record
    class Tagged:
        """A field outside repr and ==."""

        value: int
        note: str = field(default="", repr=False, compare=False)

    assert repr(Tagged(1, "a")) == "test_repr_and_compare_can_leave_a_field_out.<locals>.Tagged(value=1)"
    assert Tagged(1, "a") == Tagged(1, "b") and hash(Tagged(1, "a")) == hash((1,))


def test_a_field_without_default_after_one_with_is_refused():
    with pytest.raises(TypeError, match="non-default argument 'b'"):

        @record
        class Bad:
            """Out of order."""

            a: int = 0
            b: int


def test_a_mutable_default_is_refused_as_dataclass_refuses_it():
    with pytest.raises(ValueError, match="mutable default"):

        @record
        class Shared:
            """One list for every instance."""

            items: list[int] = []  # noqa: RUF012


@record(slots=True)
class Point:
    """A frozen record with slots, defaults and a factory (module level: pickled by reference)."""

    x: int
    y: int = 2
    tags: tuple[str, ...] = field(default_factory=tuple)


def test_a_slotted_record_has_a_slot_per_field_and_no_dict():
    p = Point(1)
    assert Point.__slots__ == ("x", "y", "tags") and not hasattr(p, "__dict__")
    assert (p.x, p.y, p.tags) == (1, 2, ()) and repr(p) == "Point(x=1, y=2, tags=())"
    assert "y" not in Point.__dict__ or not isinstance(Point.__dict__["y"], int)  # the default: in __init__ only
    assert pickle.loads(pickle.dumps(Point(3, 4, ("a",)))) == Point(3, 4, ("a",))
    assert dataclasses.replace(p, y=5) == Point(1, 5) and records.replace(p, x=0) == Point(0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        object.__setattr__(p, "z", 0)  # no __dict__: no other attribute


def test_the_models_jobs_are_slotted():
    from scheduling.model import Job, Utility

    for cls in (Job, Utility):
        assert not hasattr(cls(*required_values(cls, 0).values()), "__dict__"), cls
    assert Job.__slots__ == records.names(Job)
