"""Record classes: the model's and the engine's value types, declared like dataclasses.

``@record`` makes a class from its annotated fields as ``@dataclass(frozen=True)`` does (and
``@record(frozen=False)`` as ``@dataclass``): the same ``__init__`` (positional or keyword arguments
in field order, defaults, ``field(default_factory=...)``), ``repr``, ``==`` (same class and equal
fields), ``hash`` (of the tuple of fields, frozen records only), ``__match_args__``, and a frozen
record refuses assignment with ``dataclasses.FrozenInstanceError``. ``dataclasses.replace``,
``fields`` and ``is_dataclass`` work on records too.

Why not ``dataclasses`` itself: every ``python -m scheduling`` process makes these classes, and
``@dataclass`` generates six methods per class from source text at import (about 0.6 ms a class,
15 ms for the 25 classes of a ``simulate`` run) and imports ``inspect``, ``ast``, ``dis`` and
``tokenize`` (about 8 ms), a quarter of a 300-job run's whole process
(bench/RESULTS-tiresias.md, "Records instead of dataclasses"). Here only ``__init__`` is
generated, by the same kind of code ``@dataclass`` writes (so constructing a record costs what
constructing the dataclass did); the other methods are shared and read each class's field list.
``dataclasses`` is imported only if something asks for ``__dataclass_fields__`` (``replace``,
``fields``): the field objects are then made once per class, by ``dataclasses`` from the same
declaration. A record class may declare ``__slots__`` (its fields, without defaults) and then pickles
by a ``__reduce__`` of its own (scheduling.runlog.JobRecord); or ``@record(slots=True)`` makes it a
class with a slot per field and no ``__dict__`` (as ``@dataclass(slots=True)``: a new class of the
same name, its defaults only in ``__init__``, not class attributes), which pickles by its
constructor (scheduling.model.Job: a trace holds one per job, a million at 1M jobs).
tests/test_records.py compares every record class with the dataclass of the same declaration.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from types import CodeType, FunctionType, MemberDescriptorType

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any, TypeVar, dataclass_transform, overload

    _C = TypeVar("_C", bound=type)
    _R = TypeVar("_R")
else:  # typing's decorators as they act at run time, for the type checker only
    from scheduling.runtime_typing import dataclass_transform, overload


class _Spec:
    """What ``field(...)`` declares (the subset of ``dataclasses.field`` the records use)."""

    __slots__ = ("compare", "default", "default_factory", "repr")

    def __init__(self, default: Any, default_factory: Any, repr: bool, compare: bool) -> None:
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.compare = compare


_MISSING: Any = object()


def field(
    *,
    default: Any = _MISSING,
    default_factory: Callable[[], Any] | Any = _MISSING,
    repr: bool = True,
    compare: bool = True,
) -> Any:
    """As ``dataclasses.field``: a default or a default factory, and whether the field is part of
    ``repr`` and of ``==``/``hash``."""
    if default is not _MISSING and default_factory is not _MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return _Spec(default, default_factory, repr, compare)


def names(cls: type) -> tuple[str, ...]:
    """The field names of a record class, in declaration order."""
    fields: tuple[str, ...] = cls.__record_fields__  # type: ignore[attr-defined]
    return fields


def replace(obj: _R, /, **changes: Any) -> _R:
    """A copy of the record ``obj`` with ``changes``, as ``dataclasses.replace`` (which works too,
    but imports ``dataclasses``)."""
    values = {name: getattr(obj, name) for name in names(type(obj)) if name not in changes}
    return type(obj)(**values, **changes)


@overload
def record(cls: _C, /) -> _C: ...
@overload
def record(  # noqa: F811 (overload: not typing's at run time)
    *, frozen: bool = True, slots: bool = False
) -> Callable[[_C], _C]: ...
@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: Any = None, /, *, frozen: bool = True, slots: bool = False) -> Any:  # noqa: F811
    """Make ``cls`` a record (frozen unless ``frozen=False``; with ``slots``, a class with a slot
    per field and no ``__dict__``); see the module docstring."""
    if cls is None:
        return lambda c: _make(c, frozen, slots)
    return _make(cls, frozen, slots)


def _make(cls: Any, frozen: bool, slots: bool = False) -> Any:
    # the class's own annotations (inspect.get_annotations would import inspect, which this avoids)
    annotations = cls.__dict__.get("__annotations__", {})  # noqa: RUF063
    declared = dict(cls.__dict__)  # the fields' class attributes: their defaults or field(...)
    if slots:
        cls = _slotted(cls, annotations)
    specs: dict[str, _Spec] = {}
    for name, annotation in annotations.items():
        if "ClassVar" in str(annotation):
            continue
        value = declared.get(name, _MISSING)
        if isinstance(value, MemberDescriptorType):  # a field of a class that declares __slots__
            value = _MISSING
        spec = value if isinstance(value, _Spec) else _Spec(value, _MISSING, True, True)
        if spec.default is not _MISSING and spec.default.__class__.__hash__ is None:  # as dataclass
            kind = type(spec.default)
            raise ValueError(f"mutable default {kind} for field {name} is not allowed: use default_factory")
        if slots:
            pass  # (a slot per field: the default lives in __init__ only)
        elif isinstance(value, _Spec):  # the class attribute becomes the default, as with dataclass
            if spec.default is _MISSING:
                delattr(cls, name)  # a factory: no class attribute
            else:
                setattr(cls, name, spec.default)
        specs[name] = spec
    fields = tuple(specs)
    _check_order(cls, specs)
    cls.__init__ = _init(cls, specs, frozen)
    cls.__record_fields__ = fields  # (name, ...) in declaration order
    cls.__match_args__ = fields  # type: ignore[misc]  # mypy: a special name, set here as dataclass does
    shown = tuple(n for n, s in specs.items() if s.repr)
    cls.__record_repr__ = (", ".join(f"{n}=%r" for n in shown), _key(list(shown)))  # one format per class
    compared = [n for n, s in specs.items() if s.compare]
    cls.__record_key__ = _key(compared)
    cls.__repr__ = _repr
    cls.__eq__ = _eq
    cls.__hash__ = _hash if frozen else None  # as dataclass: eq without frozen is unhashable
    if frozen:
        cls.__setattr__ = _frozen_setattr
        cls.__delattr__ = _frozen_delattr
    if slots and "__reduce__" not in cls.__dict__:
        cls.__reduce__ = _reduce  # (by the constructor: a frozen record's __setattr__ refuses)
    cls.__dataclass_fields__ = _DataclassFields()
    cls.__record_declaration__ = (annotations, dict(specs), frozen)
    return cls


def _slotted(cls: Any, annotations: dict[str, Any]) -> Any:
    """A class like ``cls`` with ``__slots__`` of its fields (as ``dataclass(slots=True)``): the
    same namespace without the fields' class attributes (their defaults), a new class object."""
    fields = tuple(n for n, a in annotations.items() if "ClassVar" not in str(a))
    namespace = {k: v for k, v in cls.__dict__.items() if k not in fields and k not in ("__dict__", "__weakref__")}
    namespace["__slots__"] = fields
    made = type(cls)(cls.__name__, cls.__bases__, namespace)
    made.__qualname__ = cls.__qualname__
    return made


def _reduce(self: Any) -> tuple[type, tuple[Any, ...]]:
    return (type(self), tuple([getattr(self, n) for n in type(self).__record_fields__]))


def _check_order(cls: Any, specs: dict[str, _Spec]) -> None:
    seen_default = False
    for name, spec in specs.items():
        has_default = spec.default is not _MISSING or spec.default_factory is not _MISSING
        if seen_default and not has_default:
            raise TypeError(f"non-default argument {name!r} follows default argument in {cls.__qualname__}")
        seen_default = seen_default or has_default


def _init(cls: Any, specs: dict[str, _Spec], frozen: bool) -> Any:
    """``__init__`` generated as ``@dataclass`` does: named parameters, one assignment per field
    (``object.__setattr__`` for frozen records), a factory called when its field is not given."""
    params: list[str] = []
    body: list[str] = []
    defaults: list[Any] = []  # the parameters' defaults, as the def below evaluates them
    namespace: dict[str, Any] = {"__record_set": object.__setattr__, "__record_missing": _MISSING}
    for name, spec in specs.items():
        if spec.default_factory is not _MISSING:
            namespace[f"__record_factory_{name}"] = spec.default_factory
            params.append(f"{name}=__record_missing")
            defaults.append(_MISSING)
            value = f"__record_factory_{name}() if {name} is __record_missing else {name}"
        else:
            if spec.default is not _MISSING:
                namespace[f"__record_default_{name}"] = spec.default
                params.append(f"{name}=__record_default_{name}")
                defaults.append(spec.default)
            else:
                params.append(name)
            value = name
        body.append(f"    __record_set(self, {name!r}, {value})" if frozen else f"    self.{name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "    pass") + "\n"
    SOURCES.add(source)
    code = _compiled().get(source)
    if code is None:
        exec(source, namespace)
        init = namespace["__init__"]
    else:  # the same def, compiled ahead (scheduling/record_inits.py): no compile() at import
        init = FunctionType(code, namespace, "__init__", tuple(defaults) or None)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    return init


SOURCES: set[str] = set()
"""Every ``__init__`` source ``_init`` made in this process (scheduling/record_inits_build.py)."""
_COMPILED: list[dict[str, CodeType]] = []


def _compiled() -> dict[str, CodeType]:
    """source -> code of the ``__init__`` defs compiled ahead in scheduling/record_inits.py: compiling
    them at each start-up took about 4 ms of a 70-ms ``simulate`` (bench/RESULTS.md)."""
    if not _COMPILED:
        try:
            from scheduling.record_inits import CODES
        except ImportError:  # pragma: no cover - the generated module is part of the package
            CODES = {}
        _COMPILED.append(CODES)
    return _COMPILED[0]


def _key(compared: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of compared fields, as dataclass's ``==`` and ``hash`` build it."""
    if len(compared) >= 2:
        return attrgetter(*compared)
    if compared:
        one = attrgetter(compared[0])
        return lambda self: (one(self),)
    return lambda self: ()


def _repr(self: Any) -> str:
    """``Name(field=value!r, ...)`` as dataclass's, by one ``%`` format of the shown fields' tuple."""
    fmt, shown = type(self).__record_repr__
    return f"{type(self).__qualname__}({fmt % shown(self)})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        key = self.__class__.__record_key__
        return key(self) == key(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(self.__class__.__record_key__(self))


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(f"cannot delete field {name!r}")


def as_dataclass(cls: type) -> Any:
    """The dataclass ``dataclasses`` makes from the record class's declaration (same fields,
    defaults, factories, ``repr``/``compare`` flags and frozenness)."""
    import dataclasses

    annotations, specs, frozen = cls.__dict__["__record_declaration__"]
    namespace: dict[str, Any] = {"__annotations__": dict(annotations), "__qualname__": cls.__qualname__}
    for name, spec in specs.items():
        kwargs: dict[str, Any] = {"repr": spec.repr, "compare": spec.compare}
        if spec.default is not _MISSING:
            kwargs["default"] = spec.default
        if spec.default_factory is not _MISSING:
            kwargs["default_factory"] = spec.default_factory
        namespace[name] = dataclasses.field(**kwargs)
    return dataclasses.dataclass(frozen=frozen)(type(cls.__name__, (), namespace))


class _DataclassFields:
    """``__dataclass_fields__`` of a record class: those of ``as_dataclass(cls)``, made the first
    time they are read (``dataclasses.replace``, ``fields``, ``is_dataclass``) and then kept on the
    class."""

    def __get__(self, instance: Any, owner: type) -> dict[str, Any]:
        fields: dict[str, Any] = as_dataclass(owner).__dataclass_fields__
        type.__setattr__(owner, "__dataclass_fields__", fields)
        return fields
