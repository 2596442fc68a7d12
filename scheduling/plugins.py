"""Algorithms of other packages: the entry-point group ``mlsched.algorithms`` and ``MLSCHED_PLUGINS``.

A plugin is named by an import path, ``module`` or ``module:attribute`` (docs/plugins.md):

* an installed package declares it as an entry point of the group ``mlsched.algorithms``, e.g. in
  its pyproject.toml ``[project.entry-points."mlsched.algorithms"] largest-first = "mypkg.largest"``;
* for a quick local try, ``MLSCHED_PLUGINS`` names plugins, comma-separated
  (``MLSCHED_PLUGINS=largest,lab.policies:ALL``), imported from ``sys.path``.

A ``module`` registers its entries when imported (``scheduling.registry.register``, as the built-in
algorithm modules do); a ``module:attribute`` names an ``AlgorithmSpec`` or a list or tuple of them,
which are registered here. A plugin loads whole or not at all: one that fails to import, names
something else, or registers a name already taken is left out (whatever it registered is removed),
reported (``problems()``, and a warning on the ``scheduling.plugins`` logger, which the command line
prints on stderr), and the other plugins load all the same.

The registry loads the plugins once per process, after every built-in algorithm, and only when a
name is not built-in or every entry is listed (scheduling/registry.py): a run of a built-in
algorithm looks for none. And importlib.metadata (25-100 ms to import and scan) is imported only
when an ``entry_points.txt`` on ``sys.path`` names the group (``_declared_somewhere``).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Callable, Iterator
from functools import partial
from types import ModuleType

from scheduling import registry
from scheduling.registry import AlgorithmSpec

GROUP = "mlsched.algorithms"
ENV = "MLSCHED_PLUGINS"

_lock = threading.RLock()
_loaded: list[bool] = []  # [True] once load() ran in this process
_problems: list[str] = []
_modules: set[str] = set()  # the modules the loaded plugins are named by (forgotten by reset)


def load() -> None:
    """Load every plugin, once: those of ``MLSCHED_PLUGINS`` first, then the entry points."""
    with _lock:  # two threads of a web process asking at once: one loads, the other waits
        if _loaded:
            return
        _loaded.append(True)
        for label, value, target in _plugins():
            _load_one(label, value, target)


def problems() -> tuple[str, ...]:
    """One message per plugin that was not loaded, naming it and saying why."""
    return tuple(_problems)


def reset() -> None:
    """Forget the plugins: remove their entries and problems, so that the next load() looks again
    (for tests, and a process whose ``MLSCHED_PLUGINS`` or installed packages changed)."""
    with _lock:
        for name in list(registry.PLUGIN_OF):
            registry.REGISTRY.pop(name, None)
            del registry.PLUGIN_OF[name]
        for module in _modules:  # a module registers its entries when imported: import it afresh
            sys.modules.pop(module, None)
        _modules.clear()
        _problems.clear()
        _loaded.clear()


def _declared_somewhere() -> bool:
    """Whether a distribution on sys.path may declare an entry point of the group: a look at the
    entry_points.txt files of the path's folders (a millisecond or two), so that importlib.metadata,
    which takes 25-100 ms to import and scan, reads them only when one names the group. A zip file
    on the path (it may hold distributions) counts as a yes: importlib.metadata looks inside."""
    for entry in sys.path:
        folder = entry or "."
        try:
            names = os.listdir(folder)
        except NotADirectoryError:
            return True
        except OSError:  # not there (python311.zip usually is not), not readable
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")) or name == "EGG-INFO":
                try:
                    with open(os.path.join(folder, name, "entry_points.txt"), encoding="utf-8") as f:
                        if GROUP in f.read():
                            return True
                except OSError:  # no entry points, or an .egg-info file rather than a folder
                    continue
    return False


def _plugins() -> Iterator[tuple[str, str, Callable[[], object]]]:
    """(label, import path, loader) of every plugin, in load order."""
    for item in os.environ.get(ENV, "").split(","):
        value = item.strip()
        if value:
            yield f"{value} from {ENV}", value, partial(_import, value)
    if not _declared_somewhere():
        return
    from importlib.metadata import entry_points

    for ep in entry_points(group=GROUP):
        dist = getattr(ep, "dist", None)
        source = f"{dist.name} {dist.version}" if dist is not None else "an installed package"
        yield f"{ep.value} from the entry point {ep.name!r} of {source}", ep.value, ep.load


def _import(value: str) -> object:
    """What an import path names, "module" or "module:attribute[.attribute]" (as an entry point's
    load() reads it)."""
    module, _, attributes = value.partition(":")
    found: object = importlib.import_module(module.strip())
    for attribute in filter(None, attributes.strip().split(".")):
        found = getattr(found, attribute)
    return found


def _load_one(label: str, value: str, target: Callable[[], object]) -> None:
    before = set(registry.REGISTRY)
    module = value.partition(":")[0].strip()
    imported = module in sys.modules  # then its entries, if any, were registered before
    registry.LOADING.append(label)
    try:
        loaded = target()
        if isinstance(loaded, AlgorithmSpec):
            registry.register(loaded)
        elif isinstance(loaded, (list, tuple)) and all(isinstance(s, AlgorithmSpec) for s in loaded):
            for spec in loaded:
                registry.register(spec)
        elif not isinstance(loaded, ModuleType):
            raise TypeError(f"it names a {type(loaded).__name__}: name a module, an AlgorithmSpec or a list of them")
        if set(registry.REGISTRY) == before and not imported:
            raise ValueError("it registers no algorithm (a module calls scheduling.registry.register)")
    except Exception as exc:  # a plugin's own error, whatever it is, leaves the others loaded
        for name in set(registry.REGISTRY) - before:
            del registry.REGISTRY[name]
            registry.PLUGIN_OF.pop(name, None)
        _report(f"plugin {label} is not loaded: {type(exc).__name__}: {exc}")
    else:
        _modules.add(module)
    finally:
        registry.LOADING.pop()


def _report(message: str) -> None:
    import logging  # only when a plugin fails: a run of a built-in algorithm does not import it

    _problems.append(message)
    logging.getLogger("scheduling.plugins").warning("warning: %s", message)
