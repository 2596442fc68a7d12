"""The one registry of algorithms. The CLI listing, the web forms and docs/algorithms.md derive from it.

Each entry declares its parameters (type, default, range, help) and the model features it needs;
an instance lacking a feature is rejected with a message saying which and why.

The registry is lazy: an entry may name its factory as ``"module:function"``, imported when the
algorithm is first built, so that listing the algorithms (CLI, forms, docs) or running one of them
imports no other algorithm's module (nor SciPy, scikit-learn, ...). The paper packages declare their
entries in light modules (``oasis/spec.py``, ``edge/spec.py``, ``asrpt/spec.py``, ``zhou/__init__.py``).

Algorithms of other packages (plugins: the entry-point group ``mlsched.algorithms`` and the modules
named in ``MLSCHED_PLUGINS``, scheduling/plugins.py, docs/plugins.md) are loaded after the built-in
ones, only when a name is not built-in or when every entry is listed: running a built-in algorithm
never scans the installed packages.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping

from scheduling.engine import Algorithm
from scheduling.errors import InputError, UnsupportedInstance
from scheduling.lazy import LazyGenerator
from scheduling.model import Instance
from scheduling.records import field, record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)

if TYPE_CHECKING:
    from typing import Any, cast

    import numpy as np
else:
    from scheduling.runtime_typing import cast


Factory = Callable[[Instance, Mapping[str, "Any"], "np.random.Generator"], Algorithm]


@record
class Param:
    """One parameter of an algorithm: type, default, range and help."""

    name: str
    type: type  # int, float, bool or str
    default: Any
    help: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()
    # Further checks of a parsed value (e.g. a list's syntax); raises InputError on field "param <name>".
    check: Callable[[Any], object] | None = None

    def parse(self, raw: Any) -> Any:
        """A value of the declared type within range, from a CLI/form string or a JSON value."""
        field_name = f"param {self.name}"
        try:
            if self.type is bool:
                if isinstance(raw, bool):
                    value: Any = raw
                elif str(raw).strip().lower() in ("1", "true", "yes", "on"):
                    value = True
                elif str(raw).strip().lower() in ("0", "false", "no", "off"):
                    value = False
                else:
                    raise ValueError
            elif self.type is int:
                value = float(raw)
                if value.is_integer():
                    value = int(value)
                elif math.isfinite(value):
                    raise ValueError
            elif self.type is float:
                value = float(raw)
            else:
                value = str(raw)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"{raw!r} is not a {self.type.__name__}", field=field_name) from None
        if isinstance(value, float) and not math.isfinite(value):  # NaN passes every range check
            raise InputError(f"{raw!r} is not a finite number", field=field_name)
        if self.min is not None and value < self.min:
            raise InputError(f"{value!r} is below the minimum {self.min:g}", field=field_name)
        if self.max is not None and value > self.max:
            raise InputError(f"{value!r} is above the maximum {self.max:g}", field=field_name)
        if self.choices and value not in self.choices:
            raise InputError(f"{value!r} is not one of {', '.join(self.choices)}", field=field_name)
        if self.check is not None:
            self.check(value)
        return value

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type.__name__,
            "default": self.default,
            "min": self.min,
            "max": self.max,
            "choices": list(self.choices),
            "help": self.help,
        }


@record
class Feature:
    """A model feature an algorithm may need; ``missing`` says why an instance lacks it, or None."""

    name: str
    description: str
    missing: Callable[[Instance], str | None]


FAILURE_AWARE = frozenset(
    {"fifo", "srtf", "tiresias", "drf", "antman", "spjf", "spwf", "wcs-duration", "wcs-workload", "wcs-subtime"}
)
"""Algorithms that run under the cluster's failure trace (scheduling.failures): they place on the
engine's ledgers, where a down server is booked in full, and re-place the jobs a failure stopped.
Others are refused with a clear message rather than failing half-way."""


@record
class AlgorithmSpec:
    """An algorithm's registry entry: what it is, its parameters, what it needs, its factory."""

    name: str
    summary: str  # one line
    semantics: str  # exact behaviour: worker/PS counts and types, when it re-decides, preemption
    reference: str  # paper and section
    factory: Factory | str  # or "module:function", imported at the first build (see the module docstring)
    params: tuple[Param, ...] = ()
    needs: tuple[Feature, ...] = ()
    kind: str = "baseline"  # "paper" | "baseline" | "reference"
    extra: Mapping[str, Any] = field(default_factory=dict)
    # Checks across parameters (e.g. workers_min <= workers_max), on the parsed values; raises
    # InputError naming the parameter. Run by parse_params, so forms, the API and the CLI refuse
    # bad combinations before anything is stored or queued.
    check: Callable[[Mapping[str, Any]], None] | None = None
    # False for offline references (e.g. an optimum over the whole trace): they see every job by
    # definition. An online algorithm decides at slot t from jobs arrived by t and the instance's
    # separate history only (DESIGN section 9; tests/test_lookahead.py).
    online: bool = True
    # True if its result carries a price log (``prices``, scheduling/prices.py) on every instance it
    # runs: the dashboard's prices tab offers these runs without opening every result
    # (tests/test_presets.py checks it against the results).
    prices: bool = False
    # True if it may learn from the instance's separate history (``Instance.history``: A-SRPT's
    # predictors, OASiS's bounds=history). Runs of a preset without a history file of their own
    # (``compare --preset``, the dashboard's preset experiments) give it the preset's own history:
    # the same preset drawn from another seed (``presets.own_history``).
    history: bool = False

    def parse_params(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        known = {p.name: p for p in self.params}
        for key in raw:
            if key not in known:
                names = ", ".join(known) or "none"
                raise InputError(f"unknown parameter for {self.name} (parameters: {names})", field=f"param {key}")
        parsed = {p.name: p.parse(raw[p.name]) if p.name in raw else p.default for p in self.params}
        if self.check is not None:
            self.check(parsed)
        return parsed

    def unsupported(self, instance: Instance) -> str | None:
        if instance.cluster.failures and self.name not in FAILURE_AWARE:
            return (
                f"{self.name} does not run under server failures (the cluster's failures or failure_model): "
                f"it plans on a ledger of its own; algorithms that do: {', '.join(sorted(FAILURE_AWARE))}"
            )
        for feature in self.needs:
            why = feature.missing(instance)
            if why:
                return f"{self.name} needs {feature.description}: {why}"
        return None

    def build(self, instance: Instance, params: Mapping[str, Any], seed: int) -> Algorithm:
        why = self.unsupported(instance)
        if why:
            raise UnsupportedInstance(why)
        # numpy's default_rng(seed), created when the algorithm first draws (fifo on rigid jobs never does).
        return self.make(instance, params, cast("np.random.Generator", LazyGenerator(seed)))

    @property
    def make(self) -> Factory:
        """The factory, imported first if the entry names it as "module:function"."""
        if not isinstance(self.factory, str):
            return self.factory
        module, _, name = self.factory.partition(":")
        factory: Factory = getattr(importlib.import_module(module), name)
        return factory

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "summary": self.summary,
            "semantics": self.semantics,
            "reference": self.reference,
            "params": [p.describe() for p in self.params],
            "needs": [f.name for f in self.needs],
            "online": self.online,
            "plugin": PLUGIN_OF.get(self.name),
        }


REGISTRY: dict[str, AlgorithmSpec] = {}
# Algorithm name -> the plugin that registered it (scheduling/plugins.py); built-in entries are absent.
PLUGIN_OF: dict[str, str] = {}
# The plugin being loaded (scheduling/plugins.py sets it): what register() is given meanwhile is its.
LOADING: list[str] = []

NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
PLUGIN_HINT = (
    "algorithms of other packages are loaded from the modules named in MLSCHED_PLUGINS "
    "(comma-separated) and from the entry-point group mlsched.algorithms (docs/plugins.md)"
)


def register(spec: AlgorithmSpec) -> AlgorithmSpec:
    """Add ``spec``; a name may be registered once. Registering the very same entry again does
    nothing (a plugin module that registers its entries and an entry point naming them too)."""
    if not isinstance(spec, AlgorithmSpec):
        raise TypeError(f"register() takes an AlgorithmSpec, not {type(spec).__name__}")
    name = spec.name
    if not isinstance(name, str) or not name or name[0] in "._-" or not NAME_CHARACTERS.issuperset(name):
        # the CLI splits --algorithms at commas and the "Also run" lines at spaces
        raise ValueError(
            f"algorithm name {name!r}: letters, digits, '.', '_' and '-' only, starting with a letter or digit"
        )
    taken = REGISTRY.get(name)
    if taken is spec:
        return spec
    if taken is not None:
        owner = PLUGIN_OF.get(name)
        raise ValueError(f"algorithm {name!r} is already registered ({f'by plugin {owner}' if owner else 'built-in'})")
    REGISTRY[name] = spec
    if LOADING:
        PLUGIN_OF[name] = LOADING[-1]
    return spec


def get(name: str) -> AlgorithmSpec:
    if name not in REGISTRY:
        _load(until=name)
    if name not in REGISTRY:
        from scheduling import plugins  # only for a name that is not built-in

        plugins.load()
    if name not in REGISTRY:
        failed = plugins.problems()
        note = f"; {len(failed)} plugin(s) failed to load, see the warnings" if failed else ""
        known = ", ".join(sorted(REGISTRY))
        raise InputError(f"unknown algorithm {name!r} (known: {known}; {PLUGIN_HINT}{note})", field="algorithm")
    return REGISTRY[name]


def learns_from_history(name: str) -> bool:
    """Whether algorithm ``name`` learns from a history (``AlgorithmSpec.history``); False for a name
    that is not registered (a stored run of an algorithm since removed)."""
    try:
        return get(name).history
    except InputError:
        return False


def all_specs(plugins: bool = True) -> dict[str, AlgorithmSpec]:
    """Every entry, in the order of the modules that declare them (scheduling.algorithms.MODULES),
    each module's in the order it registers them: the same whichever module was imported first
    (a test or a factory may import a paper module before the registry loads the others). The
    plugins' entries come last, in the order they were loaded; ``plugins=False`` leaves them out
    (and loads none): what the repository itself declares (docs/algorithms.md, the golden cases)."""
    _load()
    if plugins:
        from scheduling import plugins as loader

        loader.load()
    from scheduling.algorithms import MODULES

    rank = {module: i for i, module in enumerate(MODULES)}
    ordered = sorted(enumerate(REGISTRY.values()), key=lambda e: (rank.get(_home(e[1]), len(MODULES)), e[0]))
    return {spec.name: spec for _, spec in ordered if plugins or spec.name not in PLUGIN_OF}


def _home(spec: AlgorithmSpec) -> str:
    """The algorithm module (an entry of scheduling.algorithms.MODULES) of the entry's factory,
    or "" for a factory defined elsewhere (tests register such entries; they come last)."""
    factory = spec.factory
    module = factory.partition(":")[0] if isinstance(factory, str) else getattr(factory, "__module__", "")
    prefix = "scheduling.algorithms."
    return module[len(prefix) :].partition(".")[0] if module.startswith(prefix) else ""


def _load(until: str | None = None) -> None:
    """Import the algorithm modules in their declared order (scheduling.algorithms.MODULES); they
    register themselves. With ``until``, stop once that name is registered: what is loaded is then
    a prefix of the full load. (The listing's order comes from MODULES, see all_specs.)"""
    from scheduling.algorithms import MODULES

    for module in MODULES:
        importlib.import_module(f"scheduling.algorithms.{module}")
        if until is not None and until in REGISTRY:
            return
